// The Ranks page's collectives: `collectives -output json` over the loaded ranks. Per
// step the straggler (the rank with the largest own lateness), how late, and the
// cause (the region it spent more wall time in than the others before arriving);
// then each instance: step, op, size, skew, the last rank and each rank's wait. Up
// to MAX_COLUMNS ranks get a column each; more get a strip of cells, one per rank,
// coloured by the value (its number in the cell's title). A click on an instance
// shows it on the Timeline: the current profile's lanes, every rank's arrival marked.

import {el, svg} from "./dom.js";
import * as L from "./line.js";

export const MAX_COLUMNS = 8;
const round = (v) => v === null || v === undefined ? "--" : String(Math.round(v));

function heat(k) {
  return `rgb(${Math.round(250 - 25 * k)},${Math.round(245 - 190 * k)},${Math.round(240 - 205 * k)})`;
}

/** One cell per rank, coloured by its value against the row's largest; `last` outlined. */
export function strip(ranks, values, last, what) {
  const n = ranks.length;
  const cell = Math.max(3, Math.min(14, Math.floor(560 / Math.max(1, n))));
  const top = Math.max(1e-9, ...ranks.map((r) => values[r] || 0));
  const out = svg("svg", {width: n * cell + 2, height: 14, class: "rank-strip"});
  ranks.forEach((r, k) => {
    const v = values[r];
    out.append(svg("rect", {x: k * cell + 1, y: 1, width: cell - 1, height: 12,
      fill: v === null || v === undefined ? "#eee" : heat(v / top), class: "rank-cell" + (r === last ? " last" : ""),
      "data-rank": r, "data-us": v === null || v === undefined ? "" : v},
    svg("title", {text: `${r}: ${what} ${round(v)} us` + (r === last ? " (last)" : "")})));
  });
  return out;
}

function perRank(ranks, values, last, what, wide) {
  if (wide) return [el("td", {class: "strip-cell"}, strip(ranks, values, last, what))];
  return ranks.map((r) => el("td", {class: "num rank-value" + (r === last ? " last" : ""), "data-rank": r,
    "data-us": values[r] ?? "", text: round(values[r])}));
}

/** The collectives section of the Ranks page from `doc` (null: nothing loaded). */
export function collectivesSection(app, doc, line) {
  if (!doc) return null;
  if (doc.error) return el("p", {class: "note coll-none", text: doc.error});
  const ranks = doc.profiles;
  const wide = ranks.length > MAX_COLUMNS;
  const device = doc.collectives.some((c) => c.device_skew !== null && c.device_skew !== undefined);
  const rankHead = wide ? [el("th", {text: `each rank (${ranks.length}: ${ranks[0]} \u2026 ${ranks[ranks.length - 1]})`})]
    : ranks.map((r) => el("th", {class: "num", text: r}));
  const stepLink = (s) => el("a", {href: "#", title: `collectives -step ${s}`, onclick: (e) => {
    e.preventDefault();
    app.navigate({page: "ranks", line: L.withOption(L.option(line, "profiles") ? line : "collectives", "step", String(s))});
  }}, String(s));
  const stragglers = el("table", {class: "small coll-steps"},
    el("tr", {}, ["step", "straggler", "cause", "lateness", "at #", "its wall", "others'", "excess"].map((h, k) => el("th", {class: k > 2 ? "num" : "", text: h})),
      el("th", {text: "lateness by rank"})),
    doc.steps.map((s) => el("tr", {class: "coll-step", "data-step": s.step},
      el("td", {}, stepLink(s.step)), el("td", {class: "straggler", text: s.straggler ?? "--"}),
      el("td", {class: "cause", text: s.cause ? s.cause.region : "--"}),
      el("td", {class: "num", text: round(s.straggler ? s.lateness[s.straggler] : null)}),
      el("td", {class: "num", text: s.instance ?? "--"}),
      el("td", {class: "num", text: round(s.cause && s.cause.rank_us)}),
      el("td", {class: "num", text: round(s.cause && s.cause.others_us)}),
      el("td", {class: "num", text: round(s.cause && s.cause.excess)}),
      el("td", {}, strip(ranks, s.lateness, s.straggler, "lateness")))));
  const instances = el("table", {class: "small coll-instances"},
    el("tr", {}, ["step", "#", "op", "size", "skew", "last"].map((h, k) => el("th", {class: k === 3 || k === 4 ? "num" : "", text: h})),
      device ? [el("th", {class: "num", text: "dev skew"}), el("th", {text: "dev last"})] : null,
      rankHead),
    doc.collectives.map((c) => el("tr", {class: "coll-instance", "data-instance": c.instance, "data-step": c.step,
      title: "click: show it on the Timeline", onclick: () => showOnTimeline(app, c, ranks)},
    el("td", {text: String(c.step)}), el("td", {text: String(c.instance)}), el("td", {text: c.op}),
    el("td", {class: "num", text: c.size ?? "--"}), el("td", {class: "num", text: round(c.skew)}),
    el("td", {class: "last-rank", text: c.last}),
    device ? [el("td", {class: "num", text: round(c.device_skew)}), el("td", {text: c.device_last ?? "--"})] : null,
    perRank(ranks, c.wait, c.last, "wait", wide))));
  const mismatch = doc.mismatch ? el("p", {class: "error coll-mismatch", text: doc.mismatch}) : null;
  return [el("h2", {text: `Collectives of ${ranks.length} ranks`}),
    el("p", {class: "note coll-how", text: `${doc.collectives.length} instances, ${doc.matching_text}. ${doc.clock.text}` +
      (doc.notes.length ? " " + doc.notes.join("; ") : "")}), mismatch,
    el("h3", {text: "Each step's straggler and what delayed it"}),
    el("p", {class: "hint", text: "The straggler is the rank with the largest own lateness (µs); the cause is the region where it spent more wall time than the median of the others before arriving."}),
    stragglers,
    el("h3", {text: "Each instance: its skew, the last rank, each rank's wait (µs)"}),
    el("div", {class: "coll-box"}, instances)];
}

/** The Timeline at instance `c`: from its first arrival to its last end, each rank's
 * arrival marked on the current profile's lanes (the ranks share one clock). */
function showOnTimeline(app, c, ranks) {
  const arrivals = ranks.filter((r) => c.arrival[r] !== undefined && c.arrival[r] !== null);
  const t0 = Math.min(...arrivals.map((r) => c.arrival[r]));
  const ends = Object.values(c.end || {}).filter((v) => v !== null);
  const t1 = Math.max(...arrivals.map((r) => c.arrival[r]), ...ends);
  const pad = Math.max((t1 - t0) * 0.08, 20);
  app.timelineFocus = {t0: t0 - pad, t1: t1 + pad,
    title: `collective #${c.instance} (step ${c.step}, ${c.op}): each rank's arrival; ${c.last} last, skew ${round(c.skew)} us`,
    marks: arrivals.map((r) => ({us: c.arrival[r], label: r, strong: r === c.last}))};
  app.navigate({page: "timeline", line: `graph -step ${c.step}`});
}

