// @ts-check
// The pending panel (/confirmations): every request waiting for the user's answer (their own,
// assigned to them, to their groups, or to someone they stand in for), soonest due first,
// answerable in place; then the requests they asked that wait for someone else, without
// controls. The inbox for answering days later.

import { action, listInteractions } from "./api.js";
import { renderBlock } from "./blocks.js";
import { all, h, uid } from "./dom.js";
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
    this.element = h(
      "section",
      { class: "inbox", "aria-labelledby": titleId },
      h("div", { class: "inbox-head" }, this.title, this.lede),
      this.filters,
      this.empty,
      this.list,
      this.others,
    );
    this.loaded = false;
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
    const item = h(
      "li",
      { class: "inbox-item", dataset: { conversationId: record.conversation_id, why } },
      h(
        "p",
        { class: "inbox-where" },
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
