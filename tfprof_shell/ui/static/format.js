// Number formatting for the tables and charts, by unit.

function trim(value) {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** Microseconds as us, ms or sec. */
export function time(us) {
  const a = Math.abs(us);
  if (a >= 1e6) return trim(us / 1e6) + "sec";
  if (a >= 1e3) return trim(us / 1e3) + "ms";
  return us + "us";
}

/** Bytes as B, KB, MB, GB (powers of 1000, as tfprof prints them). */
export function bytes(b) {
  const a = Math.abs(b);
  if (a >= 1e9) return trim(b / 1e9) + "GB";
  if (a >= 1e6) return trim(b / 1e6) + "MB";
  if (a >= 1e3) return trim(b / 1e3) + "KB";
  return b + "B";
}

/** Counts with k, m, b suffixes. */
export function count(n) {
  const a = Math.abs(n);
  if (a >= 1e9) return trim(n / 1e9) + "b";
  if (a >= 1e6) return trim(n / 1e6) + "m";
  if (a >= 1e3) return trim(n / 1e3) + "k";
  return String(n);
}

/** The formatter for a unit name of the columns answer (microseconds, bytes, count). */
export function forUnit(unit) {
  return unit === "microseconds" ? time : unit === "bytes" ? bytes : count;
}

/** A signed value: +1.2ms, -3us. */
export function signed(value, fmt) {
  return (value > 0 ? "+" : value < 0 ? "-" : "") + fmt(Math.abs(value));
}

/** new/base as x1.23, or "new"/"gone". */
export function ratio(value, base) {
  if (base === 0) return value === 0 ? "" : "new";
  if (value === 0) return "gone";
  return "x" + (value / base).toFixed(2);
}

export function percent(part, whole) {
  return whole ? (100 * part / whole).toFixed(2) + "%" : "";
}

/** Nanoseconds as ns, us, ms or s, with 3 significant digits. */
export function nanos(ns) {
  const a = Math.abs(ns);
  if (a >= 1e9) return trim(ns / 1e9) + "s";
  if (a >= 1e6) return trim(ns / 1e6) + "ms";
  if (a >= 1e3) return trim(ns / 1e3) + "us";
  return Math.round(ns) + "ns";
}

/** `text` cut in the middle to at most `max` characters (siblings keep their ends). */
export function middle(text, max) {
  if (text.length <= max) return text;
  if (max < 4) return text.slice(0, Math.max(0, max));
  const tail = Math.floor((max - 1) / 2);
  return text.slice(0, max - 1 - tail) + "\u2026" + text.slice(text.length - tail);
}

/** The text between a balanced pair ending at `end` (exclusive of the pair), or -1. */
function openerOf(text, end, open, close) {
  let depth = 0;
  for (let i = end; i >= 0; i--) {
    if (text[i] === close) depth++;
    else if (text[i] === open && --depth === 0) return i;
  }
  return -1;
}

/** A kernel's readable short name: the function's own name without its namespace,
 * template arguments and parameters (`void at::native::foo<4, ...>(int, ...)` is
 * `foo`); mangled names by their first identifiers. */
export function kernelShort(name) {
  let s = name.trim();
  if (/^_Z/.test(s)) {
    const ids = [];
    const re = /(\d+)/g;
    let at = 2;
    while (at < s.length && ids.length < 4) {
      re.lastIndex = at;
      const m = re.exec(s);
      if (!m) break;
      const n = Number(m[1]), from = m.index + m[1].length;
      const id = s.slice(from, from + n);
      if (/^[A-Za-z_]\w*$/.test(id) && id.length === n) ids.push(id);
      at = from + Math.max(n, 1);
    }
    return ids.length ? ids.join("::") : s;
  }
  s = s.replace(/^(void|__global__)\s+/, "");
  if (s.endsWith(")")) {
    const open = openerOf(s, s.length - 1, "(", ")");
    if (open > 0) s = s.slice(0, open);
  }
  while (s.endsWith(">")) {
    const open = openerOf(s, s.length - 1, "<", ">");
    if (open <= 0) break;
    s = s.slice(0, open);
  }
  const parts = s.split("::");
  return parts[parts.length - 1].trim() || name;
}

/** A device as the frameworks name it: `gpu:0` for `/job:localhost/.../device:GPU:0`. */
export function shortDevice(name) {
  const m = /(?:device:)?(gpu|cpu|tpu|xpu|mtia):(\d+)/i.exec(name || "");
  return m ? `${m[1].toLowerCase()}:${m[2]}` : name;
}
