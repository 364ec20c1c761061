// The critical path on the Timeline page, for a `critpath` line: the path's slices
// highlighted on the lanes with its edges drawn between them, and beside the lanes
// the windows, what bounds each (by_bound), the what-if and -base results, and the
// path's events in order (click one: it is selected on the timeline). Everything
// comes from the `critpath -output json` document; /api/timeline/critpath adds where
// each event is among the timeline's slices.

import {el, fill, svg} from "./dom.js";
import {middle, nanos, signed} from "./format.js";

export const BOUND_COLOURS = {
  cpu_bound: "#4e79a7", gpu_compute_bound: "#59a14f", gpu_communication_bound: "#f28e2b",
  gpu_kernel_launch_overhead: "#e15759", gpu_kernel_kernel_overhead: "#edc948",
  data_loading: "#76b7b2",
};
const PATH = "#d62728";
const WHATIF = "#8e44ad";

const us = (v) => (Math.round(v * 10) / 10).toFixed(1) + "us";
const pct = (part, whole) => whole ? (100 * part / whole).toFixed(1) + "%" : "--";

function colour(bound) {
  return BOUND_COLOURS[bound] || "#999";
}

/** A bar of a path's by_bound split, with a legend line per category. */
export function boundBar(byBound, width = 300) {
  const total = Object.values(byBound).reduce((a, b) => a + b, 0);
  const bar = svg("svg", {width, height: 14, class: "bound-bar"});
  let x = 0;
  for (const [k, v] of Object.entries(byBound)) {
    const w = total ? width * v / total : 0;
    bar.append(svg("rect", {x, y: 0, width: Math.max(w, 0), height: 14, fill: colour(k),
      "data-bound": k, "data-us": v}, svg("title", {text: `${k}: ${us(v)} (${pct(v, total)})`})));
    x += w;
  }
  return bar;
}

/** Per event of a path: the time its edges give it and the bound of most of it. */
function perEvent(path) {
  const time = new Array(path.events.length).fill(0);
  const bound = new Array(path.events.length).fill("");
  const most = new Array(path.events.length).fill(-1);
  for (const e of path.edges) {
    if (e.event === null || e.event === undefined) continue;
    time[e.event] += e.weight;
    if (e.weight > most[e.event]) { most[e.event] = e.weight; bound[e.event] = e.bound_by; }
  }
  return {time, bound};
}

export class PathPanel {
  /** host: the element beside the lanes; timeline: the Timeline to draw on. */
  constructor(host, timeline) {
    this.host = host;
    this.timeline = timeline;
    this.answer = null;
    this.window = 0;
    this.whatif = false;
    this.overlay = {draw: (g, view) => this.draw(g, view)};
    timeline.overlays.push(this.overlay);
  }

  /** The answer of /api/timeline/critpath (null: no path to show). */
  set(answer) {
    this.answer = answer;
    this.window = 0;
    this.whatif = false;
    this.host.hidden = !answer;
    if (answer) this.render();
  }

  own() {
    const doc = this.answer.document;
    return doc.profiles ? doc.profiles[this.answer.current] || Object.values(doc.profiles)[0] : doc;
  }

  marks() {
    const m = this.answer.marks[this.window];
    return m ? (this.whatif && m.whatif ? m.whatif : m.events) : [];
  }

  path() {
    const p = this.own().paths[this.window];
    return this.whatif && p.whatif ? p.whatif : p;
  }

  // -- the overlay -------------------------------------------------------------------

  draw(g, view) {
    if (!this.answer) return;
    const rowH = view.rowHeight;
    const colourNow = this.whatif ? WHATIF : PATH;
    g.lineWidth = 2;
    this.answer.marks.forEach((m, w) => {
      const rows = this.whatif && m.whatif && w === this.window ? m.whatif : m.events;
      g.strokeStyle = w === this.window ? colourNow : "rgba(214,39,40,0.45)";
      for (const r of rows) {
        if (!r) continue;
        const y = view.laneY(r[1], r[2]);
        if (y === null) continue;
        const x0 = Math.max(view.left, view.x(r[3])), x1 = Math.min(view.right, view.x(r[3] + r[4]));
        if (x1 < view.left || x0 > view.right) continue;
        g.strokeRect(x0, y + 0.5, Math.max(1.5, x1 - x0), rowH - 1);
      }
    });
    // the chosen window's edges, from the end (or start) of one slice to the next
    const rows = this.marks();
    const path = this.path();
    g.lineWidth = 1;
    g.strokeStyle = colourNow;
    g.beginPath();
    for (const e of path.edges) {
      const a = rows[e.from], b = rows[e.to];
      if (!a || !b || e.from === e.to) continue;
      const ya = view.laneY(a[1], a[2]), yb = view.laneY(b[1], b[2]);
      if (ya === null || yb === null || (a[1] === b[1] && a[2] === b[2])) continue;
      const xa = view.x(e.from_at === "end" ? a[3] + a[4] : a[3]);
      const xb = view.x(e.to_at === "end" ? b[3] + b[4] : b[3]);
      if ((xa < view.left && xb < view.left) || (xa > view.right && xb > view.right)) continue;
      g.moveTo(Math.max(view.left, xa), ya + rowH / 2);
      g.lineTo(Math.max(view.left, xb), yb + rowH / 2);
    }
    g.stroke();
  }

  // -- the panel ---------------------------------------------------------------------

  render() {
    const a = this.answer, own = this.own(), doc = a.document;
    const paths = own.paths;
    const defs = Object.values(own.definitions || {}).join("; ");
    const windows = el("table", {class: "small cp-windows"},
      el("tr", {}, ["window", "step", "length", "wall", "path%", "bound by"].map((h) => el("th", {text: h}))),
      paths.map((p, k) => el("tr", {class: "cp-window" + (k === this.window ? " selected" : ""), "data-window": k,
        onclick: () => this.choose(k, true)},
      el("td", {text: p.window.name + (paths.filter((q) => q.window.name === p.window.name).length > 1 ? ` #${p.window.instance}` : "")}),
      el("td", {text: p.window.step ?? "--"}), el("td", {class: "num", text: us(p.length)}),
      el("td", {class: "num", text: us(p.wall)}), el("td", {class: "num", text: pct(p.length, p.wall)}),
      el("td", {}, boundBar(p.by_bound, 90)))));
    fill(this.host, el("h3", {text: "Critical path"}),
      el("p", {class: "note", text: `${defs}. ${a.found} of ${a.events} path events found on the timeline` +
        (a.notes.length ? "; " + a.notes.join("; ") : "")}),
      paths.length > 1 ? windows : null,
      el("div", {id: "cp-window"}),
      doc.diff ? this.diff(doc) : null);
    this.renderWindow();
  }

  /** The chosen window: its split by bound, the what-if, its events in order. */
  renderWindow() {
    const own = this.own();
    const p = own.paths[this.window];
    for (const r of this.host.querySelectorAll("tr.cp-window")) r.classList.toggle("selected", Number(r.dataset.window) === this.window);
    const shown = this.path();
    const rows = this.marks();
    const {time, bound} = perEvent(shown);
    const bounds = Object.entries(shown.by_bound).sort((x, y) => y[1] - x[1]);
    const total = shown.length;
    const whatif = p.whatif ? el("div", {class: "cp-whatif"},
      el("p", {}, el("strong", {text: "What if "}), p.whatif.rules.join(", "),
        ` (${p.whatif.edges_scaled} edges scaled): the path ${us(p.length)} \u2192 `,
        el("span", {class: "cp-new-length", text: us(p.whatif.length)}),
        ` (${signed(p.whatif.length - p.length, us)}); the window ${us(p.wall)} \u2192 `,
        el("span", {class: "cp-est-wall", text: us(p.whatif.estimated_wall)}),
        ` (saves ${pct(p.wall - p.whatif.estimated_wall, p.wall)})`),
      el("label", {}, Object.assign(el("input", {type: "checkbox", id: "cp-whatif", onchange: (e) => {
        this.whatif = e.target.checked;
        this.renderWindow();
        this.timeline.draw();
      }}), {checked: this.whatif}), " mark the what-if path")) : null;
    fill(this.host.querySelector("#cp-window"),
      el("h4", {text: `${p.window.name}: ${us(total)} of ${us(p.wall)} (${pct(total, p.wall)})` + (this.whatif ? " (what-if path)" : "")}),
      boundBar(shown.by_bound),
      el("table", {class: "small cp-bounds"}, bounds.map(([k, v]) => el("tr", {class: "cp-bound", "data-bound": k},
        el("td", {}, svg("svg", {width: 10, height: 10}, svg("rect", {width: 10, height: 10, fill: colour(k)})), " " + k),
        el("td", {class: "num", text: us(v)}), el("td", {class: "num", text: pct(v, total)})))),
      whatif,
      el("h4", {text: `${shown.events.length} events in order (click one to select it)`}),
      el("div", {class: "cp-events-box"}, el("table", {class: "small cp-events"},
        el("tr", {}, ["#", "event", "path time", ""].map((h) => el("th", {text: h}))),
        shown.events.map((ev, i) => el("tr", {class: "cp-event" + (rows[i] ? "" : " missing"), "data-index": i,
          "data-slice": rows[i] ? rows[i][0] : "", title: `${ev.name}\n${ev.kind} (${ev.cat}), ${us(ev.dur)} at ${ev.ts}` +
            (rows[i] ? "" : "\nnot found on the timeline"), onclick: () => this.pick(i)},
        el("td", {class: "num", text: String(i)}), el("td", {text: middle(ev.name, 40)}),
        el("td", {class: "num", text: time[i] ? us(time[i]) : ""}),
        el("td", {}, bound[i] ? svg("svg", {width: 8, height: 8}, svg("rect", {width: 8, height: 8, fill: colour(bound[i])},
          svg("title", {text: bound[i]}))) : null))))));
  }

  diff(doc) {
    const d = doc.diff;
    const table = (head, rows) => el("table", {class: "small cp-diff"}, el("tr", {}, head.map((h) => el("th", {text: h}))),
      rows.map((r) => el("tr", {}, r.map((c, k) => el("td", {class: k ? "num" : "", text: c})))));
    const [cur, base] = Object.keys(doc.profiles);
    return el("div", {class: "cp-base"}, el("h4", {text: `against -base ${doc.base}`}),
      table(["window", cur, base, "change"], d.windows.map((w) => [w.window, us(w.current), us(w.base), signed(w.change, us)])),
      table(["bound", cur, base, "change"], d.by_bound.map((w) => [w.category, us(w.current), us(w.base), signed(w.change, us)])),
      table(["event name", cur, base, "change"], d.names.slice(0, 15).map((w) => [middle(w.name, 40), us(w.current), us(w.base), signed(w.change, us)])));
  }

  /** Choose window k: list its path and, with `zoom`, show it on the timeline. */
  choose(k, zoom) {
    this.window = k;
    this.whatif = false;
    this.renderWindow();
    if (zoom) {
      const w = this.own().paths[k].window;
      const origin = this.timeline.data.origin_us;
      const a = (w.start - origin) * 1000, z = (w.end - origin) * 1000;
      this.timeline.setWindow(a - (z - a) * 0.02, z + (z - a) * 0.02);
    } else {
      this.timeline.draw();
    }
  }

  /** Select listed event i on the timeline (zooming to it if it is not in sight). */
  pick(i) {
    const r = this.marks()[i];
    this.mark(r ? r[0] : -1, i);
    if (!r) return;
    const tl = this.timeline;
    const [, , , start, dur] = r;
    const px = (tl.t1 - tl.t0) / Math.max(1, tl.width - 230);
    if (start + dur < tl.t0 || start > tl.t1 || dur < 3 * px) {
      const span = Math.max(dur * 8, 20000);
      tl.setWindow(start + dur / 2 - span / 2, start + dur / 2 + span / 2);
    }
    tl.select(r[0]);
  }

  /** Mark the listed row of slice `slice` (or of index i), e.g. when it is clicked on
   * the timeline. */
  mark(slice, i = -1) {
    let found = null;
    for (const row of this.host.querySelectorAll("tr.cp-event")) {
      const on = i >= 0 ? Number(row.dataset.index) === i : row.dataset.slice === String(slice);
      row.classList.toggle("selected", on);
      if (on && !found) found = row;
    }
    if (found) found.scrollIntoView({block: "nearest"});
  }
}
