// Flame (and icicle) graphs of a scope or code view on a canvas: each row is
// as wide as its total; click to zoom, search to highlight, diffs coloured.

import {el, fill} from "./dom.js";
import {forUnit, percent, signed} from "./format.js";

const H = 18;

function hash(text) {
  let h = 0;
  for (let k = 0; k < text.length; k++) h = (h * 31 + text.charCodeAt(k)) | 0;
  return Math.abs(h);
}

export class FlameGraph {
  /** options: onSelect(row) when a frame is clicked. */
  constructor(container, options = {}) {
    this.options = options;
    this.canvas = el("canvas", {class: "flame-canvas"});
    this.tip = el("div", {class: "flame-tip", hidden: true});
    this.wrap = el("div", {class: "flame-wrap"}, this.canvas, this.tip);
    fill(container, this.wrap);
    this.inverted = false;
    this.query = "";
    this.canvas.addEventListener("click", (e) => this.click(e));
    this.canvas.addEventListener("mousemove", (e) => this.hover(e));
    this.canvas.addEventListener("mouseleave", () => { this.tip.hidden = true; });
    new ResizeObserver(() => this.draw()).observe(this.wrap);
  }

  setTree(tree, attr) {
    this.tree = tree;
    this.attr = attr || tree.attrs[0];
    this.fmt = forUnit(tree.answer.units[this.attr]);
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

  value(i) {
    return Math.max(0, this.tree.total(this.attr, i));
  }

  /** Frames: [row, x0, x1, level] of everything at least half a pixel wide. */
  layout(width) {
    const tree = this.tree;
    const frames = [];
    const top = this.focus;
    const total = this.value(top) || 1;
    let ancestors = [];
    for (let p = tree.parent[top]; p >= 0; p = tree.parent[p]) ancestors.unshift(p);
    ancestors.forEach((p, level) => frames.push([p, 0, width, level]));
    const stack = [[top, 0, width, ancestors.length]];
    while (stack.length) {
      const [i, x0, x1, level] = stack.pop();
      frames.push([i, x0, x1, level]);
      let x = x0;
      for (const c of tree.children[i]) {
        const w = (x1 - x0) * this.value(c) / (this.value(i) || total);
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
      if (status === "+") return "#c0392b";
      if (status === "-") return "#27ae60";
      const base = tree.base(this.attr, i), now = tree.total(this.attr, i);
      const change = base ? (now - base) / base : 0;
      const k = Math.min(1, Math.abs(change) * 2);
      return change > 0 ? `rgb(255,${Math.round(230 - 150 * k)},${Math.round(230 - 150 * k)})`
        : `rgb(${Math.round(230 - 150 * k)},255,${Math.round(230 - 150 * k)})`;
    }
    const h = hash(tree.name(i));
    return `hsl(${20 + h % 35},${70 + h % 20}%,${58 + h % 12}%)`;
  }

  draw() {
    if (!this.tree) return;
    const width = Math.max(100, this.wrap.clientWidth);
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
      if (x1 - x0 > 30) {
        g.fillStyle = "#111";
        g.save();
        g.beginPath();
        g.rect(x0, y, x1 - x0 - 2, H);
        g.clip();
        g.fillText(this.tree.name(i), x0 + 3, y + H / 2);
        g.restore();
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
    let text = `${tree.name(i)}\n${this.attr}: ${this.fmt(v)} (${percent(v, tree.total(this.attr, 0))})`;
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
