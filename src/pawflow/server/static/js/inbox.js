// @ts-check
// The pending panel (/confirmations): every request waiting for the user's answer (their own,
// assigned to them, to their groups, or to someone they stand in for), soonest due first,
// answerable in place; then the requests they asked that wait for someone else, without
// controls. The inbox for answering days later.

import { action, ApiError, listInteractions } from "./api.js";
import { renderBlock } from "./blocks.js";
import { all, clear, h, uid } from "./dom.js";
import { byCreation, conversationTitle, mine, pending, records, setWaiting, upsert, waiting, waitsForOthers } from "./state.js";

/** @import { Interaction } from "./contract.js" */

/** @typedef {"all" | "own" | "mine" | "groups" | "claimed"} InboxFilter */

/** @type {[InboxFilter, string][]} */
const FILTERS = [
  ["all", "All"],
  ["own", "Asked by me"],
  ["mine", "Assigned to me"],
  ["groups", "To my groups"],
  ["claimed", "Claimed by me"],
];

/** @type {[string, string][]} */
const KEYS = [
  ["j", "next"],
  ["k", "previous"],
  ["y", "yes"],
  ["n", "no"],
  ["o", "open"],
  ["x", "select"],
];

/** @type {Record<string, string>} */
const WHY = { mine: "assigned to you", groups: "assigned to your group", claimed: "claimed by you" };

/**
 * Read the user's pending requests; a request we held as pending that is no longer in the
 * list left pending while we were away, so its record is read again.
 * @param {(id: string) => Promise<Interaction>} getRecord
 */
export async function loadPending(getRecord) {
  const [found, inbox] = await Promise.all([
    listInteractions({ status: "pending", limit: 500 }),
    action("list_inbox", { filter: "visible" }),
  ]);
  setWaiting(inbox.items);
  const ids = new Set([...found, ...inbox.items.map((item) => item.interaction)].map((record) => record.id));
  for (const item of inbox.items) upsert(item.interaction);
  for (const record of found) upsert(record);
  const stale = [...records.values()].filter(
    (record) => record.status === "pending" && mine(record) && !ids.has(record.id),
  );
  await Promise.all(
    stale.map(async (record) => {
      try {
        upsert(await getRecord(record.id));
      } catch {
        // Gone or unreachable: the next load tries again.
      }
    }),
  );
}

export class InboxView {
  constructor() {
    const titleId = uid("inbox-title");
    this.title = h("h2", { id: titleId, tabindex: "-1" }, "Waiting for you");
    this.lede = h("p", { class: "lede" });
    this.list = h("ol", { class: "inbox-list", "aria-labelledby": titleId });
    this.empty = h("p", { class: "empty", hidden: true }, "Nothing is waiting for you. New requests appear here as they arrive.");
    this.shown = new Set();
    /** @type {InboxFilter} */
    this.filter = "all";
    this.filters = h(
      "div",
      { class: "inbox-filters", role: "group", "aria-label": "Show" },
      ...FILTERS.map(([value, label]) =>
        h(
          "button",
          { type: "button", "aria-pressed": String(value === this.filter), dataset: { filter: value }, onclick: () => this.show(value) },
          label,
        ),
      ),
    );
    const othersId = uid("others-title");
    this.othersList = h("ol", { class: "inbox-list inbox-others-list", "aria-labelledby": othersId });
    this.others = h(
      "section",
      { class: "inbox-others", hidden: true, "aria-labelledby": othersId },
      h("h3", { id: othersId }, "Waiting for others"),
      this.othersList,
    );
    // Several confirms decided together (respond_each): each answered on its own.
    this.bulkCount = h("span", { class: "inbox-bulk-count" });
    this.bulkYes = h("button", { type: "button", class: "primary small", onclick: () => this.decide(true) }, "Yes to selected");
    this.bulkNo = h("button", { type: "button", class: "small", onclick: () => this.decide(false) }, "No to selected");
    this.bulkResult = h("div", { class: "inbox-bulk-result", role: "status" });
    this.bulk = h(
      "div",
      { class: "inbox-bulk", role: "group", "aria-label": "Selected requests", hidden: true },
      this.bulkCount,
      this.bulkYes,
      this.bulkNo,
    );
    this.keys = h(
      "p",
      { class: "inbox-keys" },
      "Keys: ",
      ...KEYS.flatMap(([key, what], index) => [index ? " · " : "", h("kbd", null, key), ` ${what}`]),
    );
    this.element = h(
      "section",
      { class: "inbox", "aria-labelledby": titleId },
      h("div", { class: "inbox-head" }, this.title, this.lede),
      this.filters,
      this.keys,
      this.bulk,
      this.bulkResult,
      this.empty,
      this.list,
      this.others,
    );
    this.loaded = false;
    this.onKey = (/** @type {KeyboardEvent} */ event) => this.key(event);
    document.addEventListener("keydown", this.onKey);
  }

  destroy() {
    document.removeEventListener("keydown", this.onKey);
  }

  /** The items of the list shown now (the filter leaves some out), in order. */
  visibleItems() {
    return all(this.list, ":scope > li", HTMLElement).filter((li) => !li.hidden);
  }

  /** The pending requests selected, in the order shown. */
  selected() {
    return this.visibleItems()
      .filter((li) => li.querySelector("input.inbox-select:checked"))
      .map((li) => records.get(li.dataset.item || ""))
      .filter((record) => record !== undefined && record.status === "pending");
  }

  updateBulk() {
    const chosen = this.selected();
    const kinds = new Set(chosen.map((record) => record && record.kind));
    this.bulk.hidden = chosen.length === 0;
    const confirms = kinds.size === 1 && kinds.has("confirm");
    this.bulkCount.textContent = confirms || chosen.length === 0
      ? `${chosen.length} selected `
      : `${chosen.length} selected: pick requests of one kind, yes or no `;
    for (const button of [this.bulkYes, this.bulkNo]) button.toggleAttribute("disabled", !confirms);
  }

  /**
   * Give ``value`` to every selected confirm; say which were refused, and why.
   * @param {boolean} value
   */
  async decide(value) {
    const chosen = this.selected();
    if (!chosen.length) return;
    clear(this.bulkResult);
    try {
      const found = await action("respond_each", {
        request_ids: chosen.map((record) => record ? record.id : ""),
        answer: value,
        answered_via: "button",
      });
      for (const record of found.answered) upsert(record);
      const total = found.answered.length + found.refused.length;
      this.bulkResult.append(h("p", null, `Answered ${found.answered.length} of ${total}.`));
      if (found.refused.length) {
        this.bulkResult.append(
          h(
            "ul",
            { class: "inbox-refused" },
            ...found.refused.map((item) => {
              const record = records.get(item.request_id);
              return h("li", null, `Not answered: “${record ? record.title || record.message : item.request_id}” — ${item.error}.`);
            }),
          ),
        );
      }
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.bulkResult.append(h("p", { class: "field-error" }, error.message));
    }
    for (const box of all(this.list, "input.inbox-select", HTMLInputElement)) box.checked = false;
    this.updateBulk();
  }

  /**
   * Keyboard triage: next, previous, yes, no, open, select — not while typing.
   * @param {KeyboardEvent} event
   */
  key(event) {
    const target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey || !this.element.isConnected) return;
    if (target instanceof HTMLElement && target.closest("input, textarea, select, [contenteditable]")) return;
    // The requests still waiting, as shown: an answered one stays in the list, skipped here.
    const items = this.visibleItems().filter((li) => records.get(li.dataset.item || "")?.status === "pending");
    if (!items.length) return;
    const at = items.findIndex((li) => li.contains(document.activeElement));
    const current = at >= 0 ? items[at] : null;
    const record = current ? records.get(current.dataset.item || "") : undefined;
    const go = (/** @type {number} */ index) => {
      const item = items[Math.max(0, Math.min(items.length - 1, index))];
      item.querySelector("article")?.focus();
      item.scrollIntoView({ block: "nearest" });
    };
    if (event.key === "j") go(at + 1);
    else if (event.key === "k") go(at < 0 ? 0 : at - 1);
    else if ((event.key === "y" || event.key === "n") && record && record.status === "pending" && record.kind === "confirm") {
      void this.answerOne(record.id, event.key === "y", items[at + 1] || null);
    } else if (event.key === "o" && record) {
      current?.querySelector(".inbox-where a")?.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, button: 0 }));
    } else if (event.key === "x" && current) {
      const box = current.querySelector("input.inbox-select");
      if (box instanceof HTMLInputElement) {
        box.checked = !box.checked;
        this.updateBulk();
      }
    } else return;
    event.preventDefault();
  }

  /**
   * Answer one confirm from the keyboard, then go on to the next request waiting.
   * @param {string} id
   * @param {boolean} value
   * @param {HTMLElement | null} next
   */
  async answerOne(id, value, next) {
    clear(this.bulkResult);
    try {
      upsert((await action("respond_interaction", { request_id: id, answer: value, answered_via: "button" })).interaction);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.bulkResult.append(h("p", { class: "field-error" }, error.message));
      return;
    }
    next?.querySelector("article")?.focus();
  }

  /**
   * Show only the requests waiting for the user for one reason (``all``: every one).
   * @param {InboxFilter} filter
   */
  show(filter) {
    this.filter = filter;
    for (const button of all(this.filters, "button", HTMLElement)) {
      button.setAttribute("aria-pressed", String(button.dataset.filter === filter));
    }
    for (const item of all(this.list, ":scope > li", HTMLElement)) {
      item.hidden = filter !== "all" && item.dataset.why !== filter;
    }
  }

  /** Show every pending request not shown yet; answered ones stay, showing their outcome. */
  refresh(loaded = this.loaded) {
    this.loaded = loaded;
    for (const record of pending()) this.add(record, this.list);
    const others = [...records.values()].filter((record) => waitsForOthers(record)).sort(byCreation);
    for (const record of others) this.add(record, this.othersList);
    this.others.hidden = this.othersList.children.length === 0;
    const count = pending().length;
    this.lede.textContent = !loaded
      ? "Loading…"
      : count
        ? `${count} request${count === 1 ? "" : "s"} waiting for your answer, soonest due first.`
        : "";
    this.empty.hidden = !loaded || this.list.children.length > 0;
  }

  /**
   * @param {Interaction} record
   * @param {HTMLElement} list
   */
  add(record, list) {
    if (this.shown.has(record.id)) return;
    this.shown.add(record.id);
    const why = waiting.get(record.id)?.why || "own";
    const select =
      list === this.list
        ? h("input", {
            type: "checkbox",
            class: "inbox-select",
            "aria-label": `Select “${record.title || record.message}”`,
            onchange: () => this.updateBulk(),
          })
        : null;
    const item = h(
      "li",
      { class: "inbox-item", dataset: { conversationId: record.conversation_id, why, item: record.id } },
      h(
        "p",
        { class: "inbox-where" },
        select,
        select ? " " : "",
        "In ",
        h(
          "a",
          { href: `/?c=${encodeURIComponent(record.conversation_id)}`, dataset: { nav: "" } },
          conversationTitle(record.conversation_id),
        ),
        WHY[why] ? ` · ${WHY[why]}` : "",
      ),
      renderBlock(records.get(record.id) || record, { where: "inbox" }),
    );
    item.hidden = list === this.list && this.filter !== "all" && why !== this.filter;
    // Soonest due first, then oldest first: place among what is shown.
    const key = dueKey(record);
    item.dataset.due = key;
    const after = all(list, ":scope > li", HTMLElement).find((li) => (li.dataset.due || "") > key);
    list.insertBefore(item, after || null);
  }

  refreshTitles() {
    for (const list of [this.list, this.othersList]) {
      for (const item of all(list, ":scope > li", HTMLElement)) {
        const link = item.querySelector(".inbox-where a");
        if (link) link.textContent = conversationTitle(item.dataset.conversationId || "");
      }
    }
  }

  focusTitle() {
    this.title.focus();
  }
}

/**
 * A key that sorts requests soonest due first, those without a deadline last, then oldest.
 * @param {Interaction} record
 */
function dueKey(record) {
  const due = record.expires_at ? String(Date.parse(record.expires_at)).padStart(16, "0") : "9".repeat(16);
  return `${due}|${String(Date.parse(record.created_at)).padStart(16, "0")}|${record.id}`;
}
