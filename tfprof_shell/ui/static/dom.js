// Building DOM nodes safely: text always goes through textContent, never markup.

/** el("div", {class: "x", title: "t"}, child, "text", ...) -> Element. */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

/** An SVG element with attributes (numbers and names only). */
export function svg(tag, attrs, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Remove every child of node, then append the given ones. */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** `text` with each case-insensitive occurrence of `query` wrapped in <mark>. */
export function highlighted(text, query) {
  if (!query) return [document.createTextNode(text)];
  const out = [];
  const lower = text.toLowerCase();
  const q = query.toLowerCase();
  let at = 0;
  for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, at)) {
    if (i > at) out.push(document.createTextNode(text.slice(at, i)));
    out.push(el("mark", {text: text.slice(i, i + q.length)}));
    at = i + q.length;
  }
  if (at < text.length) out.push(document.createTextNode(text.slice(at)));
  return out;
}
