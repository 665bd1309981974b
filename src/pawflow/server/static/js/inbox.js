// @ts-check
// The pending panel (/confirmations): every request waiting for the user, across all
// conversations, oldest first, answerable in place. The inbox for answering days later.

import { action, ApiError, listInteractions } from "./api.js";
import { renderBlock } from "./blocks.js";
import { all, clear, h, uid } from "./dom.js";
import { conversationTitle, mine, pending, records, upsert } from "./state.js";

/** @import { Interaction } from "./contract.js" */

/** @typedef {"all" | "mine" | "groups" | "claimed"} AssignedFilter */

/** @type {[AssignedFilter, string][]} */
const FILTERS = [
  ["all", "All"],
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
  const found = await listInteractions({ status: "pending", limit: 500 });
  const ids = new Set(found.map((record) => record.id));
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
    this.title = h("h2", { id: titleId, tabindex: "-1" }, "Pending requests");
    this.lede = h("p", { class: "lede" });
    this.list = h("ol", { class: "inbox-list", "aria-labelledby": titleId });
    this.empty = h("p", { class: "empty", hidden: true }, "Nothing is waiting for you. New requests appear here as they arrive.");
    this.shown = new Set();
    this.element = h(
      "section",
      { class: "inbox", "aria-labelledby": titleId },
      h("div", { class: "inbox-head" }, this.title, this.lede),
      this.empty,
      this.list,
    );
    this.loaded = false;
    // What waits for the user as an assignee (docs/governance.md), soonest due first.
    /** @type {AssignedFilter} */
    this.filter = "all";
    this.assignedList = h("ol", { class: "inbox-list inbox-assigned-list" });
    this.filters = h(
      "div",
      { class: "inbox-filters", role: "group", "aria-label": "Show" },
      ...FILTERS.map(([value, label]) =>
        h(
          "button",
          { type: "button", "aria-pressed": String(value === this.filter), dataset: { filter: value }, onclick: () => this.loadAssigned(value) },
          label,
        ),
      ),
    );
    this.assigned = h(
      "section",
      { class: "inbox-assigned", hidden: true, "aria-label": "Assigned to you" },
      h("h3", null, "Assigned to you"),
      this.filters,
      this.assignedList,
    );
    this.element.append(this.assigned);
    this.assignedLoaded = false;
  }

  /**
   * Read what waits for the user as an assignee, with ``filter``.
   * @param {AssignedFilter} filter
   */
  async loadAssigned(filter = this.filter) {
    this.filter = filter;
    this.assignedLoaded = true;
    for (const button of all(this.filters, "button", HTMLElement)) {
      button.setAttribute("aria-pressed", String(button.dataset.filter === filter));
    }
    let found;
    try {
      found = await action("list_inbox", { filter });
    } catch (error) {
      if (error instanceof ApiError) return; // the next load tries again
      throw error;
    }
    clear(this.assignedList);
    for (const item of found.items) {
      this.assignedList.append(
        h(
          "li",
          { class: "inbox-item", dataset: { why: item.why } },
          h("p", { class: "inbox-where" }, WHY[item.why] || item.why),
          renderBlock(item.interaction, { where: "inbox" }),
        ),
      );
    }
    this.assigned.hidden = found.items.length === 0 && filter === "all";
  }

  /** Show every pending request not shown yet; answered ones stay, showing their outcome. */
  refresh(loaded = this.loaded) {
    this.loaded = loaded;
    if (loaded && !this.assignedLoaded) void this.loadAssigned();
    for (const record of pending()) this.add(record);
    const count = pending().length;
    this.lede.textContent = !loaded
      ? "Loading…"
      : count
        ? `${count} request${count === 1 ? "" : "s"} waiting for your answer, oldest first.`
        : "";
    this.empty.hidden = !loaded || this.shown.size > 0;
  }

  /** @param {Interaction} record */
  add(record) {
    if (this.shown.has(record.id)) return;
    this.shown.add(record.id);
    const item = h(
      "li",
      { class: "inbox-item", dataset: { conversationId: record.conversation_id } },
      h(
        "p",
        { class: "inbox-where" },
        "In ",
        h(
          "a",
          { href: `/?c=${encodeURIComponent(record.conversation_id)}`, dataset: { nav: "" } },
          conversationTitle(record.conversation_id),
        ),
      ),
      renderBlock(records.get(record.id) || record, { where: "inbox" }),
    );
    // Oldest first: place by creation time among what is shown.
    const created = Date.parse(record.created_at);
    const after = all(this.list, ":scope > li", HTMLElement).find(
      (li) => Date.parse(li.dataset.created || "") > created,
    );
    item.dataset.created = record.created_at;
    this.list.insertBefore(item, after || null);
  }

  refreshTitles() {
    for (const item of all(this.list, ":scope > li", HTMLElement)) {
      const link = item.querySelector(".inbox-where a");
      if (link) link.textContent = conversationTitle(item.dataset.conversationId || "");
    }
  }

  focusTitle() {
    this.title.focus();
  }
}
