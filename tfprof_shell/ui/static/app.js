// The page: a command box holding a literal shell line, the option sidebar generated
// from the options table, and the pages that show the line. The page's state (page,
// line, table order, compare threshold) is the URL; each new view is a history entry,
// and a line the shell refuses changes nothing but the status line.

import {get, post, run} from "./api.js";
import {renderChips} from "./chips.js";
import {buildControls} from "./controls.js";
import {el, fill} from "./dom.js";
import * as L from "./line.js";
import {ViewTree} from "./model.js";
import {ADVISE, COMPARE, OVERVIEW, RANKS} from "./pages.js";
import {KERNELS} from "./kernels.js";
import {STEPS} from "./steps.js";
import {FLAME, TIMELINE, VIEWS} from "./viewpages.js";

export const VIEW_COMMANDS = ["scope", "graph", "op", "code"];
const $ = (id) => document.getElementById(id);

/** The pages, in tab order: name -> {title, lineFor(line), load(line), show(data)}.
 * A new page is one more entry (registerPage); its section is made if index.html
 * has none. */
const PAGES = new Map();

export function registerPage(name, page) {
  PAGES.set(name, page);
}

for (const [name, page] of [["overview", OVERVIEW], ["views", VIEWS], ["flame", FLAME],
  ["timeline", TIMELINE], ["steps", STEPS], ["kernels", KERNELS], ["compare", COMPARE],
  ["ranks", RANKS], ["advise", ADVISE]]) registerPage(name, page);

export const app = {
  page: "overview",
  line: "scope",
  sort: "",
  threshold: 0,
  state: null,
  controls: null,
  tables: {},
  /** The last line each page showed (a tab keeps its own line when others change it). */
  lines: {},
  /** Last painted view: {page, line, ms} (browser tests and the benchmark read it). */
  painted: null,
  typed: [],
};
window.tfprofApp = app;

// -- status line ------------------------------------------------------------------

export function status(text, kind = "note") {
  const node = $("status");
  node.className = kind;
  node.textContent = text;
}

export function showOutput(text) {
  $("output").textContent = text;
  $("output-panel").hidden = !text;
}

/** Run a view line and return its tree; notes go to the status line. */
export async function runView(line, text = false) {
  status("running: " + line, "busy");
  const answer = await run(line, text);
  const notes = answer.notes.length ? " — " + answer.notes.join("; ") : "";
  status(`${line}: ${answer.rows} rows${notes}`, "note");
  const tree = new ViewTree(answer);
  const cur = app.state && app.state.profiles.find((p) => p.current);
  if (cur && cur.vocabulary === "framework") tree.rootLabel = "total";
  return {tree, answer};
}

/** Run a steps or kernels line for its JSON document. */
export async function runDocument(line) {
  status("running: " + line, "busy");
  const answer = await post("/api/run", {line, document: true});
  status(line + (answer.notes.length ? ": " + answer.notes.join("; ") : ""), "note");
  return answer.document;
}

// -- navigation --------------------------------------------------------------------

function section(name) {
  let node = $("page-" + name);
  if (!node) {
    node = el("section", {id: "page-" + name, class: "page", hidden: true});
    $("pages").append(node);
  }
  return node;
}

function urlOf(s) {
  const params = new URLSearchParams({page: s.page, line: s.line});
  if (s.sort) params.set("sort", s.sort);
  if (s.threshold) params.set("threshold", String(s.threshold));
  return "/?" + params.toString();
}

function current() {
  return {page: app.page, line: app.line, sort: app.sort, threshold: app.threshold};
}

let navigating = 0;

/**
 * Show `target` ({page, line, sort, threshold}; missing parts stay as they are).
 * The page's data is fetched first: if the shell refuses the line, the status line
 * says why and the page, the URL and the command box keep the last good view.
 * push: a new history entry (false: replace, for Back/Forward and reloads).
 */
export async function navigate(target, {push = true} = {}) {
  const next = {...current(), ...target};
  const page = PAGES.get(next.page) || PAGES.get("views");
  if (!PAGES.has(next.page)) next.page = "views";
  next.line = (page.lineFor(next.line.trim(), app) ?? next.line).trim();
  if (target.page !== undefined && target.page !== app.page && target.sort === undefined) next.sort = "";
  const seq = ++navigating;
  const started = performance.now();
  let loaded;
  try {
    loaded = await page.load(next.line, app, next);
  } catch (e) {
    if (seq !== navigating) return false;
    status(e.message, "error");
    $("cmd").value = app.line;
    app.painted = {page: next.page, line: next.line, error: e.message};
    return false;
  }
  if (seq !== navigating) return false;
  if (loaded.line) next.line = loaded.line;
  const changed = next.page !== app.page || next.line !== app.line;
  Object.assign(app, next);
  app.lines[next.page] = next.line;
  const url = urlOf(next);
  if (push && changed) history.pushState(next, "", url);
  else history.replaceState(next, "", url);
  $("cmd").value = app.line;
  for (const b of document.querySelectorAll("#tabs button")) {
    b.classList.toggle("active", b.dataset.page === app.page);
  }
  for (const s of document.querySelectorAll(".page")) s.hidden = s.id !== "page-" + app.page;
  section(app.page).hidden = false;
  buildControls($("controls"), app, (line) => navigate({line}));
  renderChips($("chips"), app.line, (line) => navigate({line}));
  try {
    await page.show(loaded.data, app, next);
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    app.painted = {page: app.page, line: app.line, ms: performance.now() - started};
  } catch (e) {
    status(e.message, "error");
    app.painted = {page: app.page, line: app.line, error: e.message};
  }
  return true;
}

/** Keep a table order or threshold in the URL (not a new view: no history entry). */
export function remember(part) {
  Object.assign(app, part);
  history.replaceState(current(), "", urlOf(current()));
}

/** Re-show the current view (after set/use changed the session). */
export function refresh() {
  return navigate({}, {push: false});
}

// -- the command box and its completion --------------------------------------------

/** The page a typed line goes to: the current one if it shows such lines. */
function pageFor(line) {
  const cmd = L.command(line);
  const here = PAGES.get(app.page);
  if (here.accepts(cmd)) return app.page;
  for (const [name, page] of PAGES) if (page.home && page.home(cmd)) return name;
  return null;
}

async function submit() {
  const line = $("cmd").value.trim();
  $("completions").hidden = true;
  if (line && app.typed[app.typed.length - 1] !== line) app.typed.push(line);
  app.recall = app.typed.length;
  const page = pageFor(line);
  if (page) return navigate({page, line});
  try {
    const answer = await run(line);
    showOutput(answer.text || answer.notes.join("\n") || "(done)");
    status(line + (answer.notes.length ? ": " + answer.notes.join("; ") : ": done"), "note");
    $("cmd").value = app.line;
    await refreshState();
    if (["set", "use"].includes(L.command(line))) refresh();
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

function recall(step) {
  if (!app.typed.length) return;
  app.recall = Math.max(0, Math.min(app.typed.length, (app.recall ?? app.typed.length) + step));
  $("cmd").value = app.typed[app.recall] ?? app.line;
}

function wire() {
  fill($("tabs"), [...PAGES].map(([name, page]) => el("button", {
    "data-page": name, onclick: () => navigate({page: name}),
  }, page.title)));
  const box = $("cmd");
  box.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); submit(); }
    else if (e.key === "Escape") $("completions").hidden = true;
    else if (e.key === "Tab") { e.preventDefault(); complete(); }
    else if (e.key === "ArrowUp") { e.preventDefault(); recall(-1); }
    else if (e.key === "ArrowDown") { e.preventDefault(); recall(1); }
  });
  box.addEventListener("input", () => { clearTimeout(app.completeTimer); app.completeTimer = setTimeout(complete, 150); });
  box.addEventListener("blur", () => setTimeout(() => { $("completions").hidden = true; }, 150));
  $("run").addEventListener("click", submit);
  $("copy").addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(location.href));
  $("output-close").addEventListener("click", () => showOutput(""));
  document.addEventListener("click", (e) => { if (!$("menu").contains(e.target)) $("menu").hidden = true; });
  $("preset").addEventListener("change", (e) => {
    const preset = app.controls.presets.find((p) => p.name === e.target.value);
    if (!preset) return;
    let line = L.words(app.line)[0] || "scope";
    for (let k = 0; k < preset.tokens.length; k += 2) {
      line = L.withOption(line, preset.tokens[k].slice(1), preset.tokens[k + 1]);
    }
    navigate({line});
  });
  window.addEventListener("popstate", (e) => {
    const s = e.state || stateOf(location.search);
    navigate(s, {push: false});
  });
  for (const page of PAGES.values()) if (page.wire) page.wire(app);
}

function stateOf(search) {
  const params = new URLSearchParams(search);
  const page = PAGES.has(params.get("page")) ? params.get("page") : "overview";
  return {page, line: params.get("line") || PAGES.get(page).lineFor("scope", app) || "scope",
    sort: params.get("sort") || "", threshold: Number(params.get("threshold")) || 0};
}

async function start() {
  Object.assign(app, {runView, runDocument, status, showOutput, refreshState, navigate, remember,
    VIEW_COMMANDS});
  wire();
  try {
    [app.controls] = await Promise.all([get("/api/controls"), refreshState()]);
  } catch (e) {
    status(e.message, "error");
    return;
  }
  fill($("preset"), app.controls.presets.map((p) => el("option", {value: p.name, title: p.help}, p.name)));
  const first = stateOf(location.search);
  app.page = first.page;
  const ok = await navigate(first, {push: false});
  if (!ok && first.page !== "overview") await navigate({page: "overview", line: "scope"}, {push: false});
}

start();
