// The option sidebar, generated from the options table the server sends
// (/api/controls): one control per option the line's command accepts.

import {el, fill} from "./dom.js";
import * as L from "./line.js";

function sticky(app) {
  const tokens = app.state.options;
  const out = {};
  for (let k = 0; k + 1 < tokens.length; k += 2) out[tokens[k].slice(1)] = tokens[k + 1];
  return out;
}

/** A -min_X option acts only where the profile has attribute X. */
function acts(o, app) {
  const present = app.state.present;
  return !o.name.startsWith("min_") || !present || present.includes(o.name.slice(4));
}

/** Fill `node` with the controls for the current line; a change calls setLine(newLine).
 * The -min_* thresholds are folded under one heading, and only those of attributes the
 * profile has are offered. */
export function buildControls(node, app, setLine) {
  if (!app.controls) return;
  const cmd = L.command(app.line) || "scope";
  const kept = sticky(app);
  const groups = app.controls.options.filter((o) => o.commands.includes(cmd) && acts(o, app));
  const profiles = app.state.profiles.map((p) => p.name);
  const made = groups.map((o) => {
    const typed = L.option(app.line, o.name);
    const value = typed ?? kept[o.name] ?? o.default;
    const change = (v) => setLine(L.withOption(app.line, o.name, v === o.default && !(o.name in kept) ? "" : v));
    const id = "opt-" + o.name;
    let input;
    if (o.kind === "bool") {
      input = el("input", {type: "checkbox", id, onchange: (e) => change(e.target.checked ? "true" : "false")});
      input.checked = value === "true";
    } else if (o.kind === "choice" || o.kind === "profile") {
      const choices = o.kind === "profile" ? ["none", ...profiles] : o.choices;
      input = el("select", {id, onchange: (e) => change(e.target.value)},
        choices.map((c) => el("option", {value: c, title: o.choice_help[c] || ""}, c)));
      input.value = value;
    } else if (o.kind === "choice_set") {
      const chosen = new Set(value.split(",").filter((x) => x));
      input = el("div", {class: "choice-set", id}, o.choices.map((c) => {
        const box = el("input", {type: "checkbox", value: c, onchange: () => {
          const now = [...input.querySelectorAll("input:checked")].map((b) => b.value);
          change(now.join(","));
        }});
        box.checked = chosen.has(c);
        return el("label", {}, box, c);
      }));
    } else {
      const numeric = o.kind === "int32" || o.kind === "int64";
      input = el("input", {id, type: numeric ? "number" : "text", placeholder: o.hint,
        onchange: (e) => change(e.target.value.trim())});
      input.value = value;
    }
    return [o, el("div", {class: "control" + (typed !== undefined ? " typed" : "")},
      el("label", {for: id, title: o.command_help[cmd] || o.help, text: o.flag}), input)];
  });
  const mins = made.filter(([o]) => o.name.startsWith("min_"));
  const typedMin = mins.some(([o]) => L.option(app.line, o.name) !== undefined);
  const fold = mins.length ? el("details", {class: "min-group", open: typedMin},
    el("summary", {text: `thresholds (-min_*, ${mins.length})`}), mins.map(([, c]) => c)) : null;
  const rest = made.filter(([o]) => !o.name.startsWith("min_")).map(([, c]) => c);
  const at = made.findIndex(([o]) => o.name.startsWith("min_"));
  fill(node, at < 0 ? rest : [...rest.slice(0, at), fold, ...rest.slice(at)]);
}
