// @ts-check
// Building DOM nodes. Text always goes in as text nodes, never as HTML: every string shown
// here may come from a user, an agent or a flow.

let counter = 0;

/**
 * The element of the page with ``id`` (index.html has each one the script asks for).
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found;
}

/**
 * A fresh id for label/aria wiring.
 */
export function uid(prefix = "id") {
  counter += 1;
  return `${prefix}-${counter}`;
}

/**
 * What a node may hold: nodes, text, numbers; null, undefined and false stand for nothing
 * (so ``cond && node`` reads naturally).
 * @typedef {Node | string | number | false | null | undefined} Leaf
 */
/**
 * A child, or a list of them (as ``map`` gives).
 * @typedef {Leaf | Leaf[]} Child
 */

/**
 * h("button", {type: "button", class: "x", onclick: fn}, "text", child, …)
 * Attributes that are null, undefined or false are left out; true sets an empty attribute.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown> | null} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = String(value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    } else if (key === "value" && "value" in el) el.value = String(value);
    else if (key === "checked" && "checked" in el) el.checked = Boolean(value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/**
 * @template {Element | DocumentFragment} P
 * @param {P} parent
 * @param {Child[]} children
 * @returns {P}
 */
export function append(parent, children) {
  for (const child of children) {
    if (Array.isArray(child)) append(parent, child);
    else if (child === null || child === undefined || child === false) continue;
    else parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/**
 * @template {Element} E
 * @param {E} el
 * @returns {E}
 */
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

/**
 * The elements of ``type`` that ``selector`` finds in ``root``, in document order.
 * @template {Element} E
 * @param {ParentNode} root
 * @param {string} selector
 * @param {new (...args: any[]) => E} type
 * @returns {E[]}
 */
export function all(root, selector, type) {
  /** @type {E[]} */
  const found = [];
  for (const el of root.querySelectorAll(selector)) if (el instanceof type) found.push(el);
  return found;
}

/**
 * Disable (or enable again) the form controls ``selector`` finds in ``root``.
 * @param {ParentNode} root
 * @param {string} selector
 * @param {boolean} disabled
 */
export function disable(root, selector, disabled) {
  for (const control of root.querySelectorAll(selector)) {
    if ("disabled" in control) control.disabled = disabled;
  }
}

/**
 * Screen-reader-only text.
 * @param {string} text
 */
export function sr(text) {
  return h("span", { class: "sr-only" }, text);
}

/**
 * Say something to screen readers without moving focus.
 * @param {string} text
 */
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
 * @template {HTMLElement} E
 * @param {E} el
 * @param {{hide?: boolean}} [options]
 * @returns {E}
 */
export function untilServerIsBack(el, { hide = false } = {}) {
  el.dataset.unreachable = hide ? "hide" : "empty";
  return el;
}

/** Whatever said the server could not be reached no longer holds. */
export function serverIsBack() {
  for (const el of document.querySelectorAll("[data-unreachable]")) {
    if (!(el instanceof HTMLElement)) continue;
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
/** @type {Record<string, string[]>} */
const RICH_ATTRIBUTES = { A: ["href", "title"], OL: ["start"], TH: ["align"], TD: ["align"] };

/** @param {string} value */
function safeHref(value) {
  try {
    const url = new URL(value, location.href);
    return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * @template {Element | DocumentFragment} T
 * @param {Element} source
 * @param {T} target
 * @returns {T}
 */
function rebuild(source, target) {
  for (const node of source.childNodes) {
    if (node instanceof Text) {
      target.append(document.createTextNode(node.data));
    } else if (node instanceof Element) {
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
 * @param {string} html
 */
export function richText(html) {
  const parsed = new DOMParser().parseFromString(`<body>${html}</body>`, "text/html");
  return rebuild(parsed.body, document.createDocumentFragment());
}
