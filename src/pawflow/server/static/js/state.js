// @ts-check
// What the page knows: interaction records (as the server last sent them), conversations.
//
// Records come from the actions and from events, in any order. A record never goes back to
// pending once it has left it (the store moves it out of pending exactly once), so a stale
// read that arrives after the answered event cannot reopen a closed block.

/** @import { Conversation, Interaction } from "./contract.js" */

/** @type {Map<string, Interaction>} */
export const records = new Map();
/** @type {Map<string, Conversation>} */
export const conversations = new Map();
/** @type {Set<string>} conversations with messages not seen yet */
export const unread = new Set();
/** Who is signed in, and the server's version of PawFlow (from /api/session). */
export const me = { user: "", version: "" };

/** @typedef {(record: Interaction, old: Interaction | null) => void} RecordListener */
/** @type {Set<RecordListener>} */
const recordListeners = new Set();
/** @type {Set<() => void>} */
const conversationListeners = new Set();

/** @param {RecordListener} listener */
export function onRecord(listener) {
  recordListeners.add(listener);
}

/** @param {() => void} listener */
export function onConversations(listener) {
  conversationListeners.add(listener);
}

/**
 * @param {Interaction} a
 * @param {Interaction} b
 */
function same(a, b) {
  return (
    a.status === b.status &&
    a.answered_at === b.answered_at &&
    a.expires_at === b.expires_at &&
    JSON.stringify(a.answer) === JSON.stringify(b.answer)
  );
}

/**
 * Keep the newer of what we had and ``record``; tell listeners when something changed.
 * @param {Interaction} record
 */
export function upsert(record) {
  const old = records.get(record.id);
  if (old && old.status !== "pending" && record.status === "pending") return old;
  if (old && same(old, record)) return old;
  records.set(record.id, record);
  for (const listener of recordListeners) listener(record, old || null);
  return record;
}

/** @param {Interaction} record */
export function mine(record) {
  return record.owner === me.user;
}

/**
 * @param {Interaction} a
 * @param {Interaction} b
 */
export function byCreation(a, b) {
  const at = Date.parse(a.created_at) - Date.parse(b.created_at);
  if (at !== 0) return at;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Why each pending request the user can see is there (the server's ``list_inbox``, filter
 * ``visible``): "own", "mine", "groups", "claimed" — the user may answer it now — or
 * "others", with whom it waits for.
 * @type {Map<string, {why: string, waitingFor: string[]}>}
 */
export const waiting = new Map();

/**
 * Replace what we know of who each pending request waits for.
 * @param {{interaction: Interaction, why: string, waiting_for?: string[]}[]} items
 */
export function setWaiting(items) {
  waiting.clear();
  for (const item of items) {
    waiting.set(item.interaction.id, { why: item.why, waitingFor: item.waiting_for || [] });
  }
}

/**
 * Whom ``record`` waits for when that is someone else than the user; null: the user may
 * answer it (or it is not pending).
 * @param {Interaction} record
 */
export function waitsForOthers(record) {
  if (record.status !== "pending") return null;
  const found = waiting.get(record.id);
  return found && found.why === "others" ? found.waitingFor : null;
}

/**
 * Whether ``record`` waits for the user's answer: what the badge counts. A request read
 * since the last inbox read counts when it is the user's own, until the next read says.
 * @param {Interaction} record
 */
export function waitsForMe(record) {
  if (record.status !== "pending") return false;
  const found = waiting.get(record.id);
  return found ? found.why !== "others" : mine(record);
}

/** The pending requests waiting for the user's answer, oldest first. */
export function pending() {
  return [...records.values()].filter(waitsForMe).sort(byCreation);
}

/** @param {string} conversationId */
export function pendingIn(conversationId) {
  return pending().filter((r) => r.conversation_id === conversationId).length;
}

// Conversations added here (made, or joined from an invitation) count up, so that a list read
// from the server before one was added, and arriving after, does not take it away.
let added = 0;
/** @type {Map<string, number>} */
const addedAt = new Map();

/** Where the additions stand: pass it to :func:`setConversations` with a list read after. */
export function conversationsStamp() {
  return added;
}

/**
 * The server's list replaces ours, except the conversations added here since ``readFrom``
 * (a stamp taken before the list was read): the server made them after it read the list.
 * @param {Conversation[]} list
 * @param {number} readFrom
 */
export function setConversations(list, readFrom) {
  const since = [...addedAt].filter(([, at]) => at > readFrom).map(([id]) => conversations.get(id));
  conversations.clear();
  for (const conversation of list) conversations.set(conversation.id, conversation);
  for (const conversation of since) {
    if (conversation && !conversations.has(conversation.id)) {
      conversations.set(conversation.id, conversation);
    }
  }
  changedConversations();
}

/** @param {Conversation} conversation */
export function addConversation(conversation) {
  added += 1;
  addedAt.set(conversation.id, added);
  conversations.set(conversation.id, conversation);
  changedConversations();
}

export function changedConversations() {
  for (const listener of conversationListeners) listener();
}

/** @param {string} id */
export function conversationTitle(id) {
  const found = conversations.get(id);
  if (!found) return "a conversation";
  return found.title || "Untitled conversation";
}
