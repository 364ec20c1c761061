// The pages that show a view line: Views (the tree-table), Flame and Timeline.
// Each page: lineFor(line) picks the line it shows, load(line) fetches (and throws on
// a line the shell refuses, before anything on screen changes), show(data) draws.

import {post} from "./api.js";
import {showDetails} from "./details.js";
import {el, fill} from "./dom.js";
import {FlameGraph, sandwichTrees} from "./flame.js";
import {forUnit, nanos, percent} from "./format.js";
import * as L from "./line.js";
import {TreeTable} from "./table.js";
import {Timeline} from "./timeline.js";

const VIEW_COMMANDS = ["scope", "graph", "op", "code"];
const TIME_ATTRS = ["micros", "accelerator_micros", "cpu_micros"];
const $ = (id) => document.getElementById(id);
const isView = (cmd) => VIEW_COMMANDS.includes(cmd);

/** The tree-table living in element `id` (made once); its order goes to the URL. */
export function table(app, id) {
  if (!app.tables[id]) {
    app.tables[id] = new TreeTable($(id), {
      onSelect: (row) => { if (id === "views-table") showDetails($("details"), app, row); },
      onMenu: (row, x, y) => rowMenu(app, app.tables[id], row, x, y),
      onSort: (sort) => app.remember({sort}),
    });
  }
  return app.tables[id];
}

function rowMenu(app, t, row, x, y) {
  const tree = t.tree;
  const name = tree.name(row);
  const exact = L.exactRegex(name);
  const op = tree.answer.view === "op" ? name : tree.op(row);
  const items = [
    ["Focus: start the display here", (l) => L.addRegex(l, "start_name_regexes", exact, true)],
    ["Show only this name", (l) => L.addRegex(l, "show_name_regexes", exact, true)],
    ["Hide this name", (l) => L.addRegex(l, "hide_name_regexes", exact, false)],
    ["Trim: do not descend below it", (l) => L.addRegex(l, "trim_name_regexes", exact, false)],
  ];
  if (op) items.push([`Account only op type ${op}`, (l) => L.withOption(l, "account_type_regexes", L.exactRegex(op))]);
  const menu = $("menu");
  fill(menu, items.map(([label, edit]) => el("button", {
    onclick: () => { menu.hidden = true; app.navigate({line: edit(app.line)}); },
  }, label)));
  menu.style.left = Math.min(x, window.innerWidth - 300) + "px";
  menu.style.top = Math.min(y, window.innerHeight - 180) + "px";
  menu.hidden = false;
}

/** "118 more op types below -max_depth (55% of micros): show them" under an op view. */
function moreRow(app, tree, answer) {
  const more = answer.more;
  const node = $("views-more");
  if (!more || !more.rows) {
    node.hidden = true;
    return;
  }
  const a = tree.attrs[0], fmt = forUnit(answer.units[a]);
  const left = more.total[a] || 0, all = tree.total(a, 0);
  const shown = tree.n - 1;
  fill(node, `${more.rows} more op type${more.rows === 1 ? "" : "s"} below the ${shown} shown ` +
    `(-max_depth ${L.option(app.line, "max_depth") ?? "default"}): ${fmt(left)}, ${percent(left, all)} of ${a}. `,
  el("a", {href: "#", onclick: (e) => {
    e.preventDefault();
    app.navigate({line: L.withOption(app.line, "max_depth", String(shown + more.rows))});
  }}, "show all"));
  node.hidden = false;
}

export const VIEWS = {
  title: "Views",
  accepts: isView,
  home: isView,
  lineFor: (line, app) => isView(L.command(line)) ? line : (app.lines.views || "scope"),
  async load(line, app) {
    return {data: await app.runView(line, $("views-text").checked)};
  },
  show({tree, answer}, app) {
    const t = table(app, "views-table");
    t.setTree(tree, 2);
    if (app.sort) t.setSort(app.sort);
    app.viewTree = tree;
    moreRow(app, tree, answer);
    $("views-textout").hidden = !$("views-text").checked;
    $("views-textout").textContent = answer.text || "";
    fill($("details"), el("p", {class: "hint", text: "Click a row for its details; right-click (or \u22ef) for focus, hide, trim and accounting."}));
    const q = $("views-search").value;
    if (q) $("views-found").textContent = `${t.search(q)} found`;
  },
  wire(app) {
    $("views-search").addEventListener("change", (e) => {
      const found = table(app, "views-table").search(e.target.value);
      $("views-found").textContent = `${found} found` + (found > 5000 ? " (the first 5000 opened)" : "");
    });
    $("views-next").addEventListener("click", () => table(app, "views-table").nextMatch(1));
    $("views-prev").addEventListener("click", () => table(app, "views-table").nextMatch(-1));
    $("views-expand").addEventListener("click", () => table(app, "views-table").expandAll());
    $("views-text").addEventListener("change", () => app.navigate({}, {push: false}));
  },
};

// -- Flame ------------------------------------------------------------------------------

let flame = null;

/** The attribute the flame graph measures: the line's -order_by if it is a time, else
 * the first selected one. */
function flameAttr(tree, line) {
  const order = L.option(line, "order_by");
  return order && tree.attrs.includes(order) ? order : tree.attrs[0];
}

export const FLAME = {
  title: "Flame",
  accepts: (cmd) => cmd === "scope" || cmd === "code",
  home: () => false,
  lineFor(line, app) {
    const cmd = L.command(line);
    if (cmd === "scope" || cmd === "code") return line;
    if (isView(cmd)) return L.withCommand(line, "scope");
    return app.lines.flame || "scope";
  },
  async load(line, app, next) {
    const {tree, answer} = await app.runView(line);
    let starts = null;
    if (next.sort === "time" && tree.kind === "single") {
      starts = (await post("/api/run", {line, starts: true})).start;
    }
    return {data: {tree, answer, starts}};
  },
  show({tree, starts}, app) {
    if (!flame) app.flame = flame = new FlameGraph($("flame"), {onSelect: (row) => showSandwich(app, row)});
    $("flame-view").value = L.command(app.line);
    const attr = flameAttr(tree, app.line);
    $("flame-metric").value = TIME_ATTRS.includes(attr) ? attr : "";
    $("flame-order").value = app.sort === "time" ? "time" : "";
    $("flame-order").disabled = tree.kind !== "single";
    flame.setInverted($("flame-inverted").checked);
    flame.setTree(tree, attr, starts);
    fill($("flame-legend"), flame.legend());
    fill($("flame-sandwich"));
    const q = $("flame-search").value;
    $("flame-found").textContent = q ? `${flame.search(q)} found` : "";
  },
  wire(app) {
    $("flame-view").addEventListener("change", (e) => app.navigate({line: L.withCommand(app.line, e.target.value)}));
    $("flame-metric").addEventListener("change", (e) => {
      const attr = e.target.value;
      let line = L.withOption(app.line, "order_by", attr);
      const select = (L.option(line, "select") || "micros").split(",");
      if (!select.includes(attr)) line = L.withOption(line, "select", [...select, attr].join(","));
      app.navigate({line});
    });
    $("flame-order").addEventListener("change", (e) => app.navigate({sort: e.target.value}));
    $("flame-search").addEventListener("change", (e) => {
      if (flame) $("flame-found").textContent = `${flame.search(e.target.value)} found`;
    });
    $("flame-inverted").addEventListener("change", (e) => flame && flame.setInverted(e.target.checked));
    $("flame-reset").addEventListener("click", () => flame && flame.zoom(0));
  },
};

/** Callers and callees of the clicked frame's name, each merged over every place it runs. */
function showSandwich(app, row) {
  const tree = flame.tree;
  if (!tree || row <= 0) {
    fill($("flame-sandwich"));
    return;
  }
  const {callers, callees, count} = sandwichTrees(tree, flame.attr, tree.name(row));
  const up = new FlameGraph(el("div"), {});
  const down = new FlameGraph(el("div"), {});
  fill($("flame-sandwich"),
    el("h3", {text: `Sandwich of ${tree.name(row)} (${count} place${count === 1 ? "" : "s"} in the tree)`}),
    el("h4", {text: "callers (what runs it, the frame at the bottom)"}), up.wrap,
    el("h4", {text: "callees (what it runs)"}), down.wrap);
  up.setInverted(true);
  up.setTree(callers, "v");
  down.setTree(callees, "v");
}

// -- Timeline -----------------------------------------------------------------------------

let timeline = null;

function timelineDetails(d) {
  const kv = (k, v) => el("tr", {}, el("th", {text: k}), el("td", {text: v}));
  const args = Object.entries(d.args || {}).map(([k, v]) => kv(k, Array.isArray(v) ? v.join(" \u00d7 ") : String(v)));
  const stack = (d.stack || []).map((s) => s.name);
  const parts = [el("h3", {class: "dname", text: d.name}), el("table", {class: "kv"},
    kv("lane", d.lane_name), kv("category", d.category || "-"), kv("start", nanos(d.start)),
    kv("duration", nanos(d.dur)), args)];
  if (stack.length) parts.push(el("h4", {text: "inside"}), el("ol", {class: "plain"}, stack.map((n) => el("li", {text: n}))));
  if (d.flow) {
    const f = d.flow;
    const ops = (f.stack || []).filter((s) => s.category === "cpu_op").map((s) => s.name);
    parts.push(el("h4", {text: f.kind === "host" ? "launched by" : "launches"}),
      el("table", {class: "kv"}, kv("name", f.name), kv("lane", f.lane_name), kv("start", nanos(f.start)),
        kv("duration", nanos(f.dur)), f.kind === "host" ? kv("delay to start", nanos(d.start - f.start)) : null,
        ops.length ? kv("op", ops[ops.length - 1]) : null));
    if ((f.stack || []).length) parts.push(el("h4", {text: "launched inside"}), el("ol", {class: "plain"}, f.stack.map((s) => el("li", {text: s.name}))));
  }
  fill($("tl-details"), parts);
}

function rangeTable(answer) {
  const head = el("tr", {}, ["name", "lane kind", "slices", "time in range", "total time"].map((h) => el("th", {text: h})));
  fill($("tl-range"), el("p", {class: "note", text:
    `${nanos(answer.t1 - answer.t0)} selected: ${answer.slices} slices of ${answer.names} names on ${answer.lanes} lanes` +
    (answer.names > answer.rows.length ? ` (the ${answer.rows.length} largest shown)` : "")}),
  el("button", {onclick: () => timeline.zoomToRange()}, "Zoom to the range"),
  el("table", {class: "small agg-table"}, head, answer.rows.map((r) => el("tr", {class: "agg"},
    el("td", {text: r.name, title: r.name}), el("td", {text: r.kind}), el("td", {text: String(r.count)}),
    el("td", {text: nanos(r.inside)}), el("td", {text: nanos(r.total)})))));
}

export const TIMELINE = {
  title: "Timeline",
  accepts: isView,
  home: () => false,
  lineFor(line, app) {
    // the graph view's schedule (or the code view's stack) where the profile has no trace
    const cmd = L.command(line);
    if (cmd === "graph" || cmd === "code") return line;
    if (isView(cmd)) return L.withCommand(line, "graph");
    return app.lines.timeline || "graph";
  },
  async load(line, app) {
    if (!timeline) {
      app.timeline = timeline = new Timeline($("timeline"), {
        onNote: (text) => { $("tl-note").textContent = text; },
        onError: (text) => app.status(text, "error"),
        onSelect: timelineDetails,
        onRange: rangeTable,
      });
    }
    app.status("timeline of: " + line, "busy");
    await timeline.load(line);
    return {data: null};
  },
  show(_, app) {
    const d = timeline.data;
    const download = d.download || (L.command(app.line) === "code" ? app.line : "graph");
    $("tl-download").href = "/api/trace?" + new URLSearchParams({line: download}).toString();
    app.status(`timeline of ${d.source}: ${d.lanes.length} lanes`, "note");
    timeline.draw();
  },
  wire() {
    $("tl-in").addEventListener("click", () => timeline && timeline.zoom(1 / 2));
    $("tl-out").addEventListener("click", () => timeline && timeline.zoom(2));
    $("tl-reset").addEventListener("click", () => timeline && timeline.reset());
  },
};
