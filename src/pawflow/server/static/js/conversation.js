// @ts-check
// One conversation: its history and its requests in one timeline, and the composer.
//
// Messages and interaction blocks are placed by creation time, then by a sequence: a
// message's seq, a block's id (the server's own order for requests of the same
// millisecond), so every tab and every reload shows the same order. A block an agent's
// message introduces (its data.request_id) is placed right after that message, even though
// the request was made first, while the agent was still writing. Loading reads the history
// and the conversation's interactions from the server (every time: first open, reconnect,
// reset), so blocks always come from the store and stay answerable after reloads.

import { action, ApiError, history, listInteractions, messageOf } from "./api.js";
import { renderBlock } from "./blocks.js";
import { clear, disable, h, richText, uid, untilServerIsBack } from "./dom.js";
import { fromNow, when } from "./format.js";
import { conversations, conversationTitle, pendingIn, records, upsert } from "./state.js";

/** @import { ApprovalRule, Interaction, MessageOut } from "./contract.js" */

/** @type {Record<MessageOut["role"], string>} */
const ROLE_NAMES = { user: "You", assistant: "Assistant", system: "System", notification: "Notice" };
const RANK = { message: 0, block: 1 };
const TYPING_MS = 20000;

/**
 * Where an item of the timeline goes: creation time, rank, sequence, and a tiebreak.
 * @typedef {[at: number, rank: number, seq: number, tiebreak: string]} SortKey
 */

/** @type {Record<string, (agent: string) => string>} */
const WAKEUP_TEXT = {
  answered: (agent) => `${agent} has your answer and carries on.`,
  cancelled: (agent) => `${agent} was told the request was cancelled.`,
  expired: (agent) => `${agent} was told the request expired unanswered.`,
};

/**
 * What an agent was woken with, as one quiet line (the block above shows the answer).
 * @param {MessageOut} message
 */
function wakeupNode(message) {
  const data = message.data || {};
  const agent = String(message.author || "").replace(/^agent:/, "") || "The agent";
  const text = (WAKEUP_TEXT[String(data.status)] || WAKEUP_TEXT.answered)(agent);
  return h(
    "article",
    { class: "message message--event", dataset: { seq: String(message.seq) } },
    h("p", { class: "message-event" }, text, " ", h("time", { datetime: message.created_at, title: when(message.created_at) }, fromNow(message.created_at))),
  );
}

/**
 * @param {MessageOut} message
 * @param {string} self the signed-in user
 */
function messageNode(message, self) {
  const data = message.data || {};
  if (message.role === "system" && data.wakeup && !data.error) return wakeupNode(message);
  const mine = message.role === "user" && message.author === self;
  const who = mine ? "You" : message.author || ROLE_NAMES[message.role] || message.role;
  const urgency = message.role === "notification" ? String(data.urgency || "normal") : null;
  // Agents' messages come with the server's sanitized HTML of their Markdown.
  const content =
    typeof message.html === "string" && message.role !== "user"
      ? h("div", { class: "message-content message-content--rich" }, richText(message.html))
      : h("p", { class: "message-content" }, message.content);
  return h(
    "article",
    {
      class: [
        "message",
        `message--${message.role}`,
        mine ? "message--mine" : null,
        urgency ? `urgency--${urgency}` : null,
      ]
        .filter(Boolean)
        .join(" "),
      dataset: { seq: String(message.seq) },
    },
    h(
      "p",
      { class: "message-meta" },
      urgency ? h("span", { class: `urgency-tag urgency-tag--${urgency}` }, urgencyLabel(urgency)) : null,
      urgency ? " " : null,
      h("span", { class: "author" }, who),
      " · ",
      h("time", { datetime: message.created_at, title: when(message.created_at) }, fromNow(message.created_at)),
    ),
    urgency && data.title ? h("p", { class: "message-title" }, String(data.title)) : null,
    content,
  );
}

/** @type {Record<string, string>} */
const URGENCY_LABELS = { low: "Low", normal: "Notice", high: "Urgent" };

/** @param {string} urgency */
export function urgencyLabel(urgency) {
  return URGENCY_LABELS[urgency] || "Notice";
}

export class ConversationView {
  /**
   * @param {string} id
   * @param {string} self the signed-in user
   */
  constructor(id, self) {
    this.id = id;
    this.self = self;
    /** @type {Array<{key: string, sortKey: SortKey, node: HTMLElement}>} */
    this.order = [];
    /** @type {Map<string, HTMLElement>} */
    this.keys = new Map();
    /** @type {Map<string, SortKey>} request id → the sort key of the message introducing it */
    this.anchors = new Map();
    this.lastSeq = 0;
    this.loaded = false;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.typingTimer = undefined;
    const titleId = uid("conversation-title");
    this.title = h("h2", { id: titleId, tabindex: "-1" }, conversationTitle(id));
    this.summary = h("p", { class: "conversation-summary" });
    this.list = h("ol", { class: "timeline" });
    // New messages and requests are announced; the first load is not (aria-busy).
    this.log = h("div", { role: "log", "aria-labelledby": titleId, "aria-busy": "true" }, this.list);
    this.status = h("p", { class: "timeline-status", role: "status" }, "Loading the conversation…");
    this.typing = h("p", { class: "typing", role: "status", hidden: true });
    // Which agent answers here; without one, a message would get no reply and no reason.
    this.agentNote = h("div", { class: "agent-note", role: "status", hidden: true });
    // The tool calls allowed here without asking ("always allow"), each revocable.
    this.rulesNote = h("div", { class: "approval-rules", hidden: true });
    this.composerNote = h("p", { class: "composer-note", role: "status" });
    this.composer = this.makeComposer();
    this.scroller = h("div", { class: "timeline-scroll" }, this.status, this.log, this.typing);
    this.element = h(
      "section",
      { class: "conversation", "aria-labelledby": titleId },
      h(
        "div",
        { class: "conversation-head" },
        h("a", { class: "back", href: "/", dataset: { nav: "" } }, "← Conversations"),
        this.title,
        this.summary,
      ),
      this.scroller,
      this.agentNote,
      this.rulesNote,
      this.composer,
    );
    this.refreshHead();
  }

  refreshHead() {
    this.title.textContent = conversationTitle(this.id);
    const count = pendingIn(this.id);
    this.summary.textContent = count
      ? `${count} request${count === 1 ? "" : "s"} waiting for you here`
      : "Nothing waiting for you here";
    const conversation = conversations.get(this.id);
    const readOnly = conversation && conversation.access === "read";
    disable(this.composer, "textarea, button", Boolean(readOnly));
    this.composerNote.textContent = readOnly ? "You can read this conversation but not write in it." : "";
  }

  makeComposer() {
    const inputId = uid("composer");
    const input = h("textarea", {
      id: inputId,
      rows: 1,
      placeholder: "Write a message…",
      autocomplete: "off",
    });
    const form = h(
      "form",
      { class: "composer", "aria-label": "Send a message" },
      h("label", { for: inputId, class: "sr-only" }, "Message"),
      input,
      h("button", { type: "submit", class: "primary" }, "Send"),
      this.composerNote,
    );
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const content = input.value.trim();
      if (!content) return;
      const button = form.querySelector("button");
      if (button) button.disabled = true;
      this.composerNote.textContent = "";
      delete this.composerNote.dataset.unreachable;
      try {
        const found = await action("send_message", { conversation_id: this.id, content });
        input.value = "";
        this.addMessage(found.message);
        this.scrollToEnd();
      } catch (error) {
        const unreachable = error instanceof ApiError && error.status === 0;
        this.composerNote.textContent = unreachable
          ? "The server cannot be reached; the message was not sent."
          : `Not sent: ${messageOf(error)}`;
        if (unreachable) untilServerIsBack(this.composerNote);
      } finally {
        if (button) button.disabled = false;
        input.focus();
      }
    });
    return form;
  }

  /** Read history and requests from the server and merge them in (first load or after a drop). */
  async load() {
    try {
      const [messages, interactions, agents] = await Promise.all([
        history(this.id, this.lastSeq),
        listInteractions({ conversation_id: this.id, limit: 500 }),
        action("list_agents", { conversation_id: this.id }),
      ]);
      this.showAgent(agents.assigned, agents.agents);
      void this.loadRules();
      const nearEnd = this.nearEnd();
      for (const message of messages) this.addMessage(message);
      for (const record of interactions) this.addRecord(upsert(record));
      const first = !this.loaded;
      this.loaded = true;
      this.element.dataset.loaded = "true";
      this.log.setAttribute("aria-busy", "false");
      this.status.hidden = this.order.length > 0;
      this.status.textContent = "No messages yet. Say something below.";
      if (first || nearEnd) this.scrollToEnd();
    } catch (error) {
      this.log.setAttribute("aria-busy", "false");
      this.status.hidden = false;
      this.status.textContent =
        error instanceof ApiError && error.status === 404
          ? "This conversation does not exist or is not shared with you."
          : `The conversation could not be loaded: ${messageOf(error)}`;
      if (error instanceof ApiError && error.status === 404) this.composer.hidden = true;
    }
  }

  /**
   * Say which agent answers here; without one, say so and offer the agents to choose.
   * @param {string | null | undefined} assigned
   * @param {string[]} agents
   */
  showAgent(assigned, agents) {
    const note = clear(this.agentNote);
    note.hidden = false;
    if (assigned) {
      note.append(`${assigned} answers the messages of this conversation.`);
      return;
    }
    note.append(
      h("p", null, "No agent answers in this conversation: messages here are for the people in it."),
    );
    const conversation = conversations.get(this.id);
    const canWrite = conversation && (conversation.access === "owner" || conversation.access === "write");
    if (!canWrite || !agents.length) return;
    const selectId = uid("agent");
    const select = h(
      "select",
      { id: selectId },
      agents.map((name) => h("option", { value: name }, name)),
    );
    const problem = h("p", { class: "field-error", role: "alert", hidden: true });
    const assign = async () => {
      problem.hidden = true;
      try {
        await action("assign_agent", { conversation_id: this.id, agent: select.value });
        this.showAgent(select.value, agents);
      } catch (error) {
        problem.textContent = `Not assigned: ${messageOf(error)}`;
        problem.hidden = false;
      }
    };
    note.append(
      h(
        "div",
        { class: "agent-choice" },
        h("label", { for: selectId }, "Agent"),
        select,
        h("button", { type: "button", class: "small", onclick: assign }, "Ask it to answer here"),
      ),
      problem,
    );
  }

  /** Read the approval rules that apply here, and show them. */
  async loadRules() {
    try {
      const found = await action("list_approval_rules", { conversation_id: this.id });
      this.showRules(found.rules);
    } catch {
      this.rulesNote.hidden = true; // a courtesy: the conversation works without it
    }
  }

  /**
   * The calls allowed here without asking, each with a button that revokes it.
   * @param {ApprovalRule[]} rules
   */
  showRules(rules) {
    const note = clear(this.rulesNote);
    note.hidden = rules.length === 0;
    if (!rules.length) return;
    note.append(
      h("p", { class: "approval-rules-title" }, "Allowed without asking"),
      h(
        "ul",
        null,
        rules.map((rule) =>
          h(
            "li",
            { dataset: { ruleId: rule.id } },
            `${rule.agent} may run ${rule.tool} ${JSON.stringify(rule.arguments)}`,
            rule.scope === "agent" ? " in every conversation " : " here ",
            h(
              "button",
              {
                type: "button",
                class: "small",
                onclick: async () => {
                  try {
                    await action("revoke_approval_rule", { rule_id: rule.id });
                  } finally {
                    await this.loadRules();
                  }
                },
              },
              "Revoke",
            ),
          ),
        ),
      ),
    );
  }

  nearEnd() {
    const el = this.scroller;
    return el.scrollHeight - el.scrollTop - el.clientHeight < 120;
  }

  scrollToEnd() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  /** @param {MessageOut} message */
  addMessage(message) {
    if (message.conversation_id !== this.id) return;
    this.lastSeq = Math.max(this.lastSeq, message.seq);
    if (message.role !== "user") this.stopTyping();
    if (message.data && "tool_approvals" in message.data) void this.loadRules();
    const node = h("li", { class: "item item--message" }, messageNode(message, this.self));
    /** @type {SortKey} */
    const sortKey = [Date.parse(message.created_at), RANK.message, message.seq, ""];
    this.insert(`m:${message.id}`, sortKey, node);
    const introduced = (message.data || {}).request_id;
    if (typeof introduced === "string" && message.role === "assistant") {
      /** @type {SortKey} */
      const anchor = [sortKey[0], sortKey[1], sortKey[2], `~${introduced}`];
      this.anchors.set(introduced, anchor);
      this.move(`i:${introduced}`, anchor);
    }
  }

  /** @param {Interaction} record */
  addRecord(record) {
    if (record.conversation_id !== this.id) return;
    const key = `i:${record.id}`;
    if (this.keys.has(key)) return;
    const current = records.get(record.id) || record;
    const node = h("li", { class: "item item--block" }, renderBlock(current, { where: "conversation" }));
    /** @type {SortKey} */
    const sortKey = this.anchors.get(record.id) || [Date.parse(record.created_at), RANK.block, 0, record.id];
    this.insert(key, sortKey, node);
  }

  /**
   * Place an item shown already at its new sort key.
   * @param {string} key
   * @param {SortKey} sortKey
   */
  move(key, sortKey) {
    const at = this.order.findIndex((item) => item.key === key);
    if (at < 0 || compare(this.order[at].sortKey, sortKey) === 0) return;
    const [item] = this.order.splice(at, 1);
    this.keys.delete(key);
    this.insert(key, sortKey, item.node);
  }

  /**
   * @param {string} key
   * @param {SortKey} sortKey
   * @param {HTMLElement} node
   */
  insert(key, sortKey, node) {
    if (this.keys.has(key)) return;
    const nearEnd = this.nearEnd();
    let index = this.order.length;
    while (index > 0 && compare(this.order[index - 1].sortKey, sortKey) > 0) index -= 1;
    const next = this.order[index];
    this.order.splice(index, 0, { key, sortKey, node });
    this.keys.set(key, node);
    const active = document.activeElement;
    const focused = active instanceof HTMLElement && node.contains(active) ? active : null;
    this.list.insertBefore(node, next ? next.node : null);
    if (focused) focused.focus(); // moving a node drops its focus
    this.status.hidden = true;
    if (this.loaded && nearEnd) this.scrollToEnd();
  }

  /** @param {{agent?: string}} progress the agent_progress event */
  showTyping(progress) {
    this.typing.textContent = `${progress.agent || "The assistant"} is working…`;
    this.typing.hidden = false;
    clearTimeout(this.typingTimer);
    this.typingTimer = setTimeout(() => this.stopTyping(), TYPING_MS);
  }

  stopTyping() {
    clearTimeout(this.typingTimer);
    this.typing.hidden = true;
  }

  focusTitle() {
    this.title.focus();
  }

  destroy() {
    this.stopTyping();
    clear(this.element);
  }
}

/**
 * @param {SortKey} a
 * @param {SortKey} b
 */
function compare(a, b) {
  for (let i = 0; i < a.length; i += 1) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}
