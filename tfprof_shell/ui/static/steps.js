// The Steps page: `steps -output json` as pictures. Per profile (ranks side by side),
// per device a stacked bar per step whose segments are the document's device parts
// (whatever parts it lists, in its order), and the host's breakdown beside it. A click
// on a segment lists what it holds: its kernels and the ops that launched them, or
// what the host did while the device idled.

import {post} from "./api.js";
import {el, fill, svg} from "./dom.js";
import {kernelShort, middle, nanos, time} from "./format.js";
import * as L from "./line.js";

const $ = (id) => document.getElementById(id);

export const PART_COLOURS = {
  compute: "#4e79a7", communication_exposed: "#f28e2b", memory_exposed: "#59a14f",
  other: "#b07aa1", sync: "#ff9da7", idle: "#c8ccd0", idle_host_wait: "#e15759",
  idle_queued: "#edc948",
};
const HOST_COLOURS = {
  sync: "#d37295", communication: "#fabfd2", input: "#76b7b2", launch: "#9c755f",
  ops: "#8cd17d", rest: "#e2e4e6",
};
const LABELS = {
  communication_exposed: "communication (outside compute)", memory_exposed: "memory (outside compute and communication)",
  other: "other device work", sync: "device sync (a stream waiting, no work)",
  idle_host_wait: "idle: host wait", idle_queued: "idle: queued",
  rest: "rest (no host event)", ops: "host ops",
};

export function partLabel(part) {
  return LABELS[part] || part.replace(/_/g, " ");
}

function colour(table, part) {
  if (table[part]) return table[part];
  let h = 0;
  for (const c of part) h = (h * 31 + c.charCodeAt(0)) | 0;
  return `hsl(${Math.abs(h) % 360},55%,60%)`;
}

/** A steps document by profile: {name: one profile's document}. */
export function stepsOf(doc, current = "profile") {
  return doc.profiles ? doc.profiles : {[current]: doc};
}

/** One chart: a stacked bar per step (and the average) of `parts` of `values(step)`. */
function stackChart({title, steps, parts, values, colours, attrs, onPick, max}) {
  const bw = Math.max(34, Math.min(60, 240 / Math.max(1, steps.length))), h = 170, left = 48;
  const w = Math.max(260, left + steps.length * bw + 10);
  const chart = svg("svg", {width: w, height: h + 40, class: "stack"});
  chart.append(svg("text", {x: 0, y: 12, text: title, class: "chart-title"}));
  for (let k = 0; k <= 4; k++) {
    const y = 20 + h - h * k / 4;
    chart.append(svg("line", {x1: left - 4, x2: w, y1: y, y2: y, class: "grid"}));
    chart.append(svg("text", {x: 0, y: y + 4, text: time(Math.round(max * k / 4))}));
  }
  steps.forEach((s, k) => {
    const v = values(s);
    if (!v) return;
    let y = 20 + h;
    const x = left + k * bw + 3;
    for (const part of parts) {
      const us = v[part];
      if (us === null || us === undefined || us <= 0) continue;
      const height = h * us / max;
      y -= height;
      const rect = svg("rect", {x, y, width: bw - 6, height: Math.max(height, 0.5), fill: colour(colours, part),
        class: "seg", "data-part": part, "data-us": us, "data-step": s.label, ...attrs(s)},
      svg("title", {text: `step ${s.label}: ${partLabel(part)} ${time(us)}`}));
      if (onPick && s.step !== null) rect.addEventListener("click", () => onPick(s, part));
      chart.append(rect);
    }
    chart.append(svg("text", {x: x + 2, y: 20 + h + 14, text: s.label}));
  });
  return chart;
}

function legend(parts, colours) {
  return el("div", {class: "legend"}, parts.map((p) => el("span", {class: "swatch-item"},
    svg("svg", {width: 12, height: 12}, svg("rect", {width: 12, height: 12, fill: colour(colours, p)})), " ", partLabel(p))));
}

/** One profile's charts: a stacked bar chart per device and the host's beside them; a
 * click on a segment lists what it holds in `target` (an element id). */
export function profilePanel(app, name, doc, single, target = "steps-segment") {
  const steps = doc.steps.map((s) => ({...s, label: String(s.step)}));
  if (doc.average && steps.length > 1) steps.push({...doc.average, step: null, label: "avg"});
  const parts = doc.device_parts || [];
  const hostParts = doc.host_parts || [];
  const devices = doc.devices || [];
  const max = Math.max(1, ...steps.flatMap((s) => [s.wall || 0, ...Object.values(s.devices || {}).map((d) => d.span || 0)]));
  const pick = (device) => (s, part) => showSegment(app, target, name, s.step, device, part);
  const charts = devices.map((d) => stackChart({title: `${d}: each step's span`,
    steps, parts, values: (s) => (s.devices || {})[d], colours: PART_COLOURS,
    attrs: () => ({"data-profile": name, "data-device": d}), onPick: pick(d), max}));
  const host = stackChart({title: "host: each step's wall time", steps,
    parts: hostParts, values: (s) => s.host, colours: HOST_COLOURS,
    attrs: () => ({"data-profile": name, "data-device": "host"}), onPick: pick(""), max});
  return el("div", {class: "steps-panel"},
    single ? null : el("h3", {text: name}),
    devices.length ? null : el("p", {class: "note", text: "no device events: the host's breakdown only"}),
    el("div", {class: "steps-charts"}, charts, host),
    devices.length ? [el("div", {class: "legend-title", text: "device span ="}), legend(parts, PART_COLOURS)] : null,
    el("div", {class: "legend-title", text: "host wall ="}), legend(hostParts, HOST_COLOURS),
    el("p", {class: "note", text: `${doc.origin}; records: ${doc.records.join(", ")}`}));
}

async function showSegment(app, target, profile, step, device, part) {
  const node = $(target);
  fill(node, el("p", {class: "note", text: "looking up…"}));
  let d;
  try {
    d = await post("/api/steps/segment", {profile, step, device, part});
  } catch (e) {
    fill(node, el("p", {class: "error", text: e.message}));
    return;
  }
  const rows = (items, what) => items.length ? el("table", {class: "small seg-table"},
    el("tr", {}, [what, "kind", "count", "time in the part"].map((h) => el("th", {text: h}))),
    items.map((r) => el("tr", {class: "seg-row"}, el("td", {title: r.name},
      what === "kernel" ? el("a", {href: "#", onclick: (e) => {
        e.preventDefault();
        app.navigate({page: "kernels", line: L.withOption(L.withOption("kernels", "step", String(step)), "device", device)});
      }}, middle(kernelShort(r.name), 70)) : middle(r.name, 90)),
    el("td", {text: r.kind}), el("td", {text: String(r.count)}), el("td", {text: nanos(r.time)})))) : null;
  const ops = d.ops.length ? el("table", {class: "small seg-table"},
    el("tr", {}, ["launched by op", "kernels", "kernel time"].map((h) => el("th", {text: h}))),
    d.ops.map((r) => el("tr", {class: "seg-op"}, el("td", {text: middle(r.name, 90), title: r.name}),
      el("td", {text: String(r.count)}), el("td", {text: nanos(r.time)})))) : null;
  fill(node, el("h3", {text: `${profile}, step ${step}, ${device || "host"}: ${partLabel(part)} — ${nanos(d.time)}`}),
    rows(d.device_events, "kernel"), ops,
    d.host_events.length ? el("h4", {text: device ? "the host meanwhile" : "host events"}) : null,
    rows(d.host_events, "host event"),
    !d.device_events.length && !d.host_events.length ? el("p", {class: "note", text: "nothing recorded in this part"}) : null);
}

/** Every rank side by side when several profiles are loaded. */
function defaultLine(app) {
  return app.state && app.state.profiles.length > 1 ? "steps -profiles all" : "steps";
}

export const STEPS = {
  title: "Steps",
  accepts: (cmd) => cmd === "steps",
  home: (cmd) => cmd === "steps",
  lineFor(line, app) {
    if (L.command(line) === "steps") return line;
    return app.lines.steps || defaultLine(app);
  },
  async load(line, app) {
    try {
      return {data: await app.runDocument(line)};
    } catch (e) {
      if (line !== defaultLine(app)) throw e;  // a typed line the shell refuses
      return {data: {error: e.message}};
    }
  },
  show(doc, app) {
    if (doc.error) {
      fill($("page-steps"), el("p", {class: "note", text: "steps: " + doc.error}));
      return;
    }
    const ranks = stepsOf(doc, app.state.current);
    const names = Object.keys(ranks);
    const section = $("page-steps");
    if (!$("steps-charts")) {
      fill(section, el("p", {class: "hint", text: "Each bar is one step of one device; its segments are the `steps` table's parts. Click a segment for what it holds."}),
        el("div", {id: "steps-charts", class: "steps-ranks"}), el("div", {id: "steps-segment", class: "segment"}));
    }
    fill($("steps-charts"), names.map((n) => profilePanel(app, n, ranks[n], names.length === 1)));
    if (doc.stragglers && doc.stragglers.length) {
      $("steps-charts").append(el("p", {class: "note", text: `${doc.stragglers.length} straggler step(s): see the Ranks page`}));
    }
    fill($("steps-segment"));
  },
};
