// The page's state is a literal shell line; these edit it the way a user would.

/** Words of a line, split as the shell splits it (single spaces, empty pieces dropped). */
export function words(line) {
  return line.split(" ").filter((w) => w);
}

/** The line's command word ("" for none). */
export function command(line) {
  return words(line)[0] || "";
}

/** Replace the command word. */
export function withCommand(line, name) {
  const w = words(line);
  if (w.length) w[0] = name; else w.push(name);
  return w.join(" ");
}

/** The value typed for -name, or undefined. */
export function option(line, name) {
  const w = words(line);
  const i = w.lastIndexOf("-" + name);
  return i >= 0 && i + 1 < w.length && !/^-[a-z]/.test(w[i + 1]) ? w[i + 1] : undefined;
}

/** The line with -name set to value (value "" or null removes the option). */
export function withOption(line, name, value) {
  const w = words(line);
  const flag = "-" + name;
  const out = [];
  for (let i = 0; i < w.length; i++) {
    if (w[i] === flag) {
      if (i + 1 < w.length && !/^-[a-z]/.test(w[i + 1])) i++;
      continue;
    }
    out.push(w[i]);
  }
  if (value !== "" && value !== null && value !== undefined) out.push(flag, String(value));
  return out.join(" ");
}

/** A regular expression matching exactly `name`, safe inside a comma list on one line. */
export function exactRegex(name) {
  const escaped = name.replace(/[\\^$.*+?()[\]{}|]/g, (c) => "\\" + c)
    .replace(/[ ,'"]/g, (c) => "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0"));
  return "^" + escaped + "$";
}

/** Add `regex` to a regex-list option whose default is `fallback` (e.g. ".*"). */
export function addRegex(line, name, regex, replaceDefault) {
  const current = option(line, name);
  if (current === undefined || replaceDefault) return withOption(line, name, regex);
  const items = current.split(",").filter((x) => x && x !== regex);
  items.push(regex);
  return withOption(line, name, items.join(","));
}
