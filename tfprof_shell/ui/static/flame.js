// Flame (and icicle) graphs of a scope or code view on a canvas: each frame is as wide
// as its value; click to zoom (and see its sandwich), search to highlight. Children go
// largest first (left-heavy) or, given their start times, in the order they ran. In a
// diff a frame is as wide as the larger of its new and base values, so a removed
// subtree keeps the width of what it cost, and its colour says the change.

import {el} from "./dom.js";
import {forUnit, middle, percent, signed} from "./format.js";

const H = 18;
const COLOURS = {new: "#c0392b", gone: "#1e8449", slower: "rgb(255,120,120)", faster: "rgb(120,220,120)", same: "#e6e6e6"};

function hash(text) {
  let h = 0;
  for (let k = 0; k < text.length; k++) h = (h * 31 + text.charCodeAt(k)) | 0;
  return Math.abs(h);
}

/** The name a frame shows: the last part of a scope path (the leaf), whole otherwise. */
export function leafName(name) {
  const cut = name.replace(/\/+$/, "").lastIndexOf("/");
  return cut >= 0 && !/\.py:\d+/.test(name) ? name.slice(cut + 1) : name;
}

/** A tree built here (sandwiches): the parts of ViewTree the flame graph reads. */
class SmallTree {
  constructor(name) {
    this.kind = "single";
    this.names = [name];
    this.parent = [-1];
    this.children = [[]];
    this.values = [0];
    this.attrs = ["v"];
    this.answer = {units: {v: "microseconds"}};
  }

  get n() { return this.names.length; }

  add(parent, name, value) {
    let child = this.children[parent].find((c) => this.names[c] === name);
    if (child === undefined) {
      child = this.names.length;
      this.names.push(name);
      this.parent.push(parent);
      this.children.push([]);
      this.values.push(0);
      this.children[parent].push(child);
    }
    this.values[child] += value;
    return child;
  }

  name(i) { return this.names[i]; }
  total(_, i) { return this.values[i]; }
  base() { return 0; }
  delta(_, i) { return this.values[i]; }
  status() { return ""; }

  matches(query) {
    const q = query.toLowerCase();
    return q ? this.names.map((n, i) => [n, i]).filter(([n]) => n.toLowerCase().includes(q)).map(([, i]) => i) : [];
  }
}

/** Callers (paths from the root to each place `name` runs, merged, the frame as the
 * root) and callees (the subtrees under it, merged) of a frame name. */
export function sandwichTrees(tree, attr, name) {
  const callers = new SmallTree(name), callees = new SmallTree(name);
  let count = 0;
  const inside = (i) => {
    for (let p = tree.parent[i]; p >= 0; p = tree.parent[p]) if (tree.name(p) === name) return true;
    return false;
  };
  for (let i = 0; i < tree.n; i++) {
    if (tree.name(i) !== name) continue;
    count++;
    if (inside(i)) continue;  // counted with the occurrence above it
    const value = Math.max(0, tree.total(attr, i));
    callers.values[0] += value;
    callees.values[0] += value;
    let at = 0;
    for (let p = tree.parent[i]; p >= 0; p = tree.parent[p]) at = callers.add(at, tree.name(p), value);
    const stack = [[i, 0]];
    while (stack.length) {
      const [node, into] = stack.pop();
      for (const c of tree.children[node]) stack.push([c, callees.add(into, tree.name(c), Math.max(0, tree.total(attr, c)))]);
    }
  }
  return {callers, callees, count};
}

export class FlameGraph {
  /** options: onSelect(row) when a frame is clicked. */
  constructor(container, options = {}) {
    this.options = options;
    this.canvas = el("canvas", {class: "flame-canvas"});
    this.tip = el("div", {class: "flame-tip", hidden: true});
    this.wrap = el("div", {class: "flame-wrap"}, this.canvas, this.tip);
    container.replaceChildren(this.wrap);
    this.inverted = false;
    this.query = "";
    this.canvas.addEventListener("click", (e) => this.click(e));
    this.canvas.addEventListener("mousemove", (e) => this.hover(e));
    this.canvas.addEventListener("mouseleave", () => { this.tip.hidden = true; });
    new ResizeObserver(() => this.draw()).observe(this.wrap);
  }

  /** Show a tree measured by `attr`; `starts` (each row's first start) orders children
   * by time instead of by size. */
  setTree(tree, attr, starts = null) {
    this.tree = tree;
    this.attr = attr || tree.attrs[0];
    this.fmt = forUnit(tree.answer.units[this.attr]);
    this.starts = starts;
    this.focus = 0;
    this.draw();
  }

  setInverted(value) {
    this.inverted = value;
    this.draw();
  }

  search(query) {
    this.query = query.toLowerCase();
    this.draw();
    return this.tree ? this.tree.matches(query).length : 0;
  }

  zoom(row) {
    this.focus = row;
    this.draw();
  }

  /** A frame's width value: its total; in a diff the larger of new and base. */
  value(i) {
    const now = Math.max(0, this.tree.total(this.attr, i));
    return this.tree.kind === "diff" ? Math.max(now, Math.max(0, this.tree.base(this.attr, i))) : now;
  }

  /** Children in drawing order: by first start when known, else largest first. */
  ordered(i) {
    const kids = this.tree.children[i];
    if (this.starts) {
      const s = this.starts;
      const key = (c) => (s[c] < 0 ? Infinity : s[c]);
      return kids.slice().sort((a, b) => key(a) - key(b));
    }
    return kids.slice().sort((a, b) => this.value(b) - this.value(a));
  }

  /** Frames: [row, x0, x1, level] of everything at least half a pixel wide. */
  layout(width) {
    const tree = this.tree;
    const frames = [];
    const top = this.focus;
    let ancestors = [];
    for (let p = tree.parent[top]; p >= 0; p = tree.parent[p]) ancestors.unshift(p);
    ancestors.forEach((p, level) => frames.push([p, 0, width, level]));
    const stack = [[top, 0, width, ancestors.length]];
    while (stack.length) {
      const [i, x0, x1, level] = stack.pop();
      frames.push([i, x0, x1, level]);
      const kids = this.ordered(i);
      const sum = kids.reduce((s, c) => s + this.value(c), 0);
      const whole = Math.max(this.value(i), sum) || 1;  // children never overflow their parent
      let x = x0;
      for (const c of kids) {
        const w = (x1 - x0) * this.value(c) / whole;
        if (w >= 0.5) stack.push([c, x, x + w, level + 1]);
        x += w;
      }
    }
    return frames;
  }

  color(i) {
    const tree = this.tree;
    if (this.query && !tree.name(i).toLowerCase().includes(this.query)) return "#d8d8d8";
    if (tree.kind === "diff") {
      const status = tree.status(i);
      if (status === "+") return COLOURS.new;
      if (status === "-") return COLOURS.gone;
      const base = tree.base(this.attr, i), now = tree.total(this.attr, i);
      const change = base ? (now - base) / base : 0;
      const k = Math.min(1, Math.abs(change) * 2);
      if (!change) return COLOURS.same;
      return change > 0 ? `rgb(255,${Math.round(230 - 150 * k)},${Math.round(230 - 150 * k)})`
        : `rgb(${Math.round(230 - 150 * k)},255,${Math.round(230 - 150 * k)})`;
    }
    const h = hash(tree.name(i));
    return `hsl(${20 + h % 35},${70 + h % 20}%,${58 + h % 12}%)`;
  }

  /** What the colours and widths mean, as a line of swatches. */
  legend() {
    const swatch = (colour, text) => el("span", {class: "swatch-item"},
      el("span", {class: "swatch sw-" + colour}), text);
    const width = this.starts ? "children in the order they first ran" : "children largest first";
    if (!this.tree || this.tree.kind !== "diff") {
      return el("div", {class: "legend"}, `width: ${this.attr} (total); ${width}; colour: by name`);
    }
    return el("div", {class: "legend"}, `width: the larger of new and base ${this.attr}; colour: `,
      swatch("slower", "slower"), swatch("faster", "faster"), swatch("same", "unchanged"),
      swatch("new", "new (not in the base)"), swatch("gone", "gone (only in the base)"),
      " \u2014 the deeper the colour, the larger the change");
  }

  draw() {
    if (!this.tree) return;
    const width = Math.max(100, this.wrap.clientWidth || 800);
    this.frames = this.layout(width);
    const levels = this.frames.reduce((m, f) => Math.max(m, f[3]), 0) + 1;
    const height = levels * H;
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = width * ratio;
    this.canvas.height = height * ratio;
    this.canvas.style.width = width + "px";
    this.canvas.style.height = height + "px";
    this.levels = levels;
    const g = this.canvas.getContext("2d");
    g.scale(ratio, ratio);
    g.font = "12px sans-serif";
    g.textBaseline = "middle";
    for (const [i, x0, x1, level] of this.frames) {
      const y = this.y(level);
      g.fillStyle = this.color(i);
      g.fillRect(x0, y, Math.max(0.5, x1 - x0 - 1), H - 1);
      if (x1 - x0 > 24) {
        g.fillStyle = this.tree.status(i) ? "#fff" : "#111";
        const name = this.tree.shown ? this.tree.shown(i) : this.tree.name(i);
        g.fillText(middle(leafName(name), Math.floor((x1 - x0 - 6) / 6.5)), x0 + 3, y + H / 2);
      }
    }
  }

  y(level) {
    return this.inverted ? (this.levels - 1 - level) * H : level * H;
  }

  at(e) {
    const rect = this.canvas.getBoundingClientRect();
    const x = e.clientX - rect.left, y = e.clientY - rect.top;
    for (const f of this.frames || []) {
      const fy = this.y(f[3]);
      if (x >= f[1] && x < f[2] && y >= fy && y < fy + H) return f[0];
    }
    return -1;
  }

  click(e) {
    const i = this.at(e);
    if (i < 0) return;
    this.zoom(i);
    if (this.options.onSelect) this.options.onSelect(i);
  }

  hover(e) {
    const i = this.at(e);
    if (i < 0) {
      this.tip.hidden = true;
      return;
    }
    const tree = this.tree;
    const v = tree.total(this.attr, i);
    let text = `${tree.shown ? tree.shown(i) : tree.name(i)}\n${this.attr}: ${this.fmt(v)} (${percent(v, tree.total(this.attr, 0))})`;
    if (tree.kind === "diff") {
      text += `\nbase: ${this.fmt(tree.base(this.attr, i))}, delta ${signed(tree.delta(this.attr, i), this.fmt)}`;
    }
    this.tip.textContent = text;
    this.tip.hidden = false;
    const rect = this.wrap.getBoundingClientRect();
    this.tip.style.left = Math.min(e.clientX - rect.left + 12, rect.width - 260) + "px";
    this.tip.style.top = e.clientY - rect.top + 14 + this.wrap.scrollTop + "px";
  }
}
