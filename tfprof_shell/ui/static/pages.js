// Overview, Compare, Ranks and Advise: each shows shell lines, and each list
// links back to the line that gives it.

import {get, run} from "./api.js";
import {el, fill, svg} from "./dom.js";
import {count, forUnit, signed, time} from "./format.js";
import * as L from "./line.js";
import {ViewTree} from "./model.js";

const $ = (id) => document.getElementById(id);

function lineLink(setLine, line, page, label) {
  return el("a", {href: "#", class: "line-link", title: line,
    onclick: (e) => { e.preventDefault(); setLine(line, page); }}, label || line);
}

function stepBars(steps, rows) {
  const w = Math.max(300, Math.min(900, steps.length * 24)), h = 120;
  const max = Math.max(1, ...rows.flatMap((r) => r.micros.filter((v) => v !== null)));
  const bw = w / Math.max(1, steps.length);
  const chart = svg("svg", {width: w, height: h + 16, class: "bars"});
  rows[0].micros.forEach((v, k) => {
    if (v === null) return;
    chart.append(svg("rect", {x: k * bw + 1, y: h - h * v / max, width: Math.max(1, bw - 2), height: h * v / max},
      svg("title", {text: `step ${steps[k]}: ${time(v)}`})));
  });
  chart.append(svg("text", {x: 0, y: h + 13, text: `steps ${steps[0]}..${steps[steps.length - 1]}, max ${time(max)}`}));
  return chart;
}

/** The top rows of an answer under the root, by total micros. */
function topRows(answer, k) {
  const tree = new ViewTree(answer);
  const a = tree.attrs[0];
  const rows = tree.children[0].slice().sort((x, y) => tree.total(a, y) - tree.total(a, x)).slice(0, k);
  return rows.map((i) => [tree.name(i), forUnit(answer.units[a])(tree.total(a, i))]);
}

function smallTable(rows) {
  return el("table", {class: "small"}, rows.map((r) => el("tr", {}, r.map((c) => el("td", {text: c})))));
}

export async function showOverview(app, setLine) {
  await app.refreshState();
  const profiles = app.state.profiles;
  fill($("ov-profiles"), el("table", {class: "small"},
    el("tr", {}, ["", "name", "format", "steps", "nodes", "total time", "source"].map((h) => el("th", {text: h}))),
    profiles.map((p) => el("tr", {}, el("td", {text: p.current ? "*" : ""}), el("td", {text: p.name}),
      el("td", {text: p.kind}), el("td", {text: p.steps.length ? `${p.steps.length} (${p.steps[0]}..${p.steps[p.steps.length - 1]})` : "none"}),
      el("td", {text: count(p.nodes)}), el("td", {text: time(p.micros)}), el("td", {text: p.paths.join(", ")})))));
  const current = profiles.find((p) => p.current);
  const steps = await get("/api/steps", {profiles: current.name});
  fill($("ov-steps"), steps.steps.length ? stepBars(steps.steps, steps.profiles) : el("p", {text: "no steps recorded"}),
    steps.notes.map((n) => el("p", {class: "note", text: n})));
  const hasSteps = app.state.commands.some((c) => c.name === "steps");
  $("ov-steps-text").hidden = !hasSteps;
  if (hasSteps) {
    run("steps").then((a) => { $("ov-steps-text").textContent = a.text; }, () => { $("ov-steps-text").hidden = true; });
  }
  const scopeLine = "scope -max_depth 2 -order_by micros";
  const opLine = "op -order_by micros";
  const [scopes, ops] = await Promise.all([run(scopeLine), run(opLine)]);
  fill($("ov-scopes"), smallTable(topRows(scopes, 10)), lineLink(setLine, scopeLine, "views", "open: " + scopeLine));
  fill($("ov-ops"), smallTable(topRows(ops, 10)), lineLink(setLine, opLine, "views", "open: " + opLine));
  fill($("ov-advice"), el("p", {class: "note", text: "running the advisor…"}));
  run("advise").then((a) => {
    fill($("ov-advice"), Object.entries(a.checkers).map(([name, reports]) => el("div", {class: "advice-sum"},
      el("strong", {text: `${name}: `}), `${reports.length} report${reports.length === 1 ? "" : "s"}`,
      reports.length ? el("div", {class: "clip", text: reports[0].split("\n")[0]}) : null)),
    lineLink(setLine, "advise", "advise", "open the Advise page"));
  }, (e) => fill($("ov-advice"), el("p", {class: "error", text: e.message})));
}

function options(select, values, chosen) {
  fill(select, values.map((v) => el("option", {value: v}, v)));
  select.value = chosen;
}

export async function showCompare(app, setLine, table) {
  const profiles = app.state.profiles;
  const current = profiles.find((p) => p.current);
  let line = L.command(app.line) && ["scope", "graph", "op", "code"].includes(L.command(app.line)) ? app.line : "scope";
  for (const name of ["profiles", "aggregate", "by_profile"]) line = L.withOption(line, name, "");
  const others = profiles.filter((p) => !p.current).map((p) => p.name);
  let base = L.option(line, "base");
  if (base === undefined) {
    // Another profile if there is one, else two steps of this one (-base itself).
    if (others.length) base = others[0];
    else if (current.steps.length > 1) {
      base = current.name;
      line = L.withOption(L.withOption(line, "step", current.steps[current.steps.length - 1]), "base_step", current.steps[0]);
    }
    if (base) line = L.withOption(line, "base", base);
  }
  options($("cmp-base"), ["none", ...profiles.map((p) => p.name)], base || "none");
  const baseProfile = profiles.find((p) => p.name === base) || current;
  options($("cmp-step"), ["-1", ...current.steps.map(String)], L.option(line, "step") || "-1");
  options($("cmp-base-step"), ["same", ...baseProfile.steps.map(String)], L.option(line, "base_step") || "same");
  $("cmp-base").onchange = (e) => setLine(L.withOption(line, "base", e.target.value), "compare");
  $("cmp-step").onchange = (e) => setLine(L.withOption(line, "step", e.target.value), "compare");
  $("cmp-base-step").onchange = (e) => setLine(L.withOption(line, "base_step", e.target.value === "same" ? "" : e.target.value), "compare");
  $("cmp-threshold").onchange = (e) => table.setThreshold(Number(e.target.value));
  if (line !== app.line) return setLine(line, "compare");
  if (!base || base === "none") {
    $("cmp-note").textContent = "Load a second profile (tfprof ui --profile NAME=PATH) or record two steps to compare.";
    return;
  }
  const {tree} = await app.runView(line);
  table.setTree(tree, 2);
  table.setThreshold(Number($("cmp-threshold").value));
  if (tree.kind !== "diff") {
    $("cmp-note").textContent = "this line is not a comparison";
    return;
  }
  const a = tree.attrs[0], fmt = forUnit(tree.answer.units[a]);
  const rows = Array.from({length: tree.n - 1}, (_, k) => k + 1);
  const leaves = rows.filter((i) => tree.children[i].length === 0 || tree.answer.view === "op");
  const ranked = leaves.slice().sort((x, y) => tree.delta(a, y) - tree.delta(a, x));
  const item = (i) => el("li", {}, el("span", {class: "badge " + (tree.status(i) === "+" ? "new" : tree.status(i) === "-" ? "gone" : ""),
    text: tree.status(i) === "+" ? "new" : tree.status(i) === "-" ? "gone" : ""}), " ", tree.name(i), " ",
  el("span", {class: tree.delta(a, i) > 0 ? "slower" : "faster", text: signed(tree.delta(a, i), fmt)}));
  fill($("cmp-slower"), el("ol", {}, ranked.filter((i) => tree.delta(a, i) > 0).slice(0, 10).map(item)));
  fill($("cmp-faster"), el("ol", {}, ranked.filter((i) => tree.delta(a, i) < 0).reverse().slice(0, 10).map(item)));
  const [now, was] = tree.answer.sides;
  $("cmp-note").textContent = `${now.name} (step ${now.step}) against ${was.name} (step ${was.step}): ` +
    `total ${fmt(tree.total(a, 0))} vs ${fmt(tree.base(a, 0))}, ${signed(tree.delta(a, 0), fmt)}`;
}

function heatmap(data) {
  const cell = 18, left = 160;
  const w = left + data.steps.length * cell, h = data.profiles.length * cell + 20;
  const all = data.profiles.flatMap((p) => p.micros.filter((v) => v !== null));
  const lo = Math.min(...all), hi = Math.max(...all);
  const chart = svg("svg", {width: Math.min(w, 4000), height: h, class: "heatmap"});
  data.profiles.forEach((p, r) => {
    chart.append(svg("text", {x: 0, y: r * cell + 13, text: p.name}));
    p.micros.forEach((v, c) => {
      const k = v === null ? 0 : hi > lo ? (v - lo) / (hi - lo) : 0.5;
      chart.append(svg("rect", {x: left + c * cell, y: r * cell, width: cell - 1, height: cell - 1,
        fill: v === null ? "#eee" : `rgb(255,${Math.round(240 - 190 * k)},${Math.round(220 - 200 * k)})`},
      svg("title", {text: `${p.name}, step ${data.steps[c]}: ${v === null ? "--" : time(v)}`})));
    });
  });
  chart.append(svg("text", {x: left, y: h - 4, text: `steps ${data.steps[0]}..${data.steps[data.steps.length - 1]}; darker is slower`}));
  return chart;
}

export async function showRanks(app, setLine, table) {
  const names = app.state.profiles.map((p) => p.name);
  let line = ["scope", "graph", "op", "code"].includes(L.command(app.line)) ? app.line : "scope";
  for (const name of ["base", "base_step"]) line = L.withOption(line, name, "");
  if (!L.option(line, "profiles")) line = L.withOption(line, "profiles", "all");
  line = L.withOption(line, "by_profile", "true");
  const chosenText = L.option(line, "profiles");
  const chosen = chosenText === "all" ? new Set(names) : new Set(chosenText.split(","));
  fill($("rk-profiles"), names.map((n) => {
    const box = el("input", {type: "checkbox", value: n, onchange: () => {
      const now = [...$("rk-profiles").querySelectorAll("input:checked")].map((b) => b.value);
      setLine(L.withOption(line, "profiles", now.length === names.length ? "all" : now.join(",") || "none"), "ranks");
    }});
    box.checked = chosen.has(n);
    return el("label", {}, box, n);
  }));
  const agg = app.controls.options.find((o) => o.name === "aggregate");
  options($("rk-aggregate"), agg.choices, L.option(line, "aggregate") || agg.default);
  $("rk-aggregate").onchange = (e) => setLine(L.withOption(line, "aggregate", e.target.value), "ranks");
  if (line !== app.line) return setLine(line, "ranks");
  if (names.length < 2) {
    $("rk-note").textContent = "One profile is loaded: load ranks with tfprof ui --profile_path=RANK_FOLDER or --profile NAME=PATH.";
  } else {
    $("rk-note").textContent = "";
  }
  const picked = names.filter((n) => chosen.has(n));
  const steps = await get("/api/steps", {profiles: picked.join(",")});
  fill($("rk-heatmap"), steps.steps.length ? heatmap(steps) : el("p", {text: "no steps recorded"}));
  const {tree} = await app.runView(line);
  table.setTree(tree, 2);
}

export async function showAdvise(app, setLine) {
  fill($("advice"), el("p", {class: "note", text: "running the advisor…"}));
  const line = L.command(app.line) === "advise" ? app.line : "advise";
  const [answer, ops] = await Promise.all([run(line), run("op -order_by micros")]);
  const opTypes = new ViewTree(ops);
  const known = new Set(Array.from({length: opTypes.n - 1}, (_, k) => opTypes.name(k + 1)));
  app.status(line + ": done", "note");
  fill($("advice"), Object.entries(answer.checkers).map(([name, reports]) => el("section", {class: "checker"},
    el("h2", {text: name}),
    reports.length ? reports.map((r) => {
      const words = [...new Set(r.split(/[^A-Za-z0-9_./:-]+/).filter((w) => known.has(w)))];
      return el("div", {class: "report"}, el("pre", {text: r}),
        words.map((w) => lineLink(setLine, `op -show_name_regexes ${L.exactRegex(w)}`, "views", `open op ${w}`)));
    }) : el("p", {class: "note", text: "no reports"}))));
}
