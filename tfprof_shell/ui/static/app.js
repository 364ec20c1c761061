// The page: a command box holding a literal shell line, the option sidebar
// generated from the options table, and the pages that show the line.

import {get, post, run} from "./api.js";
import {buildControls} from "./controls.js";
import {el, fill} from "./dom.js";
import {FlameGraph} from "./flame.js";
import * as L from "./line.js";
import {ViewTree} from "./model.js";
import {showAdvise, showCompare, showOverview, showRanks} from "./pages.js";
import {showDetails} from "./details.js";
import {TreeTable} from "./table.js";
import {Timeline} from "./timeline.js";

const VIEWS = ["scope", "graph", "op", "code"];
const $ = (id) => document.getElementById(id);

export const app = {
  page: "views",
  line: "scope",
  state: null,
  controls: null,
  tables: {},
  /** Last painted view: {page, line, ms} (browser tests and the benchmark read it). */
  painted: null,
};
window.tfprofApp = app;

// -- status line ------------------------------------------------------------

export function status(text, kind = "note") {
  const node = $("status");
  node.className = kind;
  node.textContent = text;
}

export function showOutput(text) {
  $("output").textContent = text;
  $("output-panel").hidden = !text;
}

// -- the line ----------------------------------------------------------------

/** Make `line` the page's line (URL, box, sidebar) and show it on the current page. */
export function setLine(line, page) {
  app.line = line.trim();
  if (page) app.page = page;
  $("cmd").value = app.line;
  const params = new URLSearchParams({page: app.page, line: app.line});
  history.replaceState(null, "", "/?" + params.toString());
  for (const b of document.querySelectorAll("#tabs button")) {
    b.classList.toggle("active", b.dataset.page === app.page);
  }
  buildControls($("controls"), app, setLine);
  return showPage();
}

function viewLine() {
  const cmd = L.command(app.line);
  return VIEWS.includes(cmd) ? app.line : "scope";
}

async function showPage() {
  for (const section of document.querySelectorAll(".page")) {
    section.hidden = section.id !== "page-" + app.page;
  }
  const started = performance.now();
  try {
    await PAGES[app.page]();
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    app.painted = {page: app.page, line: app.line, ms: performance.now() - started};
  } catch (e) {
    status(e.message, "error");
    app.painted = {page: app.page, line: app.line, error: e.message};
  }
}

/** Run a view line and return its tree; notes go to the status line. */
export async function runView(line, text = false) {
  status("running: " + line, "busy");
  const answer = await run(line, text);
  const notes = answer.notes.length ? " — " + answer.notes.join("; ") : "";
  status(`${line}: ${answer.rows} rows${notes}`, "note");
  return {tree: new ViewTree(answer), answer};
}

// -- pages --------------------------------------------------------------------

const PAGES = {
  overview: () => showOverview(app, setLine),
  views: showViews,
  flame: showFlame,
  timeline: showTimeline,
  compare: () => showCompare(app, setLine, table("cmp-table")),
  ranks: () => showRanks(app, setLine, table("rk-table")),
  advise: () => showAdvise(app, setLine),
};

/** The tree-table living in element `id` (made once). */
export function table(id) {
  if (!app.tables[id]) {
    app.tables[id] = new TreeTable($(id), {
      onSelect: (row) => { if (id === "views-table") showDetails($("details"), app, row); },
      onMenu: (row, x, y) => rowMenu(app.tables[id], row, x, y),
    });
  }
  return app.tables[id];
}

async function showViews() {
  const line = viewLine();
  if (line !== app.line) app.line = line;
  const wantText = $("views-text").checked;
  const {tree, answer} = await runView(line, wantText);
  const t = table("views-table");
  t.setTree(tree, 2);
  app.viewTree = tree;
  $("views-textout").hidden = !wantText;
  $("views-textout").textContent = answer.text || "";
  fill($("details"), el("p", {class: "hint", text: "Click a row for its details; right-click (or \u22ef) for focus, hide, trim and accounting."}));
  const q = $("views-search").value;
  if (q) $("views-found").textContent = `${t.search(q)} found`;
}

let flame = null;

async function showFlame() {
  const cmd = L.command(app.line);
  const view = cmd === "code" ? "code" : "scope";
  $("flame-view").value = view;
  const line = cmd === view ? app.line : L.withCommand(app.line, view);
  const {tree} = await runView(line);
  if (!flame) flame = new FlameGraph($("flame"));
  flame.setInverted($("flame-inverted").checked);
  flame.setTree(tree);
  const q = $("flame-search").value;
  $("flame-found").textContent = q ? `${flame.search(q)} found` : "";
}

let timeline = null;

async function showTimeline() {
  // The graph view gives the per-device schedule (all steps end to end unless the
  // line has -step N); code keeps its stacked call tree.
  let line = viewLine();
  if (L.command(line) !== "code") line = L.withCommand(line, "graph");
  if (!timeline) {
    timeline = new Timeline($("timeline"), {
      onNote: (text) => { $("tl-note").textContent = text; },
      onError: (text) => status(text, "error"),
    });
  }
  $("tl-download").href = "/api/trace?" + new URLSearchParams({line}).toString();
  status("timeline of: " + line, "note");
  await timeline.load(line);
}

// -- row menu -------------------------------------------------------------------

function rowMenu(t, row, x, y) {
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
    onclick: () => { menu.hidden = true; setLine(edit(app.line)); },
  }, label)));
  menu.style.left = Math.min(x, window.innerWidth - 300) + "px";
  menu.style.top = Math.min(y, window.innerHeight - 180) + "px";
  menu.hidden = false;
}

// -- the command box and its completion ----------------------------------------

async function submit() {
  const line = $("cmd").value.trim();
  $("completions").hidden = true;
  const cmd = L.command(line);
  if (VIEWS.includes(cmd)) {
    const page = ["views", "flame", "timeline", "compare", "ranks"].includes(app.page) ? app.page : "views";
    return setLine(line, page);
  }
  if (cmd === "advise") return setLine(line, "advise");
  try {
    const answer = await run(line);
    showOutput(answer.text || answer.notes.join("\n") || "(done)");
    status(line + (answer.notes.length ? ": " + answer.notes.join("; ") : ": done"), "note");
    await refreshState();
    if (["set", "use"].includes(cmd)) setLine(app.line);
  } catch (e) {
    status(e.message, "error");
  }
}

let completing = 0;

async function complete() {
  const box = $("cmd");
  const text = box.value.slice(0, box.selectionStart);
  const seq = ++completing;
  let found = [];
  try {
    found = await post("/api/complete", {text});
  } catch (e) {
    return;
  }
  if (seq !== completing) return;
  const list = $("completions");
  fill(list, found.slice(0, 50).map((c) => el("li", {
    onmousedown: (e) => {
      e.preventDefault();
      const before = text.slice(0, text.length - c.length) + c.text;
      box.value = before + box.value.slice(box.selectionStart);
      box.setSelectionRange(before.length, before.length);
      list.hidden = true;
      box.focus();
    },
  }, el("span", {class: "c-text", text: c.display}), el("span", {class: "c-meta", text: c.meta}))));
  list.hidden = !found.length;
}

export async function refreshState() {
  app.state = await get("/api/state");
  const cur = app.state.profiles.find((p) => p.current);
  $("profile-info").textContent = `${app.state.profiles.length} profile${app.state.profiles.length > 1 ? "s" : ""}; current: ${cur.name} (${cur.kind})`;
}

function wire() {
  for (const b of document.querySelectorAll("#tabs button")) {
    b.addEventListener("click", () => setLine(app.line, b.dataset.page));
  }
  const box = $("cmd");
  box.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); submit(); }
    else if (e.key === "Escape") $("completions").hidden = true;
    else if (e.key === "Tab") { e.preventDefault(); complete(); }
  });
  box.addEventListener("input", () => { clearTimeout(app.completeTimer); app.completeTimer = setTimeout(complete, 150); });
  box.addEventListener("blur", () => setTimeout(() => { $("completions").hidden = true; }, 150));
  $("run").addEventListener("click", submit);
  $("copy").addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(box.value));
  $("output-close").addEventListener("click", () => showOutput(""));
  document.addEventListener("click", (e) => { if (!$("menu").contains(e.target)) $("menu").hidden = true; });
  $("views-search").addEventListener("change", (e) => {
    const found = table("views-table").search(e.target.value);
    $("views-found").textContent = `${found} found` + (found > 5000 ? " (the first 5000 opened)" : "");
  });
  $("views-next").addEventListener("click", () => table("views-table").nextMatch(1));
  $("views-prev").addEventListener("click", () => table("views-table").nextMatch(-1));
  $("views-expand").addEventListener("click", () => table("views-table").expandAll());
  $("views-text").addEventListener("change", () => showPage());
  $("flame-view").addEventListener("change", (e) => setLine(L.withCommand(app.line, e.target.value)));
  $("flame-search").addEventListener("change", (e) => {
    if (flame) $("flame-found").textContent = `${flame.search(e.target.value)} found`;
  });
  $("flame-inverted").addEventListener("change", (e) => flame && flame.setInverted(e.target.checked));
  $("flame-reset").addEventListener("click", () => flame && flame.zoom(0));
  $("tl-in").addEventListener("click", () => timeline && timeline.zoom(1 / 2));
  $("tl-out").addEventListener("click", () => timeline && timeline.zoom(2));
  $("tl-reset").addEventListener("click", () => timeline && timeline.reset());
  $("preset").addEventListener("change", (e) => {
    const preset = app.controls.presets.find((p) => p.name === e.target.value);
    if (!preset) return;
    let line = L.words(app.line)[0] || "scope";
    for (let k = 0; k < preset.tokens.length; k += 2) {
      line = L.withOption(line, preset.tokens[k].slice(1), preset.tokens[k + 1]);
    }
    setLine(line);
  });
}

async function start() {
  Object.assign(app, {runView, status, showOutput, refreshState});
  wire();
  try {
    [app.controls] = await Promise.all([get("/api/controls"), refreshState()]);
  } catch (e) {
    status(e.message, "error");
    return;
  }
  fill($("preset"), app.controls.presets.map((p) => el("option", {value: p.name, title: p.help}, p.name)));
  const params = new URLSearchParams(location.search);
  const page = PAGES[params.get("page")] ? params.get("page") : "overview";
  setLine(params.get("line") || "scope", page);
}

start();
