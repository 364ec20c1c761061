// The Ranks page: a view over the loaded profiles (ranks, workers, hosts) with each one's
// values, a rank x step heatmap of the `steps` table with each rank's breakdown, and the
// collectives matched across the ranks (collectives.js). Its line is the view line, or
// a `collectives` line (the view then is the last one shown, over the same profiles).

import {collectivesSection} from "./collectives.js";
import {el, fill, svg} from "./dom.js";
import {time} from "./format.js";
import * as L from "./line.js";
import {options} from "./pages.js";
import {profilePanel, stepsOf} from "./steps.js";
import {table} from "./viewpages.js";

const VIEW_COMMANDS = ["scope", "graph", "op", "code"];
const $ = (id) => document.getElementById(id);
const isView = (cmd) => VIEW_COMMANDS.includes(cmd);

function lineLink(app, line, page, label) {
  return el("a", {href: "#", class: "line-link", title: line,
    onclick: (e) => { e.preventDefault(); app.navigate({page, line}); }}, label || line);
}

/** Rank x step heatmap of step wall times with a colour scale. Where the steps document
 * names each step's straggler by its arrival at the collectives (`stragglers`, "by":
 * "arrival"), that rank is outlined; elsewhere the slowest rank of a step is, and ties
 * for the slowest are marked as ties, never as one slowest. */
export function heatmap(ranks, stragglers = []) {
  const byArrival = new Map(stragglers.filter((s) => s.by === "arrival").map((s) => [s.step, s.profile]));
  const names = Object.keys(ranks);
  const stepSet = new Set();
  for (const d of Object.values(ranks)) for (const s of d.steps) stepSet.add(s.step);
  const steps = [...stepSet].sort((a, b) => a - b);
  const wall = (n, step) => (ranks[n].steps.find((s) => s.step === step) || {}).wall ?? null;
  const all = names.flatMap((n) => steps.map((s) => wall(n, s))).filter((v) => v !== null);
  const lo = Math.min(...all), hi = Math.max(...all);
  const cell = 26, left = 150, top = 18;
  const w = left + steps.length * cell + 130, h = top + Math.max(names.length * cell, 70) + 6;
  const chart = svg("svg", {width: Math.min(w, 4000), height: h, class: "heatmap"});
  const colour = (v) => {
    const k = hi > lo ? (v - lo) / (hi - lo) : 0;
    return `rgb(${Math.round(250 - 40 * k)},${Math.round(245 - 175 * k)},${Math.round(235 - 200 * k)})`;
  };
  steps.forEach((s, c) => chart.append(svg("text", {x: left + c * cell + 4, y: 12, text: String(s)})));
  names.forEach((n, r) => {
    chart.append(svg("text", {x: 0, y: top + r * cell + 17, text: n}));
    steps.forEach((s, c) => {
      const v = wall(n, s);
      const column = names.map((m) => wall(m, s)).filter((x) => x !== null);
      const top1 = Math.max(...column);
      const ties = column.filter((x) => x === top1).length;
      const mark = byArrival.has(s) ? (byArrival.get(s) === n ? "slowest straggler" : "")
        : v !== null && v === top1 && column.length > 1 ? (ties > 1 ? "tie" : "slowest") : "";
      chart.append(svg("rect", {x: left + c * cell, y: top + r * cell, width: cell - 2, height: cell - 2,
        fill: v === null ? "#eee" : colour(v), class: "cell " + mark, "data-rank": n, "data-step": s, "data-us": v === null ? "" : v},
      svg("title", {text: `${n}, step ${s}: ${v === null ? "--" : time(v)}` + (mark === "slowest straggler" ? " (the straggler: last to arrive)"
        : mark === "slowest" ? " (slowest rank)" : mark === "tie" ? " (tied slowest)" : "")})));
    });
  });
  // the scale
  const sx = left + steps.length * cell + 16;
  for (let k = 0; k <= 10; k++) {
    chart.append(svg("rect", {x: sx, y: top + (10 - k) * 6, width: 14, height: 6, fill: colour(lo + (hi - lo) * k / 10)}));
  }
  chart.append(svg("text", {x: sx + 18, y: top + 6, text: time(hi)}));
  chart.append(svg("text", {x: sx + 18, y: top + 64, text: time(lo)}));
  return el("div", {class: "heatmap-box"}, chart, el("p", {class: "note",
    text: "step wall time per rank (the `steps` table); outlined: " + (byArrival.size
      ? "the straggler of a step, the rank the others waited for at its collectives (step walls come out nearly equal: the others wait)"
      : "the slowest rank of a step (dashed: a tie)")}));
}

/** The view line the Ranks page shows: `line` over the ranks, or for a collectives
 * line the last view line (over the collectives line's profiles). */
function ranksViewLine(line, app) {
  if (L.command(line) === "collectives") {
    const view = app.ranksView || "scope";
    return ranksViewLine(L.withOption(view, "profiles", L.option(line, "profiles") || "all"), app);
  }
  line = isView(L.command(line)) ? line : "scope";
  for (const name of ["base", "base_step"]) line = L.withOption(line, name, "");
  if (!L.option(line, "profiles")) line = L.withOption(line, "profiles", "all");
  return L.withOption(line, "by_profile", "true");
}

/** The collectives document of a collectives line, or of the ranks a view line picks
 * (a note instead when the traces record none). A typed collectives line the shell
 * refuses throws. */
async function collectivesOf(line, picked, names, app) {
  if (!app.state.commands.some((c) => c.name === "collectives")) return null;
  if (L.command(line) === "collectives") return app.runDocument(line);
  if (picked.length < 2) return null;
  const wanted = "collectives" + (picked.length === names.length ? "" : " -profiles " + picked.join(","));
  try {
    return await app.runDocument(wanted);
  } catch (e) {
    return {error: e.message};
  }
}

export const RANKS = {
  title: "Ranks",
  accepts: (cmd) => isView(cmd) || cmd === "collectives",
  home: (cmd) => cmd === "collectives",
  lineFor(line, app) {
    if (L.command(line) === "collectives" || isView(L.command(line))) return L.command(line) === "collectives" ? line : ranksViewLine(line, app);
    const last = app.lines.ranks || "scope";
    return L.command(last) === "collectives" ? last : ranksViewLine(last, app);
  },
  async load(line, app) {
    const names = app.state.profiles.map((p) => p.name);
    const viewLine = ranksViewLine(line, app);
    const chosenText = L.option(viewLine, "profiles");
    const picked = chosenText === "all" ? names : chosenText.split(",").filter((n) => names.includes(n));
    const collectives = await collectivesOf(line, picked, names, app);
    const view = await app.runView(viewLine);
    let steps = null;
    if (picked.length && app.state.commands.some((c) => c.name === "steps")) {
      try {
        steps = await app.runDocument(`steps -profiles ${picked.join(",")}`);
      } catch (e) {
        steps = null;
      }
    }
    return {data: {view, steps, names, picked, collectives, viewLine}};
  },
  show({view, steps, names, picked, collectives, viewLine}, app) {
    app.ranksView = viewLine;
    fill($("rk-collectives"), collectivesSection(app, collectives, app.line));
    const chosen = new Set(picked);
    fill($("rk-profiles"), names.map((n) => {
      const box = el("input", {type: "checkbox", value: n, onchange: () => {
        const now = [...$("rk-profiles").querySelectorAll("input:checked")].map((b) => b.value);
        app.navigate({line: L.withOption(app.line, "profiles", now.length === names.length ? "all" : now.join(",") || "none")});
      }});
      box.checked = chosen.has(n);
      return el("label", {}, box, n);
    }));
    const agg = app.controls.options.find((o) => o.name === "aggregate");
    options($("rk-aggregate"), agg.choices, L.option(viewLine, "aggregate") || agg.default);
    $("rk-note").textContent = names.length < 2
      ? "One profile is loaded: load ranks with tfprof ui --profile_path=RANK_FOLDER or --profile NAME=PATH." : "";
    const ranks = steps ? stepsOf(steps) : {};
    const stepsLine = "steps -profiles " + (picked.length === names.length ? "all" : picked.join(","));
    fill($("rk-heatmap"), Object.keys(ranks).length ? [heatmap(ranks, (steps && steps.stragglers) || []),
      el("details", {class: "rk-steps"}, el("summary", {text: "each rank's steps breakdown, side by side"}),
        el("div", {class: "steps-ranks"}, Object.entries(ranks).map(([n, d]) => profilePanel(app, n, d, false, "rk-segment"))),
        el("div", {id: "rk-segment", class: "segment"}),
        lineLink(app, stepsLine, "steps", "open: " + stepsLine))]
      : el("p", {class: "note", text: "no steps to compare"}));
    const t = table(app, "rk-table");
    t.setTree(view.tree, 2);
    if (app.sort) t.setSort(app.sort);
  },
  wire(app) {
    $("rk-aggregate").onchange = (e) => app.navigate({line: L.withOption(app.ranksView || app.line, "aggregate", e.target.value)});
  },
};
