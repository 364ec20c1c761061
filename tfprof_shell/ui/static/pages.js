// Overview, Compare, Ranks and Advise: each shows shell lines, and each list links
// back to the line that gives it. Pages: {title, accepts, home, lineFor, load, show}.

import {run} from "./api.js";
import {el, fill, svg} from "./dom.js";
import {count, forUnit, signed, time} from "./format.js";
import * as L from "./line.js";
import {ViewTree} from "./model.js";
import {PART_COLOURS, partLabel, profilePanel, stepsOf} from "./steps.js";
import {keptRows, slowest} from "./table.js";
import {table} from "./viewpages.js";

const VIEW_COMMANDS = ["scope", "graph", "op", "code"];
const $ = (id) => document.getElementById(id);
const isView = (cmd) => VIEW_COMMANDS.includes(cmd);

function lineLink(app, line, page, label) {
  return el("a", {href: "#", class: "line-link", title: line,
    onclick: (e) => { e.preventDefault(); app.navigate({page, line}); }}, label || line);
}

/** The steps document of the current profile, or null if `steps` has nothing to say. */
async function stepsDocument(app) {
  if (!app.state.commands.some((c) => c.name === "steps")) return null;
  try {
    return await app.runDocument("steps");
  } catch (e) {
    return null;
  }
}

/** One bar per step: its wall time, the busiest device's parts stacked inside it (the
 * steps document's figures), the rest of the wall above them. */
function stepChart(doc) {
  const steps = doc.steps;
  const w = Math.max(300, Math.min(900, steps.length * 34)), h = 130;
  const max = Math.max(1, ...steps.map((s) => s.wall));
  const bw = w / Math.max(1, steps.length);
  const chart = svg("svg", {width: w, height: h + 34, class: "bars"});
  const parts = doc.device_parts || [];
  steps.forEach((s, k) => {
    const x = k * bw + 2, width = Math.max(1, bw - 4);
    const devices = Object.entries(s.devices || {});
    const [name, dev] = devices.sort((a, b) => (b[1].busy || 0) - (a[1].busy || 0))[0] || [null, null];
    let y = h;
    const title = `step ${s.step}: ${time(s.wall)} wall` + (dev ? `; ${name}: ` +
      parts.filter((p) => dev[p]).map((p) => `${partLabel(p)} ${time(dev[p])}`).join(", ") : "");
    const bar = svg("g", {class: "step-bar", "data-step": s.step, "data-wall": s.wall});
    bar.append(svg("rect", {x, y: h - h * s.wall / max, width, height: h * s.wall / max, class: "wall"},
      svg("title", {text: title})));
    if (dev) {
      for (const p of parts) {
        const v = dev[p];
        if (!v) continue;
        const height = h * v / max;
        y -= height;
        bar.append(svg("rect", {x, y, width, height, fill: PART_COLOURS[p] || "#999"},
          svg("title", {text: title})));
      }
    }
    chart.append(bar);
    if (bw > 22) chart.append(svg("text", {x: x + width / 2 - 6, y: h + 12, text: String(s.step)}));
  });
  chart.append(svg("text", {x: 0, y: h + 28, text: `steps ${steps[0].step}..${steps[steps.length - 1].step} (the \`steps\` table's wall time; max ${time(max)}); colours as on the Steps page`}));
  return chart;
}

/** The top rows of an answer under the root, by total. */
function topRows(answer, k) {
  const tree = new ViewTree(answer);
  const a = tree.attrs[0];
  const rows = tree.children[0].slice().sort((x, y) => tree.total(a, y) - tree.total(a, x)).slice(0, k);
  return rows.map((i) => [tree.name(i), forUnit(answer.units[a])(tree.total(a, i))]);
}

function smallTable(rows) {
  return el("table", {class: "small"}, rows.map((r) => el("tr", {}, r.map((c) => el("td", {text: c, title: c})))));
}

export const OVERVIEW = {
  title: "Overview",
  accepts: () => false,
  home: () => false,
  lineFor: (line) => line,
  async load(_, app) {
    await app.refreshState();
    const scopeLine = "scope -max_depth 2 -order_by micros";
    const opLine = "op -order_by micros";
    const [steps, scopes, ops] = await Promise.all([stepsDocument(app), run(scopeLine), run(opLine)]);
    return {data: {steps, scopes, ops, scopeLine, opLine}};
  },
  show({steps, scopes, ops, scopeLine, opLine}, app) {
    const profiles = app.state.profiles;
    fill($("ov-profiles"), el("table", {class: "small"},
      el("tr", {}, ["", "name", "format", "steps", "nodes", "total time", "source"].map((h) => el("th", {text: h}))),
      profiles.map((p) => el("tr", {}, el("td", {text: p.current ? "*" : ""}), el("td", {text: p.name}),
        el("td", {text: p.kind}), el("td", {text: p.steps.length ? `${p.steps.length} (${p.steps[0]}..${p.steps[p.steps.length - 1]})` : "none"}),
        el("td", {text: count(p.nodes)}), el("td", {text: time(p.micros)}), el("td", {text: p.paths.join(", ")})))));
    fill($("ov-steps"), steps && steps.steps.length ? [stepChart(steps), lineLink(app, "steps", "steps", "open the Steps page")]
      : el("p", {class: "note", text: "no steps to break down"}));
    fill($("ov-scopes"), smallTable(topRows(scopes, 10)), lineLink(app, scopeLine, "views", "open: " + scopeLine));
    fill($("ov-ops"), smallTable(topRows(ops, 10)), lineLink(app, opLine, "views", "open: " + opLine));
    fill($("ov-advice"), el("p", {class: "note", text: "running the advisor…"}));
    run("advise").then((a) => {
      fill($("ov-advice"), Object.entries(a.checkers).map(([name, reports]) => el("div", {class: "advice-sum"},
        el("strong", {text: `${name}: `}), `${reports.length} report${reports.length === 1 ? "" : "s"}`,
        reports.length ? el("div", {class: "clip", text: reports[0].split("\n")[0]}) : null)),
      lineLink(app, "advise", "advise", "open the Advise page"));
    }, (e) => fill($("ov-advice"), el("p", {class: "error", text: e.message})));
  },
};

function options(select, values, chosen) {
  fill(select, values.map((v) => el("option", {value: v}, v)));
  select.value = chosen;
}

/** The compare line for `line`: another profile as base if there is one, else the last
 * step against the one before it. */
function compareLine(line, app) {
  const profiles = app.state.profiles;
  const current = profiles.find((p) => p.current);
  for (const name of ["profiles", "aggregate", "by_profile"]) line = L.withOption(line, name, "");
  if (L.option(line, "base") !== undefined) return line;
  const others = profiles.filter((p) => !p.current).map((p) => p.name);
  if (others.length) return L.withOption(line, "base", others[0]);
  const steps = current.steps;
  if (steps.length > 1) {
    const last = L.option(line, "step") && Number(L.option(line, "step")) >= 0 ? Number(L.option(line, "step")) : steps[steps.length - 1];
    const k = steps.indexOf(last);
    const before = steps[Math.max(0, k - 1)];
    return L.withOption(L.withOption(L.withOption(line, "step", last), "base_step", before), "base", current.name);
  }
  return line;
}

export const COMPARE = {
  title: "Compare",
  accepts: isView,
  home: () => false,
  lineFor: (line, app) => compareLine(isView(L.command(line)) ? line : (app.lines.compare || "scope"), app),
  async load(line, app) {
    const base = L.option(line, "base");
    if (!base) return {line, data: null};
    return {line, data: await app.runView(line)};
  },
  show(data, app) {
    const line = app.line;
    const profiles = app.state.profiles;
    const current = profiles.find((p) => p.current);
    const base = L.option(line, "base");
    options($("cmp-base"), ["none", ...profiles.map((p) => p.name)], base || "none");
    const baseProfile = profiles.find((p) => p.name === base) || current;
    options($("cmp-step"), ["-1", ...current.steps.map(String)], L.option(line, "step") || "-1");
    options($("cmp-base-step"), ["same", ...baseProfile.steps.map(String)], L.option(line, "base_step") || "same");
    $("cmp-threshold").value = String(app.threshold || 0);
    const t = table(app, "cmp-table");
    if (!data) {
      $("cmp-note").textContent = "Load a second profile (tfprof ui --profile NAME=PATH) or record two steps to compare.";
      return;
    }
    const {tree} = data;
    t.setTree(tree, 2);
    if (app.sort) t.setSort(app.sort);
    t.setThreshold(app.threshold || 0);
    if (tree.kind !== "diff") {
      $("cmp-note").textContent = "this line is not a comparison";
      return;
    }
    showChanges(tree, app.threshold || 0);
  },
  wire(app) {
    $("cmp-base").onchange = (e) => app.navigate({line: L.withOption(app.line, "base", e.target.value === "none" ? "" : e.target.value)});
    $("cmp-step").onchange = (e) => app.navigate({line: L.withOption(app.line, "step", e.target.value)});
    $("cmp-base-step").onchange = (e) => app.navigate({line: L.withOption(app.line, "base_step", e.target.value === "same" ? "" : e.target.value)});
    $("cmp-threshold").onchange = (e) => {
      const value = Math.max(0, Number(e.target.value) || 0);
      app.remember({threshold: value});
      const t = table(app, "cmp-table");
      t.setThreshold(value);
      if (t.tree && t.tree.kind === "diff") showChanges(t.tree, value);
    };
  },
};

/** The ten largest slowdowns and speed-ups (leaves; op rows), at least `threshold`. */
function showChanges(tree, threshold) {
  const a = tree.attrs[0], fmt = forUnit(tree.answer.units[a]);
  const kept = threshold ? keptRows(tree, threshold) : null;
  const rows = Array.from({length: tree.n - 1}, (_, k) => k + 1)
    .filter((i) => (tree.children[i].length === 0 || tree.answer.view === "op") && (!kept || Math.abs(tree.delta(a, i)) >= threshold));
  const ranked = rows.slice().sort((x, y) => tree.delta(a, y) - tree.delta(a, x));
  const badge = (i) => tree.status(i) === "+" ? "new" : tree.status(i) === "-" ? "gone" : "";
  const item = (i) => el("li", {}, el("span", {class: "badge " + badge(i), text: badge(i)}), " ", tree.name(i), " ",
    el("span", {class: tree.delta(a, i) > 0 ? "slower" : "faster", text: signed(tree.delta(a, i), fmt)}));
  fill($("cmp-slower"), el("ol", {}, ranked.filter((i) => tree.delta(a, i) > 0).slice(0, 10).map(item)));
  fill($("cmp-faster"), el("ol", {}, ranked.filter((i) => tree.delta(a, i) < 0).reverse().slice(0, 10).map(item)));
  const [now, was] = tree.answer.sides;
  $("cmp-note").textContent = `${now.name} (step ${now.step}) against ${was.name} (step ${was.step}): ` +
    `total ${fmt(tree.total(a, 0))} vs ${fmt(tree.base(a, 0))}, ${signed(tree.delta(a, 0), fmt)}` +
    (threshold ? `; changes under ${fmt(threshold)} hidden` : "");
}

// -- Ranks ------------------------------------------------------------------------------------

/** Rank x step heatmap of step wall times with a colour scale; ties for the slowest
 * rank of a step are marked as ties, never as one slowest. */
export function heatmap(ranks) {
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
      const mark = v !== null && v === top1 && column.length > 1 ? (ties > 1 ? "tie" : "slowest") : "";
      chart.append(svg("rect", {x: left + c * cell, y: top + r * cell, width: cell - 2, height: cell - 2,
        fill: v === null ? "#eee" : colour(v), class: "cell " + mark, "data-rank": n, "data-step": s, "data-us": v === null ? "" : v},
      svg("title", {text: `${n}, step ${s}: ${v === null ? "--" : time(v)}` + (mark === "slowest" ? " (slowest rank)" : mark === "tie" ? " (tied slowest)" : "")})));
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
    text: "step wall time per rank (the `steps` table); outlined: the slowest rank of a step (dashed: a tie)"}));
}

export const RANKS = {
  title: "Ranks",
  accepts: isView,
  home: () => false,
  lineFor(line, app) {
    line = isView(L.command(line)) ? line : (app.lines.ranks || "scope");
    for (const name of ["base", "base_step"]) line = L.withOption(line, name, "");
    if (!L.option(line, "profiles")) line = L.withOption(line, "profiles", "all");
    return L.withOption(line, "by_profile", "true");
  },
  async load(line, app) {
    const names = app.state.profiles.map((p) => p.name);
    const chosenText = L.option(line, "profiles");
    const picked = chosenText === "all" ? names : chosenText.split(",").filter((n) => names.includes(n));
    const view = await app.runView(line);
    let steps = null;
    if (picked.length && app.state.commands.some((c) => c.name === "steps")) {
      try {
        steps = await app.runDocument(`steps -profiles ${picked.join(",")}`);
      } catch (e) {
        steps = null;
      }
    }
    return {data: {view, steps, names, picked}};
  },
  show({view, steps, names, picked}, app) {
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
    options($("rk-aggregate"), agg.choices, L.option(app.line, "aggregate") || agg.default);
    $("rk-note").textContent = names.length < 2
      ? "One profile is loaded: load ranks with tfprof ui --profile_path=RANK_FOLDER or --profile NAME=PATH." : "";
    const ranks = steps ? stepsOf(steps) : {};
    const stepsLine = "steps -profiles " + (picked.length === names.length ? "all" : picked.join(","));
    fill($("rk-heatmap"), Object.keys(ranks).length ? [heatmap(ranks),
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
    $("rk-aggregate").onchange = (e) => app.navigate({line: L.withOption(app.line, "aggregate", e.target.value)});
  },
};

export const ADVISE = {
  title: "Advise",
  accepts: (cmd) => cmd === "advise",
  home: (cmd) => cmd === "advise",
  lineFor: (line) => L.command(line) === "advise" ? line : "advise",
  async load(line) {
    const [answer, ops] = await Promise.all([run(line), run("op -order_by micros -max_depth 100000")]);
    return {data: {answer, ops}};
  },
  show({answer, ops}, app) {
    const opTypes = new ViewTree(ops);
    const known = new Set(Array.from({length: opTypes.n - 1}, (_, k) => opTypes.name(k + 1)));
    app.status(app.line + ": done", "note");
    fill($("advice"), Object.entries(answer.checkers).map(([name, reports]) => el("section", {class: "checker"},
      el("h2", {text: name}),
      reports.length ? reports.map((r) => {
        const words = [...new Set(r.split(/[^A-Za-z0-9_./:-]+/).filter((w) => known.has(w)))];
        return el("div", {class: "report"}, el("pre", {text: r}),
          words.map((w) => lineLink(app, `op -show_name_regexes ${L.exactRegex(w)}`, "views", `open op ${w}`)));
      }) : el("p", {class: "note", text: "no reports"}))));
  },
};

export {slowest, PART_COLOURS};
