// The timeline: a profile's lanes (host threads, device streams) grouped by process
// and device, slices nested in rows, a time axis with the steps on it. The server
// sends only the window on screen (slices under a pixel merged), so a window costs
// the same on a 500 MB trace as on a small one. Wheel zooms, dragging the axis pans,
// dragging the lanes selects a range (what it holds is listed), a click selects a
// slice (its details, and the flow from a launch to its kernel).
//
// Follow-ups draw on it without changing it: `overlays` are drawn after the lanes
// (each {draw(g, view)}, view = {x(t), laneY(lane, row), rowHeight}), and
// `painters[kind]` draws lanes of a kind the server adds (e.g. counters).

import {post} from "./api.js";
import {el, fill} from "./dom.js";
import {middle, nanos} from "./format.js";

const ROW = 14;
const GROUP = 18;
const LANE_GAP = 3;
const LABEL = 230;
const AXIS = 36;
const DRAG = 4;
/** Lanes deeper than this show this many rows until their label is clicked. */
const FOLDED_ROWS = 12;

function hue(k) {
  return (k * 47) % 360;
}

/** A "nice" tick step (1, 2 or 5 times a power of ten) for about `count` ticks. */
export function tickStep(span, count) {
  const raw = span / Math.max(1, count);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

export class Timeline {
  /** options: onNote(text), onError(message), onSelect(details), onRange(answer). */
  constructor(container, options = {}) {
    this.options = options;
    this.axis = el("canvas", {class: "tl-axis"});
    this.canvas = el("canvas", {class: "tl-canvas", tabindex: "0"});
    this.tip = el("div", {class: "flame-tip", hidden: true});
    this.scroller = el("div", {class: "tl-scroll"}, this.canvas, this.tip);
    this.wrap = el("div", {class: "tl-wrap"}, this.axis, this.scroller);
    fill(container, this.wrap);
    this.collapsed = new Set();
    this.unfolded = new Set();
    this.overlays = [];
    this.painters = {};
    this.ticks = [];
    this.flowsDrawn = [];
    this.selected = null;
    this.range = null;
    this.canvas.addEventListener("wheel", (e) => this.wheel(e), {passive: false});
    this.axis.addEventListener("wheel", (e) => this.wheel(e), {passive: false});
    this.canvas.addEventListener("mousedown", (e) => this.down(e, "lanes"));
    this.axis.addEventListener("mousedown", (e) => this.down(e, "axis"));
    window.addEventListener("mousemove", (e) => this.move(e));
    window.addEventListener("mouseup", (e) => this.up(e));
    this.canvas.addEventListener("mousemove", (e) => this.hover(e));
    this.canvas.addEventListener("mouseleave", () => { this.tip.hidden = true; });
    this.canvas.addEventListener("keydown", (e) => this.key(e));
    new ResizeObserver(() => { if (this.data) this.draw(); }).observe(this.wrap);
  }

  /** Load a line's lanes: the whole trace (or the line's step). Throws on a bad line. */
  async load(line) {
    const first = !this.data || this.line !== line;
    const data = await this.request(line, first ? null : this.t0, first ? null : this.t1);
    this.line = line;
    if (first) {
      this.selected = null;
      this.range = null;
      this.flowsDrawn = [];
    }
    this.accept(data);
  }

  request(line, t0, t1) {
    const width = Math.max(200, (this.wrap.clientWidth || 1000) - LABEL);
    return post("/api/timeline", {line, t0, t1, width, collapsed: [...this.collapsed]});
  }

  async fetch() {
    this.timer = 0;
    const seq = (this.seq = (this.seq || 0) + 1);
    this.inFlight = (this.inFlight || 0) + 1;
    let data;
    try {
      data = await this.request(this.line, this.t0, this.t1);
    } catch (e) {
      if (this.options.onError) this.options.onError(e.message);
      return;
    } finally {
      this.inFlight--;
    }
    if (seq === this.seq) this.accept(data);
  }

  /** Whether a window is still to come (asked for, or about to be). */
  busy() {
    return Boolean(this.timer) || this.inFlight > 0;
  }

  accept(data) {
    this.data = data;
    this.t0 = data.t0;
    this.t1 = data.t1;
    this.layout();
    this.draw();
    if (this.options.onNote) {
      this.options.onNote(`${data.lanes.length} lanes in ${data.groups.length} groups (${data.source}); ` +
        `window ${nanos(data.t1 - data.t0)} of ${nanos(data.end - data.start)}` +
        (data.notes.length ? "; " + data.notes.join("; ") : ""));
    }
  }

  /** Vertical positions: [{group, y}] headers and each lane's top (null if collapsed). */
  layout() {
    const data = this.data;
    this.tops = new Array(data.lanes.length).fill(null);
    this.headers = [];
    let y = 0;
    for (const g of data.groups) {
      this.headers.push({group: g, y});
      y += GROUP;
      if (this.collapsed.has(g.name)) continue;
      for (const k of g.lanes) {
        this.tops[k] = y;
        y += this.shownRows(k) * ROW + LANE_GAP;
      }
    }
    this.height = Math.max(y, ROW);
  }

  /** How many rows lane k shows (a deep lane is folded until its label is clicked). */
  shownRows(k) {
    const rows = Math.max(1, this.data.lanes[k].rows);
    return rows > FOLDED_ROWS && !this.unfolded.has(this.data.lanes[k].name) ? FOLDED_ROWS : rows;
  }

  laneY(lane, row) {
    const top = this.tops[lane];
    return top === null || row >= this.shownRows(lane) ? null : top + row * ROW;
  }

  x(t) {
    return LABEL + (t - this.t0) / (this.t1 - this.t0) * (this.width - LABEL);
  }

  time(x) {
    return this.t0 + (x - LABEL) / (this.width - LABEL) * (this.t1 - this.t0);
  }

  canvasSize(canvas, width, height) {
    const ratio = window.devicePixelRatio || 1;
    canvas.width = width * ratio;
    canvas.height = height * ratio;
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
    const g = canvas.getContext("2d");
    g.scale(ratio, ratio);
    g.font = "11px sans-serif";
    g.textBaseline = "middle";
    return g;
  }

  draw() {
    const data = this.data;
    if (!data) return;
    this.width = Math.max(400, this.wrap.clientWidth || 1000);
    this.drawAxis();
    const g = this.canvasSize(this.canvas, this.width, this.height);
    const view = {x: (t) => this.x(t), laneY: (k, r) => this.laneY(k, r), rowHeight: ROW};
    this.drawSteps(g, this.height, false);
    for (const h of this.headers) this.drawHeader(g, h);
    data.lanes.forEach((lane, k) => {
      if (this.tops[k] === null) return;
      const paint = this.painters[lane.kind];
      if (paint) paint(g, lane, k, view);
      else this.drawLane(g, lane, k);
    });
    if (this.range) this.drawRange(g);
    this.drawFlows(g);
    for (const overlay of this.overlays) overlay.draw(g, view);
  }

  drawAxis() {
    const g = this.canvasSize(this.axis, this.width, AXIS);
    g.fillStyle = "#eef1f4";
    g.fillRect(0, 0, this.width, AXIS);
    this.drawSteps(g, AXIS, true);
    const span = this.t1 - this.t0;
    const step = tickStep(span, (this.width - LABEL) / 110);
    this.ticks = [];
    g.strokeStyle = "#8895a2";
    g.fillStyle = "#223";
    for (let t = Math.ceil(this.t0 / step) * step; t <= this.t1; t += step) {
      const x = this.x(t);
      const label = nanos(t);
      this.ticks.push({x, t, label});
      g.beginPath();
      g.moveTo(x + 0.5, AXIS - 8);
      g.lineTo(x + 0.5, AXIS);
      g.stroke();
      g.fillText(label, x + 3, AXIS - 10);
    }
    g.fillStyle = "#445";
    g.fillText(`+${nanos(span)} shown`, 6, AXIS - 10);
  }

  /** Step regions: labelled bands on the axis, faint alternating shading on the lanes. */
  drawSteps(g, height, onAxis) {
    (this.data.steps || []).forEach((s, k) => {
      const x0 = Math.max(LABEL, this.x(s.start)), x1 = Math.min(this.width, this.x(s.end));
      if (x1 <= x0) return;
      if (onAxis) {
        g.fillStyle = `hsla(${hue(s.step + 3)},55%,70%,0.9)`;
        g.fillRect(x0, 2, x1 - x0, 12);
        if (x1 - x0 > 30) {
          g.fillStyle = "#111";
          g.fillText(`step ${s.step}`, x0 + 3, 8);
        }
      } else if (k % 2 === 0) {
        g.fillStyle = "rgba(90,120,160,0.06)";
        g.fillRect(x0, 0, x1 - x0, height);
      }
    });
  }

  drawHeader(g, h) {
    const open = !this.collapsed.has(h.group.name);
    g.fillStyle = "#dde4ea";
    g.fillRect(0, h.y, this.width, GROUP - 1);
    g.fillStyle = "#111";
    g.font = "bold 11px sans-serif";
    g.fillText(`${open ? "\u25be" : "\u25b8"} ${h.group.name} (${h.group.lanes.length} lane${h.group.lanes.length === 1 ? "" : "s"})`, 6, h.y + GROUP / 2);
    g.font = "11px sans-serif";
  }

  drawLane(g, lane, k) {
    const top = this.tops[k];
    const shown = this.shownRows(k);
    const height = shown * ROW;
    const strings = this.data.strings;
    lane.blocks.forEach((row, r) => {
      if (r >= shown) return;
      const y = top + r * ROW;
      for (let j = 0; j < row.ts.length; j++) {
        const a = this.x(row.ts[j]), z = this.x(row.ts[j] + row.dur[j]);
        if (z < LABEL || a > this.width) continue;
        const x0 = Math.max(LABEL, a), x1 = Math.min(this.width, z);
        const merged = row.count[j] > 1;
        const chosen = this.selected && row.ev[j] === this.selected.event;
        g.fillStyle = merged ? "#a9b3bd" : `hsl(${hue(row.label[j])},${lane.kind === "device" ? 62 : 48}%,${chosen ? 45 : 68}%)`;
        g.fillRect(x0, y + 1, Math.max(1, x1 - x0 - 0.5), ROW - 2);
        if (x1 - x0 > 24) {
          const text = merged ? `${row.count[j]} slices` : strings[row.label[j]];
          g.fillStyle = chosen ? "#fff" : "#111";
          g.fillText(middle(text, Math.floor((x1 - x0 - 4) / 6)), x0 + 2, y + ROW / 2);
        }
      }
    });
    g.fillStyle = "#f3f5f7";
    g.fillRect(0, top, LABEL - 4, height);
    g.fillStyle = "#222";
    g.fillText(middle(lane.name, Math.floor((LABEL - 14) / 6)), 8, top + Math.min(height, ROW) / 2);
    if (lane.rows > FOLDED_ROWS) {
      g.fillStyle = "#0b5cad";
      g.fillText(shown < lane.rows ? `\u25b8 ${lane.rows - shown} more rows` : "\u25be fold rows", 8, top + ROW * 1.5);
    }
    g.fillStyle = "#e4e8ec";
    g.fillRect(0, top + height + 1, this.width, 1);
  }

  drawRange(g) {
    const x0 = Math.max(LABEL, this.x(Math.min(this.range.t0, this.range.t1)));
    const x1 = Math.min(this.width, this.x(Math.max(this.range.t0, this.range.t1)));
    if (x1 <= x0) return;
    g.fillStyle = "rgba(30,110,220,0.13)";
    g.fillRect(x0, 0, x1 - x0, this.height);
    g.strokeStyle = "rgba(30,110,220,0.8)";
    g.strokeRect(x0 + 0.5, 0.5, x1 - x0 - 1, this.height - 1);
  }

  /** The selected slice's flow: from the launch (host) to the device work it started. */
  drawFlows(g) {
    this.flowsDrawn = [];
    const d = this.selected;
    if (!d || !d.flow) return;
    const pair = [d, d.flow];
    const from = pair.find((e) => e.kind === "host") || (d.start <= d.flow.start ? d : d.flow);
    const to = from === d ? d.flow : d;
    const y0 = this.laneY(from.lane, from.row), y1 = this.laneY(to.lane, to.row);
    if (y0 === null || y1 === null) return;
    const ax = this.x(from.start + from.dur), ay = y0 + ROW / 2;
    const bx = this.x(to.start), by = y1 + ROW / 2;
    g.strokeStyle = "#c0392b";
    g.fillStyle = "#c0392b";
    g.lineWidth = 1.5;
    g.beginPath();
    g.moveTo(ax, ay);
    g.bezierCurveTo(ax + 30, ay, bx - 30, by, bx, by);
    g.stroke();
    const dir = by >= ay ? 1 : -1;
    g.beginPath();
    g.moveTo(bx, by);
    g.lineTo(bx - 7, by - 4 * dir);
    g.lineTo(bx - 7, by + 4 * dir);
    g.fill();
    g.lineWidth = 1;
    this.flowsDrawn.push({from: {lane: this.data.lanes[from.lane].name, name: from.name},
      to: {lane: this.data.lanes[to.lane].name, name: to.name}});
  }

  // -- what is where ---------------------------------------------------------------

  /** What a canvas point is on: {header}, {lane, row, block index, ev, ...} or null. */
  at(e) {
    const rect = this.canvas.getBoundingClientRect();
    const x = e.clientX - rect.left, y = e.clientY - rect.top;
    for (const h of this.headers) if (y >= h.y && y < h.y + GROUP) return {header: h.group, x, y};
    for (let k = 0; k < this.data.lanes.length; k++) {
      const top = this.tops[k];
      const lane = this.data.lanes[k];
      if (top === null || y < top || y >= top + this.shownRows(k) * ROW) continue;
      const r = Math.floor((y - top) / ROW);
      const row = lane.blocks[r];
      if (x < LABEL) return {label: k, row: r, x, y};
      if (!row) return {lane: k, row: r, x, y};
      for (let j = 0; j < row.ts.length; j++) {
        if (x >= this.x(row.ts[j]) - 1 && x <= this.x(row.ts[j] + row.dur[j]) + 1) {
          return {lane: k, row: r, j, block: row, x, y};
        }
      }
      return {lane: k, row: r, x, y};
    }
    return null;
  }

  /** Client coordinates of the first single slice drawn on the lane named `name`. */
  locate(name, minWidth = 2) {
    const k = this.data.lanes.findIndex((l) => l.name === name);
    if (k < 0 || this.tops[k] === null) return null;
    const rect = this.canvas.getBoundingClientRect();
    const lane = this.data.lanes[k];
    for (let r = 0; r < Math.min(lane.blocks.length, this.shownRows(k)); r++) {
      const row = lane.blocks[r];
      for (let j = 0; j < row.ts.length; j++) {
        const a = Math.max(LABEL, this.x(row.ts[j])), z = Math.min(this.width, this.x(row.ts[j] + row.dur[j]));
        if (row.count[j] === 1 && row.ev[j] >= 0 && z - a >= minWidth) {
          const y = this.tops[k] + r * ROW + ROW / 2;
          this.scroller.scrollTop = Math.max(0, y - 40);
          const top = this.canvas.getBoundingClientRect().top;
          return {x: rect.left + (a + z) / 2, y: top + y, event: row.ev[j]};
        }
      }
    }
    return null;
  }

  // -- interaction --------------------------------------------------------------------

  down(e, where) {
    if (!this.data || e.button !== 0) return;
    this.drag = {where, x: e.clientX, t: this.timeAt(e), t0: this.t0, t1: this.t1, moved: false};
    e.preventDefault();
  }

  timeAt(e) {
    const rect = this.canvas.getBoundingClientRect();
    return this.time(e.clientX - rect.left);
  }

  move(e) {
    const d = this.drag;
    if (!d) return;
    if (Math.abs(e.clientX - d.x) > DRAG) d.moved = true;
    if (!d.moved) return;
    if (d.where === "axis") {
      const dt = (e.clientX - d.x) / (this.width - LABEL) * (d.t1 - d.t0);
      this.setWindow(d.t0 - dt, d.t1 - dt);
    } else {
      this.range = {t0: d.t, t1: this.timeAt(e)};
      this.draw();
    }
  }

  up(e) {
    const d = this.drag;
    this.drag = null;
    if (!d || !this.data) return;
    if (d.where === "lanes" && d.moved) {
      this.range = {t0: Math.min(d.t, this.timeAt(e)), t1: Math.max(d.t, this.timeAt(e))};
      this.draw();
      this.loadRange();
    } else if (d.where === "lanes") {
      this.click(e);
    }
  }

  async loadRange() {
    const r = this.range;
    let answer;
    try {
      answer = await post("/api/timeline/range", {line: this.line, t0: Math.round(r.t0), t1: Math.round(r.t1)});
    } catch (err) {
      if (this.options.onError) this.options.onError(err.message);
      return;
    }
    if (this.options.onRange) this.options.onRange(answer);
  }

  click(e) {
    const hit = this.at(e);
    if (!hit) return;
    if (hit.header) {
      this.toggle(hit.header.name);
      return;
    }
    if (hit.label !== undefined) {
      const name = this.data.lanes[hit.label].name;
      if (this.data.lanes[hit.label].rows <= FOLDED_ROWS) return;
      if (this.unfolded.has(name)) this.unfolded.delete(name);
      else this.unfolded.add(name);
      this.layout();
      this.draw();
      return;
    }
    if (hit.block === undefined) {
      this.selected = null;
      this.draw();
      return;
    }
    const ev = hit.block.ev[hit.j];
    if (ev < 0) {  // a merged block: zoom to it
      const a = hit.block.ts[hit.j], d = hit.block.dur[hit.j];
      this.setWindow(a - d * 0.1, a + d * 1.1);
      return;
    }
    this.select(ev);
  }

  /** Select slice `event`: its details (and flow) from the server. */
  async select(event) {
    let d;
    try {
      d = await post("/api/timeline/event", {line: this.line, event});
    } catch (err) {
      if (this.options.onError) this.options.onError(err.message);
      return;
    }
    this.selected = d;
    // show both ends of the flow: unfold the lanes (and groups) they are in
    let refetch = false;
    for (const end of [d, d.flow]) {
      if (!end) continue;
      const lane = this.data.lanes[end.lane];
      if (this.collapsed.delete(lane.group)) refetch = true;
      if (end.row >= FOLDED_ROWS) this.unfolded.add(lane.name);
    }
    this.layout();
    this.draw();
    if (refetch) this.fetch();
    if (this.options.onSelect) this.options.onSelect(d);
  }

  toggle(group) {
    if (this.collapsed.has(group)) this.collapsed.delete(group);
    else this.collapsed.add(group);
    this.layout();
    this.draw();
    this.fetch();
  }

  wheel(e) {
    if (!this.data) return;
    e.preventDefault();
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      const dt = (e.deltaX || e.deltaY) / (this.width - LABEL) * (this.t1 - this.t0);
      this.setWindow(this.t0 + dt, this.t1 + dt);
      return;
    }
    const at = this.timeAt(e);
    const factor = e.deltaY > 0 ? 1.4 : 1 / 1.4;
    this.setWindow(at - (at - this.t0) * factor, at + (this.t1 - at) * factor);
  }

  key(e) {
    const span = this.t1 - this.t0;
    if (e.key === "w") this.zoom(1 / 1.5);
    else if (e.key === "s") this.zoom(1.5);
    else if (e.key === "a") this.setWindow(this.t0 - span / 5, this.t1 - span / 5);
    else if (e.key === "d") this.setWindow(this.t0 + span / 5, this.t1 + span / 5);
    else return;
    e.preventDefault();
  }

  /** Zoom by a factor around the middle (buttons). */
  zoom(factor) {
    if (!this.data) return;
    const mid = (this.t0 + this.t1) / 2, half = (this.t1 - this.t0) / 2 * factor;
    this.setWindow(mid - half, mid + half);
  }

  reset() {
    if (this.data) this.setWindow(this.data.start, this.data.end);
  }

  /** Zoom to the selected range. */
  zoomToRange() {
    if (this.range) this.setWindow(this.range.t0, this.range.t1);
  }

  setWindow(t0, t1) {
    const d = this.data;
    const span = Math.min(d.end - d.start, Math.max(1000, t1 - t0));
    t0 = Math.max(d.start, Math.min(t0, d.end - span));
    this.t0 = t0;
    this.t1 = t0 + span;
    this.seq = (this.seq || 0) + 1;  // a window asked for before this one is stale now
    this.draw();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fetch(), 100);
  }

  hover(e) {
    if (!this.data || this.drag) return;
    const hit = this.at(e);
    this.tip.hidden = true;
    if (!hit || hit.block === undefined) return;
    const b = hit.block, j = hit.j;
    this.tip.textContent = b.count[j] > 1
      ? `${b.count[j]} slices in ${nanos(b.dur[j])} (shorter than a pixel each); click to zoom in`
      : `${this.data.strings[b.label[j]]}\n${nanos(b.dur[j])} at ${nanos(b.ts[j])}\n${this.data.lanes[hit.lane].name}`;
    this.tip.hidden = false;
    this.tip.style.left = Math.min(hit.x + 14, this.width - 300) + "px";
    this.tip.style.top = hit.y + 16 + "px";
  }
}
