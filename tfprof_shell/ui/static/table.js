// The expandable tree-table: only the rows in sight exist in the DOM, so a
// view of 150k rows scrolls as smoothly as one of 15.

import {el, fill, highlighted} from "./dom.js";
import {forUnit, middle, percent, ratio, signed} from "./format.js";

const ROW = 22;
const OVERSCAN = 12;
/** Search expands the ancestors of at most this many matches. */
const EXPAND_MATCHES = 5000;

/** The columns for a tree's kind: [{id, label, title, value(i), text(i), cls(i)}]. */
export function columnsFor(tree) {
  const cols = [];
  const a0 = tree.attrs[0];
  // An attribute that is zero everywhere (at the root, in both profiles) gets no column.
  const shown = tree.attrs.filter((x) => x === a0 || tree.total(x, 0) !== 0 || tree.base(x, 0) !== 0);
  const unitOf = (a) => forUnit(tree.answer.units[a]);
  if (tree.kind === "single") {
    const opView = tree.answer.view === "op";
    for (const a of shown) {
      const fmt = unitOf(a);
      cols.push({id: "total:" + a, label: a, title: `total ${a} of the row and all below it`,
        value: (i) => tree.total(a, i), text: (i) => fmt(tree.total(a, i))});
      if (!opView && a === a0) {
        cols.push({id: "self:" + a, label: "self", title: `the row's own ${a}`,
          value: (i) => tree.self(a, i), text: (i) => fmt(tree.self(a, i))});
      }
    }
    if (a0) {
      cols.push({id: "share", label: "%", title: `share of the root's total ${a0}`,
        value: (i) => tree.total(a0, i), text: (i) => i ? percent(tree.total(a0, i), tree.total(a0, 0)) : ""});
    }
  } else if (tree.kind === "diff") {
    cols.push({id: "status", label: "", title: "+ new (not in the base), - gone",
      value: (i) => tree.status(i), text: (i) => badge(tree.status(i)),
      cls: (i) => "badge " + statusClass(tree.status(i))});
    for (const a of shown) {
      const fmt = unitOf(a);
      cols.push({id: "new:" + a, label: a, title: `${a} in ${tree.answer.sides[0].name}`,
        value: (i) => tree.total(a, i), text: (i) => fmt(tree.total(a, i))});
      cols.push({id: "base:" + a, label: "base", title: `${a} in ${tree.answer.sides[1].name}`,
        value: (i) => tree.base(a, i), text: (i) => fmt(tree.base(a, i))});
      cols.push({id: "delta:" + a, label: "delta", title: `${a}: new - base`,
        value: (i) => tree.delta(a, i), text: (i) => signed(tree.delta(a, i), fmt),
        cls: (i) => tree.delta(a, i) > 0 ? "slower" : tree.delta(a, i) < 0 ? "faster" : ""});
      cols.push({id: "ratio:" + a, label: "ratio", title: "new / base",
        value: (i) => tree.base(a, i) ? tree.total(a, i) / tree.base(a, i) : Infinity,
        text: (i) => ratio(tree.total(a, i), tree.base(a, i))});
    }
  } else {
    const sides = tree.answer.sides;
    cols.push({id: "present", label: "in", title: "how many profiles have the row",
      value: (i) => tree.answer.present[i], text: (i) => `${tree.answer.present[i]}/${sides.length}`});
    for (const a of shown) {
      const fmt = unitOf(a);
      cols.push({id: "agg:" + a, label: `${tree.answer.aggregate} ${a}`, title: `${a} combined`,
        value: (i) => tree.total(a, i), text: (i) => fmt(tree.total(a, i))});
    }
    if (a0 && tree.answer.by_profile) {
      const fmt = unitOf(a0);
      sides.forEach((side, k) => cols.push({id: "p:" + k, label: side.name,
        title: `${a0} in profile ${side.name}`,
        value: (i) => tree.byProfile(a0, i)[k] ?? -Infinity,
        text: (i) => {
          const v = tree.byProfile(a0, i)[k];
          return v === null || v === undefined ? "--" : fmt(v);
        },
        cls: (i) => slowest(tree, a0, i) === k ? "slowest" : ""}));
      cols.push({id: "slowest", label: "slowest", title: `the profile with the largest ${a0}`,
        value: (i) => slowest(tree, a0, i), text: (i) => {
          const k = slowest(tree, a0, i);
          return k >= 0 ? sides[k].name : "";
        }});
    }
  }
  return cols;
}

/** The profile with the largest value of a row; -1 when two or more share it (a tie
 * names no one slowest) or fewer than two profiles have the row. */
export function slowest(tree, attr, i) {
  let best = -1, value = -Infinity, tied = false, present = 0;
  tree.byProfile(attr, i).forEach((v, k) => {
    if (v === null || v === undefined) return;
    present++;
    if (v > value) { value = v; best = k; tied = false; }
    else if (v === value) tied = true;
  });
  return tied || present < 2 ? -1 : best;
}

function badge(status) {
  return status === "+" ? "new" : status === "-" ? "gone" : "";
}

function statusClass(status) {
  return status === "+" ? "new" : status === "-" ? "gone" : "";
}

/** Rows of a diff kept by a threshold: |delta| at least it, or an ancestor of one. */
export function keptRows(tree, threshold) {
  const a0 = tree.attrs[0];
  const keep = new Uint8Array(tree.n);
  keep[0] = 1;
  for (let i = tree.n - 1; i > 0; i--) {
    if (Math.abs(tree.delta(a0, i)) >= threshold) keep[i] = 1;
    if (keep[i]) keep[tree.parent[i]] = 1;
  }
  return keep;
}

export class TreeTable {
  /** options: onSelect(row), onMenu(row, x, y). */
  constructor(container, options = {}) {
    this.options = options;
    this.head = el("div", {class: "tt-head", role: "row"});
    this.spacer = el("div", {class: "tt-spacer"});
    this.body = el("div", {class: "tt-body", tabindex: "0"}, this.spacer);
    this.root = el("div", {class: "tt"}, this.head, this.body);
    fill(container, this.root);
    this.pool = [];
    this.tree = null;
    this.body.addEventListener("scroll", () => {
      this.head.scrollLeft = this.body.scrollLeft;
      this.schedule();
    });
    this.body.addEventListener("keydown", (e) => this.key(e));
    new ResizeObserver(() => this.schedule()).observe(this.body);
  }

  /** Show a new answer; rows down to `openDepth` start expanded. */
  setTree(tree, openDepth = 1) {
    this.tree = tree;
    this.cols = columnsFor(tree);
    this.order = tree.children.map((c) => c.slice());
    this.open = new Uint8Array(tree.n);
    for (let i = 0; i < tree.n; i++) if (tree.depth[i] < openDepth) this.open[i] = 1;
    this.sortId = null;
    this.query = "";
    this.matchSet = new Set();
    this.selected = -1;
    this.threshold = 0;
    this.template = "minmax(12em, 1fr) " + this.cols.map(() => "5.6em").join(" ");
    this.head.style.gridTemplateColumns = this.template;
    fill(this.head, this.headerCell("name", "name", "node name (click to order by name)"),
      this.cols.map((c) => this.headerCell(c.id, c.label, c.title)));
    this.pool.forEach((r) => r.remove());
    this.pool = [];
    this.refresh();
    this.body.scrollTop = 0;
  }

  headerCell(id, label, title) {
    const cell = el("div", {class: "tt-h", title, role: "columnheader", "data-col": id,
      onclick: () => this.sortBy(id)}, label);
    if (this.sortId === id) cell.append(this.sortDir > 0 ? " \u25b2" : " \u25bc");
    return cell;
  }

  /** Order by a column (again: the other way round); the order goes to onSort as
   * "column:direction" (the URL keeps it). */
  sortBy(id) {
    if (!this.tree) return;
    this.applySort(id, this.sortId === id ? -this.sortDir : (id === "name" ? 1 : -1));
    if (this.options.onSort) this.options.onSort(`${this.sortId}:${this.sortDir}`);
  }

  /** Restore an order given as "column:direction" (ignored if the column is not shown). */
  setSort(text) {
    const cut = text.lastIndexOf(":");
    const id = text.slice(0, cut), dir = Number(text.slice(cut + 1)) < 0 ? -1 : 1;
    if (id === "name" || (this.cols || []).some((c) => c.id === id)) this.applySort(id, dir);
  }

  applySort(id, dir) {
    const tree = this.tree;
    this.sortDir = dir;
    this.sortId = id;
    const col = this.cols.find((c) => c.id === id);
    const key = id === "name" ? (i) => tree.name(i) : col.value;
    const cmp = (x, y) => {
      const a = key(x), b = key(y);
      return a < b ? -dir : a > b ? dir : 0;
    };
    this.order = tree.children.map((c) => c.length > 1 ? c.slice().sort(cmp) : c);
    fill(this.head, this.headerCell("name", "name", "node name"),
      this.cols.map((c) => this.headerCell(c.id, c.label, c.title)));
    this.refresh();
  }

  /** Hide rows whose |delta| of the first attribute is below `value` (diffs), new and
   * gone rows included; a row with a shown descendant stays. */
  setThreshold(value) {
    this.threshold = value || 0;
    this.refresh();
  }

  hidden(i) {
    if (!this.threshold || this.tree.kind !== "diff" || i === 0) return false;
    if (!this.kept || this.kept.threshold !== this.threshold || this.kept.tree !== this.tree) {
      this.kept = {threshold: this.threshold, tree: this.tree, rows: keptRows(this.tree, this.threshold)};
    }
    return !this.kept.rows[i];
  }

  /** Highlight names holding `query`, open their ancestors, select the first. */
  search(query) {
    this.query = query;
    const matches = this.tree ? this.tree.matches(query) : [];
    this.matchSet = new Set(matches);
    for (const i of matches.slice(0, EXPAND_MATCHES)) this.reveal(i);
    this.refresh();
    if (matches.length) this.select(matches[0], true);
    return matches.length;
  }

  /** Select the next (step 1) or previous (-1) match in display order. */
  nextMatch(step) {
    const shown = this.visible.filter((i) => this.matchSet.has(i));
    if (!shown.length) return;
    const at = this.visible.indexOf(this.selected);
    const next = step > 0 ? shown.find((i) => this.visible.indexOf(i) > at) ?? shown[0]
      : [...shown].reverse().find((i) => this.visible.indexOf(i) < at) ?? shown[shown.length - 1];
    this.select(next, true);
  }

  reveal(i) {
    for (let p = this.tree.parent[i]; p >= 0; p = this.tree.parent[p]) this.open[p] = 1;
  }

  toggle(i) {
    this.open[i] = this.open[i] ? 0 : 1;
    this.refresh();
  }

  /** Open every row. */
  expandAll() {
    this.open.fill(1);
    this.refresh();
  }

  select(i, scroll) {
    this.selected = i;
    if (scroll) {
      this.reveal(i);
      this.refresh();
      const at = this.visible.indexOf(i);
      const top = at * ROW, bottom = top + ROW;
      if (top < this.body.scrollTop || bottom > this.body.scrollTop + this.body.clientHeight) {
        this.body.scrollTop = Math.max(0, top - this.body.clientHeight / 3);
      }
    }
    this.schedule();
    if (this.options.onSelect) this.options.onSelect(i);
  }

  key(e) {
    if (!this.tree || this.selected < 0) return;
    const at = this.visible.indexOf(this.selected);
    if (e.key === "ArrowDown" && at + 1 < this.visible.length) this.select(this.visible[at + 1], true);
    else if (e.key === "ArrowUp" && at > 0) this.select(this.visible[at - 1], true);
    else if (e.key === "ArrowRight" && !this.open[this.selected]) this.toggle(this.selected);
    else if (e.key === "ArrowLeft" && this.open[this.selected]) this.toggle(this.selected);
    else return;
    e.preventDefault();
  }

  /** Recompute the visible rows (open rows' children, in the current order). */
  refresh() {
    const out = [];
    const stack = [0];
    while (stack.length) {
      const i = stack.pop();
      if (this.hidden(i)) continue;
      out.push(i);
      if (this.open[i]) {
        const kids = this.order[i];
        for (let k = kids.length - 1; k >= 0; k--) stack.push(kids[k]);
      }
    }
    this.visible = out;
    this.spacer.style.height = out.length * ROW + "px";
    this.schedule();
  }

  schedule() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => {
      this.pending = 0;
      this.paint();
    });
  }

  /** Lay out the rows in sight, reusing row elements. */
  paint() {
    if (!this.tree) return;
    const first = Math.max(0, Math.floor(this.body.scrollTop / ROW) - OVERSCAN);
    const last = Math.min(this.visible.length,
      Math.ceil((this.body.scrollTop + this.body.clientHeight) / ROW) + OVERSCAN);
    while (this.pool.length < last - first) {
      const row = el("div", {class: "tt-row", role: "row"});
      row.style.gridTemplateColumns = this.template;
      row.addEventListener("click", (e) => this.rowClick(e, row));
      row.addEventListener("contextmenu", (e) => this.rowMenu(e, row));
      this.spacer.append(row);
      this.pool.push(row);
    }
    this.pool.forEach((row, k) => {
      const at = first + k;
      if (at >= last) {
        row.hidden = true;
        return;
      }
      row.hidden = false;
      this.paintRow(row, this.visible[at], at);
    });
  }

  paintRow(row, i, at) {
    const tree = this.tree;
    row.style.top = at * ROW + "px";
    row.dataset.row = String(i);
    row.classList.toggle("selected", i === this.selected);
    row.classList.toggle("match", this.matchSet.has(i));
    const kids = tree.children[i].length;
    const toggle = el("span", {class: "tt-toggle"}, kids ? (this.open[i] ? "\u25be" : "\u25b8") : "");
    const full = tree.shown(i);
    const room = Math.max(12, Math.floor((this.nameWidth() - 44 - 14 * tree.depth[i]) / 7.8));
    const shown = this.query ? full : middle(full, room);
    const name = el("span", {class: "tt-name", title: full}, highlighted(shown, this.query));
    const menu = el("span", {class: "tt-menu", title: "focus, hide, trim, account…"}, "\u22ef");
    const first = el("div", {class: "tt-c tt-first"}, toggle, name, menu);
    first.style.paddingLeft = 4 + 14 * tree.depth[i] + "px";
    const cells = this.cols.map((c) => el("div", {class: "tt-c num " + (c.cls ? c.cls(i) : "")},
      c.text(i)));
    fill(row, first, cells);
  }

  /** The name column's width in pixels (measured once per paint). */
  nameWidth() {
    if (!this.measured) {
      const first = this.head.firstChild;
      this.measured = first ? first.getBoundingClientRect().width : 300;
      requestAnimationFrame(() => { this.measured = 0; });
    }
    return this.measured || 300;
  }

  rowClick(e, row) {
    const i = Number(row.dataset.row);
    if (e.target.classList.contains("tt-toggle")) this.toggle(i);
    else if (e.target.classList.contains("tt-menu")) this.rowMenu(e, row);
    else this.select(i, false);
  }

  rowMenu(e, row) {
    e.preventDefault();
    const i = Number(row.dataset.row);
    this.select(i, false);
    if (this.options.onMenu) this.options.onMenu(i, e.clientX, e.clientY);
  }

  /** Text of the rows in sight (for tests and copying): name and cells per row. */
  shownRows() {
    return this.visible.map((i) => [this.tree.name(i), ...this.cols.map((c) => c.text(i))]);
  }
}
