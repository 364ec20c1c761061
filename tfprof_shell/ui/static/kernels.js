// The Kernels page: `kernels -output json` as a sortable, searchable table (a short
// name beside the full one), and for a clicked kernel its launch configurations and
// the ops that launched it (from the trace), with the shell line that accounts them.

import {post} from "./api.js";
import {el, fill, highlighted} from "./dom.js";
import {kernelShort, middle, time} from "./format.js";
import * as L from "./line.js";

const $ = (id) => document.getElementById(id);
const COLUMNS = [
  ["name", "name", (k) => kernelShort(k.name).toLowerCase()], ["kind", "kind", (k) => k.kind],
  ["count", "count", (k) => k.count], ["total", "total", (k) => k.total],
  ["mean", "mean", (k) => k.mean], ["min", "min", (k) => k.min], ["max", "max", (k) => k.max],
  ["share", "share", (k) => k.share],
];
const CONFIG_LABELS = {grid: "grid", block: "block", registers: "registers/thread",
  shared_memory: "shared memory (B)", static_shared_memory: "static shared (B)",
  dynamic_shared_memory: "dynamic shared (B)", blocks_per_sm: "blocks/SM", warps_per_sm: "warps/SM",
  occupancy_pct: "achieved occupancy %", theoretical_occupancy_pct: "theoretical occupancy %"};

/** The line that lists the ops a kernel ran under (the shell's op view, accounted by
 * the kernel's op type). */
export function launchingOpsLine(name) {
  return `op -account_type_regexes ${L.exactRegex("kernel:" + name)} -select accelerator_micros,occurrence -order_by accelerator_micros`;
}

function sorted(kernels, sort) {
  const [id, dir] = sort ? [sort.slice(0, sort.lastIndexOf(":")), Number(sort.slice(sort.lastIndexOf(":") + 1)) < 0 ? -1 : 1] : ["total", -1];
  const col = COLUMNS.find((c) => c[0] === id) || COLUMNS[3];
  const key = col[2];
  return {rows: kernels.slice().sort((a, b) => (key(a) < key(b) ? -dir : key(a) > key(b) ? dir : 0)), id: col[0], dir};
}

function render(app) {
  const doc = app.kernelsDoc;
  const q = $("k-search").value.trim().toLowerCase();
  const shown = doc.kernels.filter((k) => !q || k.name.toLowerCase().includes(q));
  const {rows, id, dir} = sorted(shown, app.sort);
  $("k-found").textContent = `${shown.length} of ${doc.kernels.length} kernel names` +
    ` (${doc.device === "all" ? "all devices" : doc.device}, ${doc.step >= 0 ? "step " + doc.step : "all steps"})`;
  const head = el("tr", {}, COLUMNS.map(([c, label]) => el("th", {class: "sortable" + (c === "name" || c === "kind" ? "" : " num"),
    "data-col": c, onclick: () => {
      const next = `${c}:${c === id ? -dir : (c === "name" || c === "kind" ? 1 : -1)}`;
      app.remember({sort: next});
      render(app);
    }}, label + (c === id ? (dir > 0 ? " \u25b2" : " \u25bc") : ""))));
  fill($("k-table"), el("table", {class: "kernels"}, head, rows.map((k) => el("tr", {class: "k-row",
    onclick: (e) => select(app, k, e.currentTarget)},
  el("td", {class: "k-name", title: k.name}, highlighted(middle(kernelShort(k.name), 60), q),
    el("div", {class: "k-full"}, highlighted(middle(k.name, 90), q))),
  el("td", {text: k.kind}), el("td", {class: "num", text: String(k.count)}),
  el("td", {class: "num", text: time(k.total)}), el("td", {class: "num", text: time(k.mean)}),
  el("td", {class: "num", text: time(k.min)}), el("td", {class: "num", text: time(k.max)}),
  el("td", {class: "num", text: (100 * k.share).toFixed(1) + "%"})))));
}

async function select(app, k, row) {
  for (const r of document.querySelectorAll("#k-table tr.selected")) r.classList.remove("selected");
  if (row) row.classList.add("selected");
  const node = $("k-details");
  const line = launchingOpsLine(k.name);
  fill(node, el("h3", {class: "dname", text: kernelShort(k.name)}), el("p", {class: "k-fullname", text: k.name}),
    el("p", {class: "note", text: "looking up its launches…"}));
  let facts, ops;
  try {
    [facts, ops] = await Promise.all([post("/api/kernel", {name: k.name}), app.runView(line).catch(() => null)]);
  } catch (e) {
    node.append(el("p", {class: "error", text: e.message}));
    return;
  }
  const kv = (a, b) => el("tr", {}, el("th", {text: a}), el("td", {text: b}));
  const configs = facts.configs.map((c) => el("table", {class: "kv config"},
    kv("launches", String(c.count)),
    Object.entries(c.config).map(([key, v]) => kv(CONFIG_LABELS[key] || key, Array.isArray(v) ? v.join(" \u00d7 ") : String(v)))));
  const traced = facts.ops.length ? el("table", {class: "small"},
    el("tr", {}, ["launched by op (trace)", "launches", "kernel time"].map((h) => el("th", {text: h}))),
    facts.ops.map((o) => el("tr", {class: "k-op"}, el("td", {text: middle(o.name, 80), title: o.name}),
      el("td", {text: String(o.count)}), el("td", {text: time(Math.round(o.time / 1000))})))) : null;
  let viewOps = null;
  if (ops) {
    const t = ops.tree, a = t.attrs[0];
    viewOps = el("ul", {class: "plain"}, t.children[0].map((i) => el("li", {text: `${t.name(i)}: ${time(t.total(a, i))}`})));
  }
  fill(node, el("h3", {class: "dname", text: kernelShort(k.name)}), el("p", {class: "k-fullname", text: k.name}),
    el("table", {class: "kv"}, kv("kind", k.kind), kv("launches", String(k.count)), kv("total", time(k.total)),
      kv("mean / min / max", `${time(k.mean)} / ${time(k.min)} / ${time(k.max)}`)),
    el("h4", {text: facts.traced ? "launch configuration (as the trace records it)" : "launch configuration: this profile has no trace of events"}),
    configs.length ? configs : el("p", {class: "note", text: "none recorded"}),
    traced,
    el("h4", {text: "ops accounted with it (the shell's op view)"}), viewOps,
    el("a", {href: "#", class: "line-link", title: line, onclick: (e) => { e.preventDefault(); app.navigate({page: "views", line}); }}, "open: " + line));
}

export const KERNELS = {
  title: "Kernels",
  accepts: (cmd) => cmd === "kernels",
  home: (cmd) => cmd === "kernels",
  lineFor: (line, app) => L.command(line) === "kernels" ? line : (app.lines.kernels || "kernels"),
  async load(line, app) {
    try {
      return {data: await app.runDocument(line)};
    } catch (e) {
      if (line !== "kernels") throw e;  // a typed line the shell refuses changes nothing
      return {data: {kernels: [], step: -1, device: "all", error: e.message}};
    }
  },
  show(doc, app) {
    const section = $("page-kernels");
    if (!$("k-table")) {
      fill(section, el("div", {class: "toolbar"},
        el("input", {id: "k-search", placeholder: "search kernel names", "aria-label": "search kernel names",
          oninput: () => render(app)}), el("span", {id: "k-found"})),
      el("div", {class: "split"}, el("div", {id: "k-table", class: "k-host"}), el("aside", {id: "k-details", class: "details k-details"})));
    }
    app.kernelsDoc = doc;
    if (doc.error) app.status("kernels: " + doc.error, "note");
    fill($("k-details"), el("p", {class: "hint", text: "Click a kernel for its launch configuration and the ops that launched it."}));
    render(app);
  },
};
