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
