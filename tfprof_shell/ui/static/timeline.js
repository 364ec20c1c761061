// The timeline: lanes of one view line's trace, a window at a time. The server
// sends only the window's events, small ones merged per pixel; wheel zooms,
// dragging pans, and each change asks the server again.

import {post} from "./api.js";
import {el, fill} from "./dom.js";
import {time} from "./format.js";

const LANE = 20;
const LABEL = 260;

export class Timeline {
  /** options: onNote(text) for what the server says about the window; onError(message). */
  constructor(container, options = {}) {
    this.options = options;
    this.canvas = el("canvas", {class: "tl-canvas"});
    this.tip = el("div", {class: "flame-tip", hidden: true});
    this.wrap = el("div", {class: "tl-wrap"}, this.canvas, this.tip);
    fill(container, this.wrap);
    this.canvas.addEventListener("wheel", (e) => this.wheel(e), {passive: false});
    this.canvas.addEventListener("mousedown", (e) => this.dragStart(e));
    window.addEventListener("mouseup", () => { this.dragging = null; });
    window.addEventListener("mousemove", (e) => this.dragMove(e));
    this.canvas.addEventListener("mousemove", (e) => this.hover(e));
  }

  /** Load a view line's timeline, whole. */
  async load(line) {
    this.line = line;
    this.t0 = null;
    this.t1 = null;
    await this.fetch();
  }

  async fetch() {
    const width = Math.max(200, this.wrap.clientWidth - LABEL);
    const seq = (this.seq = (this.seq || 0) + 1);
    let data;
    try {
      data = await post("/api/timeline", {line: this.line, t0: this.t0, t1: this.t1, width});
    } catch (e) {
      if (this.options.onError) this.options.onError(e.message);
      return;
    }
    if (seq !== this.seq) return;  // a newer window was asked for meanwhile
    this.data = data;
    this.t0 = data.t0;
    this.t1 = data.t1;
    this.draw();
    if (this.options.onNote) {
      this.options.onNote(`${data.lanes.length} lanes, window ${time(Math.round(data.t1 - data.t0))} of ` +
        `${time(Math.round(data.end - data.start))}` + (data.notes.length ? "; " + data.notes.join("; ") : ""));
    }
  }

  x(t) {
    return LABEL + (t - this.t0) / (this.t1 - this.t0) * (this.width - LABEL);
  }

  draw() {
    const data = this.data;
    if (!data) return;
    this.width = Math.max(300, this.wrap.clientWidth);
    const height = Math.max(LANE, data.lanes.length * LANE);
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = this.width * ratio;
    this.canvas.height = height * ratio;
    this.canvas.style.width = this.width + "px";
    this.canvas.style.height = height + "px";
    const g = this.canvas.getContext("2d");
    g.scale(ratio, ratio);
    g.font = "11px sans-serif";
    g.textBaseline = "middle";
    data.lanes.forEach((lane, k) => {
      const y = k * LANE;
      g.fillStyle = k % 2 ? "#f6f6f6" : "#ffffff";
      g.fillRect(0, y, this.width, LANE);
      for (let j = 0; j < lane.ts.length; j++) {
        const x0 = Math.max(LABEL, this.x(lane.ts[j]));
        const x1 = Math.min(this.width, this.x(lane.ts[j] + lane.dur[j]));
        if (x1 < LABEL) continue;
        const merged = lane.count[j] > 1;
        g.fillStyle = merged ? "#9aa5b1" : `hsl(${(lane.label[j] * 47) % 360},60%,65%)`;
        g.fillRect(x0, y + 2, Math.max(1, x1 - x0), LANE - 4);
        if (x1 - x0 > 40) {
          g.save();
          g.beginPath();
          g.rect(x0, y, x1 - x0 - 2, LANE);
          g.clip();
          g.fillStyle = "#111";
          const label = merged ? `${lane.count[j]} events` : data.strings[lane.label[j]];
          g.fillText(label, x0 + 3, y + LANE / 2);
          g.restore();
        }
      }
      g.fillStyle = "#eef1f4";
      g.fillRect(0, y, LABEL - 4, LANE);
      g.fillStyle = "#222";
      g.save();
      g.beginPath();
      g.rect(0, y, LABEL - 8, LANE);
      g.clip();
      g.fillText(lane.name, 4, y + LANE / 2);
      g.restore();
    });
  }

  wheel(e) {
    if (!this.data) return;
    e.preventDefault();
    const rect = this.canvas.getBoundingClientRect();
    const at = this.t0 + (e.clientX - rect.left - LABEL) / (this.width - LABEL) * (this.t1 - this.t0);
    const factor = e.deltaY > 0 ? 1.5 : 1 / 1.5;
    this.setWindow(at - (at - this.t0) * factor, at + (this.t1 - at) * factor);
  }

  /** Zoom by a factor around the middle (buttons). */
  zoom(factor) {
    if (!this.data) return;
    const mid = (this.t0 + this.t1) / 2, half = (this.t1 - this.t0) / 2 * factor;
    this.setWindow(mid - half, mid + half);
  }

  reset() {
    if (!this.data) return;
    this.setWindow(this.data.start, this.data.end);
  }

  setWindow(t0, t1) {
    const d = this.data;
    const span = Math.max(1, t1 - t0);
    t0 = Math.max(d.start, t0);
    t1 = Math.min(d.end, t0 + span);
    this.t0 = t0;
    this.t1 = Math.max(t0 + 1, t1);
    this.draw();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fetch(), 120);
  }

  dragStart(e) {
    this.dragging = {x: e.clientX, t0: this.t0, t1: this.t1};
  }

  dragMove(e) {
    if (!this.dragging || !this.data) return;
    const dt = (e.clientX - this.dragging.x) / (this.width - LABEL) * (this.dragging.t1 - this.dragging.t0);
    this.setWindow(this.dragging.t0 - dt, this.dragging.t1 - dt);
  }

  hover(e) {
    const data = this.data;
    if (!data || this.dragging) return;
    const rect = this.canvas.getBoundingClientRect();
    const x = e.clientX - rect.left, k = Math.floor((e.clientY - rect.top) / LANE);
    const lane = data.lanes[k];
    this.tip.hidden = true;
    if (!lane || x < LABEL) return;
    for (let j = 0; j < lane.ts.length; j++) {
      if (x >= this.x(lane.ts[j]) - 1 && x <= this.x(lane.ts[j] + lane.dur[j]) + 1) {
        this.tip.textContent = lane.count[j] > 1
          ? `${lane.count[j]} events merged at this zoom (${time(lane.dur[j])}); zoom in`
          : `${data.strings[lane.label[j]]}\n${time(lane.dur[j])} at +${time(lane.ts[j] - data.start)}`;
        this.tip.hidden = false;
        this.tip.style.left = Math.min(x + 12, this.width - 260) + "px";
        this.tip.style.top = k * LANE + 22 + "px";
        return;
      }
    }
  }
}
