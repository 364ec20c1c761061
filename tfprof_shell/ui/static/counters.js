// Counter lanes on the timeline: each device's memory level (allocated, and reserved
// where the format records it) as a step chart, scaled to the device's own peak so a
// zoom never rescales it; the peak is marked. The server sends the window's points.

import {bytes, middle, nanos} from "./format.js";

const FILL = "rgba(78,121,167,0.35)";
const LINE = "#4e79a7";
const RESERVED = "#e15759";

/** Draw counter lane `k` (the timeline's painters.counter). */
export function paintCounter(g, lane, k, view) {
  const top = view.top(k), height = view.height(k);
  const c = lane.counter;
  const scale = (v) => top + height - 2 - (height - 4) * v / Math.max(1, c.top);
  const right = view.right;
  const steps = (values) => {
    g.beginPath();
    let started = false;
    for (let i = 0; i < c.t.length; i++) {
      const x0 = Math.max(view.left, view.x(c.t[i]));
      const x1 = i + 1 < c.t.length ? Math.min(right, view.x(c.t[i + 1])) : right;
      if (x1 < view.left || x0 > right) continue;
      const y = scale(values[i]);
      if (!started) { g.moveTo(x0, y); started = true; } else g.lineTo(x0, y);
      g.lineTo(x1, y);
    }
    return started;
  };
  if (steps(c.v)) {
    g.strokeStyle = LINE;
    g.lineWidth = 1.2;
    g.stroke();
    g.lineTo(right, top + height - 2);
    g.fillStyle = FILL;
    // close down to the baseline from the last point back to the first
    const first = c.t.length ? Math.max(view.left, view.x(c.t[0])) : view.left;
    g.lineTo(first, top + height - 2);
    g.fill();
  }
  if (c.r && steps(c.r)) {
    g.strokeStyle = RESERVED;
    g.setLineDash([4, 3]);
    g.stroke();
    g.setLineDash([]);
  }
  g.lineWidth = 1;
  const [pt, pv] = c.peak;
  const px = view.x(pt);
  if (px >= view.left && px <= right) {
    g.fillStyle = "#c0392b";
    g.beginPath();
    g.moveTo(px, scale(pv) - 1);
    g.lineTo(px - 4, scale(pv) - 7);
    g.lineTo(px + 4, scale(pv) - 7);
    g.fill();
  }
  g.fillStyle = "#f3f5f7";
  g.fillRect(0, top, view.left - 4, height);
  g.fillStyle = "#222";
  g.fillText(middle(lane.name, 34), 8, top + 8);
  g.fillStyle = "#556";
  g.fillText(`peak ${bytes(pv)}` + (c.r ? " (dashed: reserved)" : ""), 8, top + 22);
  g.fillStyle = "#e4e8ec";
  g.fillRect(0, top + height + 1, right, 1);
}

/** The level at time t of a counter lane (the timeline's tips.counter). */
export function counterTip(lane, t) {
  const c = lane.counter;
  let i = -1;
  for (let k = 0; k < c.t.length && c.t[k] <= t; k++) i = k;
  if (i < 0) return `${lane.name}: no event before ${nanos(t)}`;
  return `${lane.name} at ${nanos(t)}\nallocated ${bytes(c.v[i])}` +
    (c.r ? `\nreserved ${bytes(c.r[i])}` : "") + `\npeak ${bytes(c.peak[1])} at ${nanos(c.peak[0])}`;
}
