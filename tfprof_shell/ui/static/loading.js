// The loading page: asks /api/progress how far loading got, opens the real page when ready.

const POLL_MS = 500;

function megabytes(bytes) {
  const mb = bytes / 1e6;
  return mb >= 10 ? mb.toFixed(0) : mb.toFixed(1);
}

function seconds(s) {
  s = Math.round(s);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

/** The figures line of one progress answer: amount done, rate and time left. */
export function figures(p) {
  const parts = [];
  if (p.total > 0) {
    parts.push(`${Math.floor(100 * Math.min(p.done / p.total, 1))}%`);
    if (p.unit === "bytes") {
      parts.push(`${megabytes(p.done)} of ${megabytes(p.total)} MB`);
      if (p.done > 0 && p.elapsed > 0) parts.push(`${megabytes(p.done / p.elapsed)} MB/s`);
    } else {
      parts.push(`${Math.floor(p.done)} of ${p.total} ${p.unit}`);
    }
  }
  parts.push(p.left === null || p.left === undefined ? `${seconds(p.elapsed)} so far`
                                                     : `about ${seconds(p.left)} left`);
  return parts.join(" \u00b7 ");
}

function show(p) {
  const bar = document.getElementById("loading-bar");
  const what = document.getElementById("loading-what");
  const line = document.getElementById("loading-figures");
  if (p.what) what.textContent = `Loading ${p.what}\u2026`;
  if (p.total > 0) {
    bar.max = p.total;
    bar.value = Math.min(p.done, p.total);
  }
  line.textContent = figures(p);
}

function stopped(message) {
  const line = document.getElementById("loading-figures");
  line.className = "error";
  line.textContent = message;
  document.getElementById("loading-bar").hidden = true;
}

async function poll() {
  let p;
  try {
    const response = await fetch("/api/progress", {credentials: "same-origin"});
    p = await response.json();
    if (!response.ok) throw new Error(p.error || `error ${response.status}`);
  } catch (e) {
    stopped("tfprof ui stopped: see the terminal it runs in.");
    return;
  }
  if (p.error) {
    stopped(`Loading failed: ${p.error}`);
    return;
  }
  if (p.ready) {
    window.location.reload();
    return;
  }
  show(p);
  setTimeout(poll, POLL_MS);
}

poll();
