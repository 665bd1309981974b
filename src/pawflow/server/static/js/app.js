// @ts-check
// The web chat: sign-in check, routes (/, /?c=<conversation>, /confirmations), the
// conversation list, the pending badge, toasts, and the live connection that keeps it all
// current in every open tab.

import { AdminView } from "./admin.js";
import * as api from "./api.js";
import { redrawBlocks, refreshBlocks } from "./blocks.js";
import { ConversationView, urgencyLabel } from "./conversation.js";
import { all, announce, byId, clear, h, serverIsBack, uid } from "./dom.js";
import { expiryText, fromNow } from "./format.js";
import { InboxView, loadPending } from "./inbox.js";
import { InvitationList } from "./invitations.js";
import { Live } from "./live.js";
import { notificationSettings } from "./settings.js";
import * as state from "./state.js";

/** @import { Interaction, MessageOut } from "./contract.js" */
/** @import { LiveState } from "./live.js" */

const main = byId("main");
const sidebar = byId("sidebar");
const layout = byId("layout");
const badge = byId("pending-badge");
const pendingButton = byId("pending-button");
const connection = byId("connection");
const toasts = byId("toasts");

const READY_WAIT_MS = 1500;
const TOAST_MS = 8000;

/** @typedef {{name: "home"} | {name: "pending"} | {name: "admin"} | {name: "conversation", id: string}} Route */

let route = parseRoute(location.href);
/** @type {ConversationView | InboxView | null} */
let view = null;
let hydrated = false;
/** @type {Promise<void> | null} */
let hydrating = null;
let hydrateAgain = false;
/** @type {Live | null} */
let live = null;
const conversationList = h("ul", { class: "conversation-list" });
const invitations = new InvitationList((conversation) => {
  state.addConversation(conversation);
  navigate(`/?c=${encodeURIComponent(conversation.id)}`);
});

// -- routes ---------------------------------------------------------------------------------

/**
 * @param {string} href
 * @returns {Route}
 */
function parseRoute(href) {
  const url = new URL(href, location.origin);
  if (url.pathname === "/confirmations") return { name: "pending" };
  if (url.pathname === "/admin") return { name: "admin" };
  const id = url.searchParams.get("c");
  return id ? { name: "conversation", id } : { name: "home" };
}

/** @param {string} href */
function navigate(href) {
  if (href !== location.pathname + location.search) history.pushState(null, "", href);
  route = parseRoute(href);
  render({ focus: true });
}

document.addEventListener("click", (event) => {
  const link = event.target instanceof Element ? event.target.closest("a[data-nav]") : null;
  const href = link && link.getAttribute("href");
  if (!href || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(href);
});

window.addEventListener("popstate", () => {
  route = parseRoute(location.href);
  render({ focus: true });
});

/** @param {{focus?: boolean}} [options] */
function render({ focus = false } = {}) {
  if (view instanceof ConversationView || view instanceof InboxView) view.destroy();
  view = null;
  clear(main);
  layout.dataset.view = route.name;
  if (route.name === "conversation") {
    state.unread.delete(route.id);
    view = new ConversationView(route.id, state.me.user);
    main.append(view.element);
    document.title = `${state.conversationTitle(route.id)} · PawFlow`;
    if (hydrated) view.load();
  } else if (route.name === "pending") {
    view = new InboxView();
    main.append(view.element);
    view.refresh(hydrated);
    document.title = "Pending · PawFlow";
  } else if (route.name === "admin") {
    const admin = new AdminView();
    main.append(admin.element);
    admin.refresh();
    document.title = "Admin · PawFlow";
    if (focus) admin.focusTitle();
  } else {
    main.append(home());
    document.title = "PawFlow";
  }
  renderConversationList();
  updateBadge();
  if (focus && view) view.focusTitle();
  else if (focus) main.focus();
}

const homeCount = h("span");

function refreshHome() {
  const count = state.pending().length;
  homeCount.textContent = !hydrated
    ? "Loading… "
    : count
      ? `${count} request${count === 1 ? " is" : "s are"} waiting for your answer. `
      : "Nothing is waiting for your answer right now. ";
}

function home() {
  refreshHome();
  return h(
    "section",
    { class: "home" },
    h("h2", { tabindex: "-1" }, "Welcome"),
    h(
      "p",
      null,
      homeCount,
      h("a", { href: "/confirmations", dataset: { nav: "" } }, "Open the pending requests"),
      ", or choose a conversation.",
    ),
    notificationSettings(),
    account(),
    about(),
  );
}

/** The "Account" section: "Sign out everywhere" ends every browser session of the user (this
 * one too); API tokens stay, each revoked on its own. */
function account() {
  const button = h("button", { type: "button" }, "Sign out everywhere");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await api.action("sign_out_everywhere", {});
    } finally {
      location.href = "/";
    }
  });
  return h(
    "details",
    { class: "settings account" },
    h("summary", null, "Account"),
    h(
      "p",
      null,
      "Signed in on another device or browser you no longer use? End every browser session of yours, this one too. API tokens stay: ",
      h("code", null, "pawflow users token revoke ID"),
      " ends one.",
    ),
    button,
  );
}

/** The "About" section: the server's version of PawFlow and where its API is described. */
function about() {
  return h(
    "details",
    { class: "settings about" },
    h("summary", null, "About"),
    h(
      "p",
      null,
      `PawFlow ${state.me.version} — ask a person something and wait for the answer durably. `,
      h("a", { href: "/docs" }, "API reference"),
      ".",
    ),
  );
}

// -- the conversation list ------------------------------------------------------------------

function renderSidebar() {
  const titleId = uid("conversations-title");
  const inputId = uid("new-title");
  const input = h("input", { id: inputId, type: "text", maxlength: 500, autocomplete: "off" });
  const error = h("p", { class: "field-error", role: "alert", hidden: true });
  const toggle = h("button", { type: "button", class: "small", "aria-expanded": "false" }, "New");
  const form = h(
    "form",
    { class: "new-conversation", hidden: true, "aria-label": "New conversation" },
    h("label", { for: inputId }, "Title of the new conversation"),
    input,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "primary small" }, "Create"),
      h("button", { type: "button", class: "small", onclick: () => close() }, "Cancel"),
    ),
    error,
  );
  const close = () => {
    form.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
    toggle.focus();
  };
  toggle.addEventListener("click", () => {
    form.hidden = !form.hidden;
    toggle.setAttribute("aria-expanded", String(!form.hidden));
    if (!form.hidden) input.focus();
  });
  toggle.setAttribute("aria-label", "New conversation");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    try {
      const found = await api.action("create_conversation", { title: input.value.trim() });
      state.addConversation(found.conversation);
      input.value = "";
      form.hidden = true;
      toggle.setAttribute("aria-expanded", "false");
      navigate(`/?c=${encodeURIComponent(found.conversation.id)}`);
    } catch (failure) {
      error.textContent = api.messageOf(failure);
      error.hidden = false;
    }
  });
  clear(sidebar).append(
    h("div", { class: "sidebar-head" }, h("h2", { id: titleId }, "Conversations"), toggle),
    form,
    invitations.el,
    conversationList,
  );
  conversationList.setAttribute("aria-labelledby", titleId);
}

function renderConversationList() {
  const list = [...state.conversations.values()].sort((a, b) =>
    a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0,
  );
  clear(conversationList);
  if (!list.length) {
    conversationList.append(
      h("li", { class: "empty" }, hydrated ? "No conversations yet." : "Loading…"),
    );
    return;
  }
  for (const conversation of list) {
    const count = state.pendingIn(conversation.id);
    const current = route.name === "conversation" && route.id === conversation.id;
    const unread = state.unread.has(conversation.id);
    conversationList.append(
      h(
        "li",
        null,
        h(
          "a",
          {
            href: `/?c=${encodeURIComponent(conversation.id)}`,
            dataset: { nav: "", conversationId: conversation.id },
            "aria-current": current ? "page" : null,
          },
          h("span", { class: "conversation-name" }, conversation.title || "Untitled conversation"),
          unread ? h("span", { class: "dot" }, h("span", { class: "sr-only" }, "new messages")) : null,
          count
            ? h("span", { class: "count" }, String(count), h("span", { class: "sr-only" }, " pending"))
            : null,
        ),
      ),
    );
  }
}

// -- pending badge and toasts ---------------------------------------------------------------

function updateBadge() {
  const count = state.pending().length;
  badge.textContent = String(count);
  badge.classList.toggle("badge--zero", count === 0);
  pendingButton.setAttribute(
    "aria-label",
    `Pending requests: ${count}`,
  );
  if (route.name === "pending") pendingButton.setAttribute("aria-current", "page");
  else pendingButton.removeAttribute("aria-current");
  const adminLink = byId("admin-link");
  if (route.name === "admin") adminLink.setAttribute("aria-current", "page");
  else adminLink.removeAttribute("aria-current");
  const base = document.title.replace(/^\(\d+\) /, "");
  document.title = count ? `(${count}) ${base}` : base;
}

/**
 * A notice over the page; a high-urgency one stays until dismissed.
 * @param {{title?: string | null, message: string, urgency?: string, conversationId?: string | null}} notice
 */
function toast({ title, message, urgency = "normal", conversationId = null }) {
  const item = h(
    "div",
    { class: `toast urgency--${urgency}`, role: urgency === "high" ? "alert" : "status" },
    h("p", { class: "toast-head" }, h("span", { class: `urgency-tag urgency-tag--${urgency}` }, urgencyLabel(urgency)), title ? [" ", h("strong", null, title)] : null),
    h("p", { class: "toast-message" }, message),
  );
  const dismiss = () => item.remove();
  const actions = h("div", { class: "toast-actions" });
  if (conversationId) {
    actions.append(
      h(
        "a",
        {
          href: `/?c=${encodeURIComponent(conversationId)}`,
          dataset: { nav: "" },
          onclick: dismiss,
        },
        "Open",
      ),
    );
  }
  actions.append(
    h("button", { type: "button", class: "small quiet", "aria-label": "Dismiss notification", onclick: dismiss }, "Dismiss"),
  );
  item.append(actions);
  toasts.append(item);
  if (urgency !== "high") setTimeout(dismiss, TOAST_MS);
}

// -- state changes and events -----------------------------------------------------------------

state.onRecord((record, old) => {
  refreshBlocks(record, old);
  if (view instanceof ConversationView) {
    if (record.conversation_id === view.id) view.addRecord(record);
    view.refreshHead();
  }
  if (view instanceof InboxView) view.refresh();
  if (route.name === "home") refreshHome();
  updateBadge();
  renderConversationList();
  if (old && old.status === "pending" && record.status !== "pending" && state.mine(record)) {
    announce(`A request was ${record.status}.`);
  }
});

state.onConversations(() => {
  renderConversationList();
  if (view instanceof ConversationView) view.refreshHead();
  if (view instanceof InboxView) view.refreshTitles();
});

/**
 * One event of the live stream, by its type; ``data`` is the server's JSON for it.
 * @param {string} type
 * @param {any} data
 */
function onEvent(type, data) {
  if (type === "invitation") {
    invitations.load().catch(() => {}); // offered, not joined: only the invitation shows
    return;
  }
  const conversationId = data.conversation_id;
  if (hydrated && conversationId && !state.conversations.has(conversationId)) {
    loadConversations().catch(() => {}); // shared with us since the list was read
  }
  if (type === "interaction_request" || type === "interaction_answered") {
    /** @type {Interaction} */
    const record = data;
    const known = state.records.has(record.id);
    state.upsert(record);
    if (type === "interaction_request" && record.status === "pending" && !state.waiting.has(record.id)) {
      refreshWaiting();
    }
    if (!known && type === "interaction_request" && state.waitsForMe(record)) {
      const here = view instanceof ConversationView && view.id === record.conversation_id;
      if (!here) {
        toast({
          title: `New request in ${state.conversationTitle(record.conversation_id)}`,
          message: record.title || record.message,
          conversationId: record.conversation_id,
        });
      }
    }
  } else if (type === "message") {
    /** @type {MessageOut} */
    const message = data;
    if (view instanceof ConversationView && view.id === message.conversation_id) {
      view.addMessage(message);
    } else if (message.role !== "user" || message.author !== state.me.user) {
      state.unread.add(message.conversation_id);
      renderConversationList();
    }
  } else if (type === "notification") {
    toast({
      title: data.title,
      message: data.message,
      urgency: data.urgency,
      conversationId: data.conversation_id,
    });
  } else if (type === "agent_progress") {
    if (view instanceof ConversationView && view.id === data.conversation_id) view.showTyping(data);
  }
}

// -- loading --------------------------------------------------------------------------------

let waitingRead = /** @type {Promise<void> | null} */ (null);
let waitingAgain = false;

/** Read again whom the pending requests wait for (a request arrived); redraw what changed. */
function refreshWaiting() {
  if (waitingRead) {
    waitingAgain = true; // arrived after the read began: read once more after it
    return;
  }
  waitingRead = (async () => {
    try {
      const before = new Map(state.waiting);
      const found = await api.action("list_inbox", { filter: "visible" });
      state.setWaiting(found.items);
      for (const item of found.items) state.upsert(item.interaction);
      for (const [id, now] of state.waiting) {
        const was = before.get(id);
        const record = state.records.get(id);
        if (record && (!was || was.why !== now.why)) redrawBlocks(record);
      }
      if (view instanceof InboxView) view.refresh();
      if (route.name === "home") refreshHome();
      updateBadge();
      renderConversationList();
    } catch {
      // The next hydrate reads it again.
    } finally {
      waitingRead = null;
      if (waitingAgain) {
        waitingAgain = false;
        refreshWaiting();
      }
    }
  })();
}

async function loadConversations() {
  const readFrom = state.conversationsStamp();
  const found = await api.action("list_conversations", {});
  state.setConversations(found.conversations, readFrom);
}

/** @param {string} id */
async function getRecord(id) {
  return (await api.action("get_interaction", { request_id: id })).interaction;
}

/**
 * Read everything shown from the server: on start, after a reconnect, on a reset.
 * @returns {Promise<void>}
 */
function hydrate() {
  if (hydrating) {
    // Something may have changed after the read in flight began: read once more after it.
    hydrateAgain = true;
    return hydrating;
  }
  hydrating = (async () => {
    try {
      await Promise.all([loadConversations(), loadPending(getRecord), invitations.load()]);
      hydrated = true;
      if (view instanceof ConversationView) await view.load();
      if (view instanceof InboxView) view.refresh(true);
      if (route.name === "home") refreshHome();
      renderConversationList();
    } catch (error) {
      if (!(error instanceof api.ApiError && error.status === 401)) {
        connection.textContent = "Could not load; retrying…";
        setTimeout(() => hydrate(), 3000);
      }
    } finally {
      hydrating = null;
      if (hydrateAgain) {
        hydrateAgain = false;
        hydrate();
      }
    }
  })();
  return hydrating;
}

/** @param {LiveState} stateName */
function setConnection(stateName) {
  connection.dataset.state = stateName;
  connection.textContent =
    stateName === "live" ? "Live" : stateName === "reconnecting" ? "Reconnecting…" : "Connecting…";
}

// -- signed out -----------------------------------------------------------------------------

function signedOut() {
  if (live) live.stop();
  live = null;
  layout.dataset.view = "signed-out";
  clear(sidebar);
  pendingButton.hidden = true;
  byId("sign-out").hidden = true;
  byId("who").textContent = "";
  connection.textContent = "";
  clear(main).append(
    h(
      "section",
      { class: "signed-out" },
      h("h2", null, "Sign in to PawFlow"),
      h(
        "p",
        null,
        "Open the one-time sign-in link that ",
        h("code", null, "pawflow serve"),
        " printed, or make a new one with ",
        h("code", null, "pawflow users signin-link NAME"),
        ".",
      ),
      h(
        "p",
        null,
        "Where your organization's sign-in is set up, use it from ",
        h("a", { href: "/signin" }, "the sign-in page"),
        ".",
      ),
    ),
  );
}

api.onSignedOut(() => signedOut());

// Relative times ("3 minutes ago", "expires in 2 hours") are kept current.
setInterval(() => {
  for (const time of all(document, "time[datetime]", HTMLTimeElement)) {
    time.textContent = fromNow(time.dateTime);
  }
  for (const expiry of all(document, ".expiry", HTMLElement)) {
    expiry.textContent = expiryText(expiry.dataset.expires || null);
  }
}, 30000);

async function boot() {
  // The installable app's service worker, which shows pushed requests (the chat works
  // the same without it).
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
  let session;
  try {
    session = await api.session();
  } catch {
    clear(main).append(
      h("p", { class: "loading", role: "alert" }, "The server cannot be reached. Reload the page to try again."),
    );
    return;
  }
  if (!session) {
    signedOut();
    return;
  }
  state.me.user = session.user;
  state.me.version = session.version;
  byId("who").textContent = session.user;
  pendingButton.hidden = false;
  // Only an admin sees the way to the admin page (the server refuses anyone else anyway).
  byId("admin-link").hidden = session.role !== "admin";
  const signOutButton = byId("sign-out");
  signOutButton.hidden = false;
  signOutButton.addEventListener("click", async () => {
    try {
      await api.signOut();
    } finally {
      location.href = session.signout_url || "/";
    }
  });
  renderSidebar();
  render();
  // Events first, then state: whatever happens after the stream's starting point arrives as
  // an event, whatever happened before is in what the actions return.
  const fallback = setTimeout(() => hydrate(), READY_WAIT_MS);
  live = new Live({
    onEvent,
    onReady: () => {
      clearTimeout(fallback);
      hydrate();
    },
    onReconnected: () => {
      serverIsBack();
      hydrate();
    },
    onReset: () => hydrate(),
    onState: setConnection,
    onGone: async () => {
      if ((await api.session().catch(() => true)) === null) signedOut();
    },
  });
  live.start();
}

boot();
