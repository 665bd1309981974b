// Building DOM nodes. Text always goes in as text nodes, never as HTML: every string shown
// here may come from a user, an agent or a flow.

let counter = 0;

/** A fresh id for label/aria wiring. */
export function uid(prefix = "id") {
  counter += 1;
  return `${prefix}-${counter}`;
}

/**
 * h("button", {type: "button", class: "x", onclick: fn}, "text", child, …)
 * Attributes that are null, undefined or false are left out; true sets an empty attribute.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "value") el.value = value;
    else if (key === "checked") el.checked = Boolean(value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

/** Screen-reader-only text. */
export function sr(text) {
  return h("span", { class: "sr-only" }, text);
}

/** Say something to screen readers without moving focus. */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  // A change after a tick is announced even when the text repeats.
  setTimeout(() => {
    region.textContent = text;
  }, 50);
}

/**
 * Mark ``el`` as saying that the server cannot be reached: it is emptied (and hidden, with
 * ``hide``) as soon as the live stream is back (:func:`serverIsBack`).
 */
export function untilServerIsBack(el, { hide = false } = {}) {
  el.dataset.unreachable = hide ? "hide" : "empty";
  return el;
}

/** Whatever said the server could not be reached no longer holds. */
export function serverIsBack() {
  for (const el of document.querySelectorAll("[data-unreachable]")) {
    const hide = el.dataset.unreachable === "hide";
    delete el.dataset.unreachable;
    clear(el);
    if (hide) el.hidden = true;
  }
}

// The elements and attributes the server's Markdown renderer may send (server/markdown.py).
const RICH_TAGS = new Set([
  "P", "BR", "HR", "STRONG", "EM", "DEL", "CODE", "PRE", "BLOCKQUOTE", "UL", "OL", "LI", "A",
  "H1", "H2", "H3", "H4", "H5", "H6", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD",
]);
const RICH_ATTRIBUTES = { A: ["href", "title"], OL: ["start"], TH: ["align"], TD: ["align"] };

function safeHref(value) {
  try {
    const url = new URL(value, location.href);
    return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

function rebuild(source, target) {
  for (const node of source.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) {
      target.append(document.createTextNode(node.data));
    } else if (node.nodeType === Node.ELEMENT_NODE) {
      if (!RICH_TAGS.has(node.tagName)) {
        rebuild(node, target); // an element we do not draw: keep its text only
        continue;
      }
      const copy = document.createElement(node.tagName.toLowerCase());
      for (const name of RICH_ATTRIBUTES[node.tagName] || []) {
        const value = node.getAttribute(name);
        if (value === null) continue;
        if (name === "href") {
          const href = safeHref(value);
          if (href === null) continue;
          copy.setAttribute("href", href);
          copy.setAttribute("rel", "noopener noreferrer nofollow");
          copy.setAttribute("target", "_blank");
        } else {
          copy.setAttribute(name, value);
        }
      }
      rebuild(node, copy);
      target.append(copy);
    }
  }
  return target;
}

/**
 * Formatted text from the server's sanitized HTML, without innerHTML: DOMParser reads it
 * into an inert document (no script runs, nothing loads), and a fresh fragment is built
 * from it here, element by element, keeping only the allowed elements and attributes.
 * The server already sanitized it (nh3); this is the page's own line of defence.
 */
export function richText(html) {
  const parsed = new DOMParser().parseFromString(`<body>${html}</body>`, "text/html");
  return rebuild(parsed.body, document.createDocumentFragment());
}
