// The Memory page: `memory -output json` as pictures. Per device the level over time
// (allocated, reserved dashed where known) with the step boundaries and the peak
// marked; what is alive at the peak, grouped by the line's -by; each step's highest
// and final level, the growth per step and the leak suspects. With -base the two
// profiles' levels on one chart and the live sets key by key; with -profiles every
// device of the loaded profiles ranked by its peak.

import {el, fill, svg} from "./dom.js";
import {nanos} from "./format.js";
import * as L from "./line.js";

const $ = (id) => document.getElementById(id);
const BEFORE = "(allocated before the profile)";
const COLOURS = ["#4e79a7", "#f28e2b"];

/** Bytes as the memory command prints them: 999B, 1.00KB, 2.50MB. */
export function mem(b) {
  if (b === null || b === undefined) return "--";
  const a = Math.abs(b), sign = b < 0 ? "-" : "";
  if (a < 1000) return sign + a + "B";
  if (a < 1e6) return sign + (a / 1e3).toFixed(2) + "KB";
  return sign + (a / 1e6).toFixed(2) + "MB";
}

/** Microseconds as the memory command prints them: 999us, 1.00ms, 2.50sec. */
export function memTime(us) {
  if (us < 1000) return Math.floor(us) + "us";
  if (us < 1e6) return (us / 1e3).toFixed(2) + "ms";
  return (us / 1e6).toFixed(2) + "sec";
}

/** Steps as the text prints them: 5, 2-5, with + when some blocks predate the profile. */
export function stepsText(steps) {
  const named = steps.filter((s) => s !== null);
  if (!named.length) return "--";
  return (named.length === 1 ? String(named[0]) : `${named[0]}-${named[named.length - 1]}`) +
    (named.length < steps.length ? "+" : "");
}

function tick(span, count) {
  const raw = span / Math.max(1, count);
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

/** One chart of devices' levels: series [{label, doc, device}] share the axes. */
function levelChart(series, title) {
  const w = 880, h = 220, left = 70, top = 32, bottom = 26;
  const end = Math.max(1, ...series.flatMap(({doc, device}) => [...doc.steps.map((s) => s.end),
    ...device.timeline.time, device.peak.time]));
  const ymax = 1.06 * Math.max(1, ...series.flatMap(({device}) => [device.peak.bytes,
    ...device.timeline.allocated, ...(device.timeline.reserved || [])]));
  const x = (t) => left + (w - left - 10) * t / end;
  const y = (v) => top + (h - top - bottom) * (1 - v / ymax);
  const chart = svg("svg", {width: w, height: h, class: "mem-chart"});
  chart.append(svg("text", {x: 0, y: 12, class: "chart-title", text: title}));
  const ys = tick(ymax, 4);
  for (let v = 0; v <= ymax; v += ys) {
    chart.append(svg("line", {x1: left, x2: w - 10, y1: y(v), y2: y(v), class: "grid"}));
    chart.append(svg("text", {x: 2, y: y(v) + 4, text: mem(Math.round(v))}));
  }
  const xs = tick(end, 8);
  for (let t = 0; t <= end; t += xs) chart.append(svg("text", {x: x(t) - 10, y: h - 6, text: nanos(t)}));
  // step boundaries of the first series (its steps are the profile's)
  series[0].doc.steps.forEach((s, k) => {
    chart.append(svg("line", {x1: x(s.start), x2: x(s.start), y1: top - 8, y2: h - bottom, class: "step-line", "data-step": s.step}));
    const gap = k + 1 < series[0].doc.steps.length ? x(series[0].doc.steps[k + 1].start) - x(s.start) : w - x(s.start);
    const label = gap > 40 ? `step ${s.step}` : gap > 12 ? String(s.step) : "";
    if (label) chart.append(svg("text", {x: x(s.start) + 2, y: top - 4, class: "step-label", text: label}));
  });
  series.forEach(({label, device}, k) => {
    const tl = device.timeline;
    const stepped = (values) => values.map((v, i) => {
      const x1 = i + 1 < tl.time.length ? x(tl.time[i + 1]) : x(end);
      return `${x(tl.time[i]).toFixed(1)},${y(v).toFixed(1)} ${x1.toFixed(1)},${y(v).toFixed(1)}`;
    }).join(" ");
    const colour = COLOURS[k % COLOURS.length];
    if (tl.time.length) {
      if (k === 0) {
        chart.append(svg("polygon", {class: "mem-area", fill: colour, points:
          `${x(tl.time[0])},${y(0)} ${stepped(tl.allocated)} ${x(end)},${y(0)}`}));
      }
      chart.append(svg("polyline", {class: "mem-allocated", stroke: colour, fill: "none", points: stepped(tl.allocated),
        "data-points": tl.time.length, "data-series": label}));
      if (tl.reserved) {
        chart.append(svg("polyline", {class: "mem-reserved", stroke: colour, fill: "none", points: stepped(tl.reserved),
          "data-series": label}));
      }
    }
    const p = device.peak;
    chart.append(svg("circle", {cx: x(p.time), cy: y(p.bytes), r: 4.5, class: "mem-peak", fill: colour,
      "data-bytes": p.bytes, "data-time": p.time, "data-series": label},
    svg("title", {text: `${label} peak ${mem(p.bytes)} at ${memTime(Math.floor(p.time / 1000))}`})));
  });
  const readout = svg("text", {x: left + 4, y: top + 12, class: "mem-readout", text: ""});
  const cursor = svg("line", {x1: 0, x2: 0, y1: top, y2: h - bottom, class: "mem-cursor", visibility: "hidden"});
  chart.append(cursor, readout);
  chart.addEventListener("mousemove", (e) => {
    const rect = chart.getBoundingClientRect();
    const t = (e.clientX - rect.left - left) / (w - left - 10) * end;
    if (t < 0 || t > end) return;
    cursor.setAttribute("x1", x(t));
    cursor.setAttribute("x2", x(t));
    cursor.setAttribute("visibility", "visible");
    readout.textContent = `at ${nanos(t)}: ` + series.map(({label, device}) => {
      const tl = device.timeline;
      let i = -1;
      for (let k = 0; k < tl.time.length && tl.time[k] <= t; k++) i = k;
      return i < 0 ? `${label} --` : `${label} ${mem(tl.allocated[i])}` + (tl.reserved ? ` (reserved ${mem(tl.reserved[i])})` : "");
    }).join(", ");
  });
  return chart;
}

/** The peak's facts as the text says them: "[step N's ]peak B at T (step S), reached K
 * times; reserved ...; fragmentation ...; capacity ...". */
function peakFacts(device, doc, step) {
  const p = device.peak;
  const facts = [`${step !== undefined && Number(step) >= 0 ? `step ${step}'s ` : ""}peak ${mem(p.bytes)} at ${memTime(Math.floor(Math.max(p.time, 0) / 1000))} ` +
    `(${p.step === null ? "outside any step" : "step " + p.step}), reached ${p.times_reached} time${p.times_reached === 1 ? "" : "s"}`];
  if (p.reserved !== null) facts.push(`reserved ${mem(p.reserved)}`);
  if (p.fragmentation !== null) facts.push(`fragmentation ${(100 * p.fragmentation).toFixed(1)}%`);
  if (device.capacity !== null) facts.push(`capacity ${mem(device.capacity)} (${(100 * p.bytes / Math.max(device.capacity, 1)).toFixed(1)}% used)`);
  const level = device.counted && doc.records.includes("counter") ? "the allocator's counter" : "the blocks the profile saw allocated";
  return el("p", {class: "mem-facts", "data-device": device.name}, `${device.events} events; level: ${level}. `,
    el("strong", {class: "mem-peak-facts", text: facts.join("; ") + "."}));
}

function table(cls, head, rows) {
  return el("table", {class: "small " + cls}, el("tr", {}, head.map((h, k) => el("th", {class: k ? "num" : "", text: h}))),
    rows.map((r) => el("tr", {class: "row"}, r.map((c, k) => el("td", {class: k ? "num" : ""}, c)))));
}

function liveTable(device, by) {
  const total = device.live.rows.reduce((a, r) => a + r.bytes, 0);
  const blocks = device.live.rows.reduce((a, r) => a + r.count, 0);
  const bar = (v) => svg("svg", {width: 80, height: 9}, svg("rect", {width: total ? 80 * v / total : 0, height: 9, class: "share-bar"}));
  return [el("h4", {text: `Alive at the peak, by ${by}: ${mem(total)} in ${blocks} block${blocks === 1 ? "" : "s"}`}),
    table("mem-live", [by, "bytes", "share", "blocks", "requested", "steps", "age"], device.live.rows.map((r) => [
      el("span", {class: r.key === BEFORE ? "before" : "", title: r.key, text: r.key}, " ", bar(r.bytes)),
      mem(r.bytes), total ? (100 * r.bytes / total).toFixed(1) + "%" : "--", r.count ? String(r.count) : "--",
      r.requested === null ? "--" : mem(r.requested), stepsText(r.steps),
      r.age === null ? "--" : memTime(Math.floor(r.age / 1000))]))];
}

function growth(device) {
  const g = device.growth;
  const out = [el("h4", {text: "Per step (the highest level in it, the level at its end)"}),
    table("mem-steps", ["step", "peak", "end"], device.steps.map((s) => [String(s.step), mem(s.peak), mem(s.end)]))];
  if (g.slope === null) return [...out, el("p", {class: "mem-growth", text: "Growth: needs two steps or more."})];
  out.push(el("p", {class: "mem-growth", text: `Growth: ${g.slope >= 0 ? "+" : "-"}${mem(Math.trunc(Math.abs(g.slope)))} per step` +
    (g.suspects.length ? "; leak suspects (allocated step after step, never freed):" : "; no leak suspects.")}));
  if (g.suspects.length) {
    out.push(table("mem-suspects", ["suspect", "per step", "in steps", "bytes"], g.suspects.map((s) => [
      el("span", {title: s.key, text: s.key}), mem(s.per_step), `${s.steps} of ${s.judged}`, mem(s.bytes)])));
  }
  return out;
}

function devicePanel(app, doc, device) {
  const timelineLine = device.peak.step === null ? "graph" : `graph -step ${device.peak.step}`;
  return el("div", {class: "mem-device", "data-device": device.name},
    el("h3", {text: device.name}), peakFacts(device, doc, L.option(app.line, "step")),
    levelChart([{label: device.name, doc, device}], `${device.name}: allocated` + (device.timeline.reserved ? " (dashed: reserved)" : "") + ", the peak marked"),
    el("p", {}, el("a", {href: "#", class: "line-link", onclick: (e) => { e.preventDefault(); app.navigate({page: "timeline", line: timelineLine}); }},
      `see the peak's step on the Timeline (${timelineLine})`)),
    el("div", {class: "mem-cols"}, el("div", {class: "mem-live-box"}, liveTable(device, doc.by)), el("div", {}, growth(device))));
}

function single(app, doc) {
  return [el("p", {class: "note", text: `${doc.origin}; records: ${doc.records.join(", ")}` +
    (doc.notes.length ? ". " + doc.notes.join("; ") : "")}),
  doc.devices.length ? doc.devices.map((d) => devicePanel(app, doc, d)) : el("p", {class: "note", text: "no memory events"})];
}

function diff(doc) {
  const [cur, base] = Object.keys(doc.profiles);
  return doc.diff.map((d) => {
    const mine = doc.profiles[cur].devices.find((x) => x.name === d.device);
    const theirs = doc.profiles[base].devices.find((x) => x.name === d.device);
    const series = [mine && {label: cur, doc: doc.profiles[cur], device: mine},
      theirs && {label: base, doc: doc.profiles[base], device: theirs}].filter(Boolean);
    const change = d.peak.current - d.peak.base;
    return el("div", {class: "mem-device mem-diff", "data-device": d.device}, el("h3", {text: d.device}),
      el("p", {class: "mem-facts"}, el("strong", {text: `peak ${mem(d.peak.current)} vs ${mem(d.peak.base)} ` +
        `(${change >= 0 ? "+" : "-"}${mem(Math.abs(change))}${d.peak.base ? `, ${(d.peak.current / d.peak.base).toFixed(2)}x` : ""})`})),
      series.length ? levelChart(series, `${d.device}: ${cur} (solid) against ${base}`) : null,
      el("div", {class: "legend"}, series.map((s, k) => el("span", {class: "swatch-item"},
        svg("svg", {width: 12, height: 12}, svg("rect", {width: 12, height: 12, fill: COLOURS[k]})), " " + s.label))),
      table("mem-diff-live", [doc.profiles[cur].by, cur, base, "change"], d.live.map((r) => [
        el("span", {title: r.key, text: r.key}), mem(r.current), mem(r.base), (r.change >= 0 ? "+" : "-") + mem(Math.abs(r.change))])));
  });
}

function ranks(doc) {
  const top = Math.max(1, ...doc.ranks.map((r) => r.peak));
  return table("mem-ranks", ["rank", "profile", "device", "peak", "step", "per step", "suspects", "largest at the peak"],
    doc.ranks.map((r, k) => {
      const d = doc.profiles[r.profile].devices.find((x) => x.name === r.device);
      const largest = d.live.rows[0];
      return [String(k + 1), r.profile, r.device,
        el("span", {}, svg("svg", {width: 90, height: 9}, svg("rect", {width: 90 * r.peak / top, height: 9, class: "share-bar"})), " " + mem(r.peak)),
        d.peak.step === null ? "--" : String(d.peak.step),
        d.growth.slope === null ? "--" : (d.growth.slope >= 0 ? "+" : "-") + mem(Math.trunc(Math.abs(d.growth.slope))),
        String(d.growth.suspects.length), largest ? `${largest.key} (${mem(largest.bytes)})` : "--"];
    }));
}

function toolbar(app, doc) {
  const line = app.line;
  const option = (name) => app.controls.options.find((o) => o.name === name);
  const by = option("by");
  // a line the shell refuses leaves the control as it was
  const go = (next, undo) => app.navigate({line: next}).then((ok) => ok || undo());
  const select = (id, values, chosen, change, title) => {
    const s = el("select", {id, title, onchange: (e) => go(change(e.target.value), () => { s.value = chosen; })},
      values.map(([v, label, help]) => el("option", {value: v, title: help || ""}, label)));
    s.value = chosen;
    return s;
  };
  const profiles = app.state.profiles.map((p) => p.name);
  const own = doc.profiles ? Object.values(doc.profiles)[0] : doc;
  const steps = own.steps.map((s) => s.step);
  return el("div", {class: "toolbar"},
    el("label", {}, "group by ", select("mem-by", by.choices.map((c) => [c, c, by.choice_help[c]]),
      L.option(line, "by") || by.default, (v) => L.withOption(line, "by", v === by.default ? "" : v), by.help)),
    el("label", {}, "peak of ", select("mem-step", [["-1", "the whole profile"], ...steps.map((s) => [String(s), "step " + s])],
      L.option(line, "step") || "-1", (v) => L.withOption(line, "step", v === "-1" ? "" : v), option("step").command_help.memory)),
    profiles.length > 1 ? el("label", {}, "compare with ", select("mem-base", [["", "none"], ...profiles.filter((p) => p !== app.state.current).map((p) => [p, p])],
      L.option(line, "base") || "", (v) => L.withOption(L.withOption(line, "profiles", ""), "base", v), option("base").help)) : null,
    profiles.length > 1 ? el("label", {title: option("profiles").help}, Object.assign(el("input", {type: "checkbox", id: "mem-ranks",
      onchange: (e) => go(L.withOption(L.withOption(line, "base", ""), "profiles", e.target.checked ? "all" : ""),
        () => { e.target.checked = !e.target.checked; })}),
    {checked: Boolean(L.option(line, "profiles"))}), " rank every profile by its peak") : null);
}

export const MEMORY = {
  title: "Memory",
  accepts: (cmd) => cmd === "memory",
  home: (cmd) => cmd === "memory",
  lineFor: (line, app) => L.command(line) === "memory" ? line : (app.lines.memory || "memory"),
  async load(line, app) {
    try {
      return {data: await app.runDocument(line)};
    } catch (e) {
      if (line !== "memory") throw e;  // a typed line the shell refuses changes nothing
      return {data: {error: e.message}};
    }
  },
  show(doc, app) {
    const section = $("page-memory");
    if (doc.error) {
      fill(section, el("p", {class: "note mem-none", text: "memory: " + doc.error}));
      return;
    }
    const body = doc.ranks ? [el("h3", {text: "Devices ranked by their peak"}), ranks(doc)]
      : doc.diff ? diff(doc) : single(app, doc);
    fill(section, toolbar(app, doc), ...[body].flat(Infinity));
  },
};
