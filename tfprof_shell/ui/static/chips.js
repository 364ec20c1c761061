// The line's name filters as chips: each regex of -start/-show/-hide/-trim_name_regexes
// and -account_type_regexes, removable one by one, and a reset that drops them all.

import {el, fill} from "./dom.js";
import * as L from "./line.js";

/** Filter options, the word a chip shows for each, and the value that means "none". */
export const FILTERS = [
  ["start_name_regexes", "focus", ".*"], ["show_name_regexes", "show", ".*"],
  ["hide_name_regexes", "hide", ""], ["trim_name_regexes", "trim", ""],
  ["account_type_regexes", "account", ".*"],
];

/** Split a regex list as the shell does (commas; a regex cannot hold a bare comma). */
function items(value) {
  return value.split(",").filter((x) => x);
}

/** The chips of a line: [{option, label, regex}]. */
export function chipsOf(line) {
  const out = [];
  for (const [name, label, none] of FILTERS) {
    const value = L.option(line, name);
    if (value === undefined || value === none) continue;
    for (const regex of items(value)) out.push({option: name, label, regex});
  }
  return out;
}

/** The line without one regex of a filter option (the option dropped when it empties). */
export function withoutChip(line, chip) {
  const left = items(L.option(line, chip.option) || "").filter((x) => x !== chip.regex);
  return L.withOption(line, chip.option, left.join(","));
}

/** Fill `node` with the line's chips; a click calls go(newLine). */
export function renderChips(node, line, go) {
  const chips = chipsOf(line);
  node.hidden = !chips.length;
  if (!chips.length) {
    fill(node);
    return;
  }
  let all = line;
  for (const [name] of FILTERS) all = L.withOption(all, name, "");
  fill(node, el("span", {class: "chips-title", text: "filters:"}),
    chips.map((c) => el("span", {class: "chip", title: `-${c.option} ${c.regex}`},
      el("span", {class: "chip-kind", text: c.label}), " ", c.regex,
      el("button", {class: "chip-x", title: "remove this filter", "aria-label": "remove",
        onclick: () => go(withoutChip(line, c))}, "\u00d7"))),
    el("button", {class: "chip-reset", onclick: () => go(all)}, "reset filters"));
}
