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
