// The details pane: everything the server knows about one row.

import {post} from "./api.js";
import {el, fill, svg} from "./dom.js";
import {forUnit, shortDevice} from "./format.js";

const UNITS = {micros: "microseconds", accelerator_micros: "microseconds", cpu_micros: "microseconds",
  bytes: "bytes", peak_bytes: "bytes", residual_bytes: "bytes", output_bytes: "bytes"};

function values(title, obj) {
  const rows = Object.entries(obj || {}).filter(([, v]) => v);
  if (!rows.length) return null;
  return el("div", {}, el("h4", {text: title}), el("table", {class: "kv"},
    rows.map(([k, v]) => el("tr", {}, el("th", {text: k}), el("td", {text: forUnit(UNITS[k])(v)})))));
}

function list(title, items) {
  if (!items || !items.length) return null;
  return el("div", {}, el("h4", {text: title}), el("ul", {class: "plain"}, items.map((x) => el("li", {text: x}))));
}

function stepChart(steps, micros) {
  if (!steps || steps.length < 2) return null;
  const order = steps.map((s, k) => [s, micros[k]]).sort((a, b) => a[0] - b[0]);
  const max = Math.max(1, ...order.map((x) => x[1]));
  const w = 260, h = 60, bw = w / order.length;
  return el("div", {}, el("h4", {text: "per step (micros)"}), svg("svg", {width: w, height: h, class: "steps"},
    order.map(([s, v], k) => svg("rect", {x: k * bw, y: h - h * v / max, width: Math.max(1, bw - 1),
      height: h * v / max}, svg("title", {text: `step ${s}: ${v}us`})))));
}

/** Fetch and show the details of `row` of the current views line. */
export async function showDetails(node, app, row) {
  let d;
  try {
    d = await post("/api/details", {line: app.line, row});
  } catch (e) {
    fill(node, el("p", {class: "error", text: e.message}));
    return;
  }
  const cur = app.state.profiles.find((p) => p.current);
  const framework = cur && cur.vocabulary === "framework";
  const device = (name) => framework ? shortDevice(name) : name;
  const facts = [];
  for (const key of ["op", "device", "status", "member_count"]) {
    if (d[key] !== undefined && d[key] !== "") facts.push(el("tr", {}, el("th", {text: key}), el("td", {text: key === "device" ? device(d[key]) : String(d[key])})));
  }
  if (d.shape && d.shape.length) facts.push(el("tr", {}, el("th", {text: "shape"}), el("td", {text: JSON.stringify(d.shape)})));
  if (d.frame) facts.push(el("tr", {}, el("th", {text: "frame"}), el("td", {text: `${d.frame[0]}:${d.frame[1]} ${d.frame[2]}`})));
  fill(node,
    el("h3", {class: "dname", text: row === 0 && framework ? "total" : d.name}),
    el("table", {class: "kv"}, facts),
    values("total", d.total), values("self", d.self), values("base", d.base),
    d.cumulative ? values("cumulative (this row and every row below it, as the op view's first column adds them)", d.cumulative) : null,
    list("op types", (d.op_types || []).map((t) => t.startsWith("/job:") ? device(t) : t)),
    list("devices", (d.devices || []).map(device)),
    list("input shapes", (d.input_shapes || []).map(([i, s]) => `${i}: ${s ? JSON.stringify(s) : "unknown"}`)),
    list("attributes", (d.attrs || []).map(([k, v]) => `${k} = ${v}`)),
    list("code trace", (d.trace || []).map(([f, l, fn]) => `${f}:${l} ${fn}`)),
    stepChart(d.steps, d.step_micros),
    list(`graph nodes (${d.member_count || 0})`, d.members));
}
