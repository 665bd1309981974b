// What the Pending view shows: every pending request of the user, grouped by conversation.
// It is hydrated from the server (on start and after every reconnect) and kept current by the
// events in between; an answer given anywhere else closes the request here too.

import type { Interaction } from "./wire";
import { EVENTS } from "./wire";
import type { ServerEvent } from "./events";

export interface ConversationGroup {
  conversationId: string;
  title: string;
  requests: Interaction[];
}

export class PendingModel {
  private readonly open = new Map<string, Interaction>();
  // Requests seen closed: a hydration read before the close must not bring them back.
  private readonly closed = new Set<string>();
  // Requests announced while a hydration is under way: its older read does not know them.
  private announced = new Map<string, Interaction>();
  private readonly listeners: ((change: Change) => void)[] = [];
  titles = new Map<string, string>();

  get size(): number {
    return this.open.size;
  }

  get(id: string): Interaction | undefined {
    return this.open.get(id);
  }

  all(): Interaction[] {
    return [...this.open.values()].sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  onChange(listener: (change: Change) => void): void {
    this.listeners.push(listener);
  }

  private emit(change: Change): void {
    for (const listener of this.listeners) listener(change);
  }

  /** Call before reading the pending list; pass the read to `hydrate`. */
  beginHydration(): void {
    this.announced = new Map();
  }

  /** Replace the list with a fresh read, keeping what events said since it began. */
  hydrate(pending: readonly Interaction[]): void {
    const before = new Set(this.open.keys());
    this.open.clear();
    for (const item of [...pending, ...this.announced.values()]) {
      if (item.status === "pending" && !this.closed.has(item.id)) this.open.set(item.id, item);
    }
    const added = [...this.open.keys()].filter((id) => !before.has(id));
    const removed = [...before].filter((id) => !this.open.has(id));
    this.emit({ type: "hydrated", added, removed });
  }

  /** Apply one server event; true when the list changed. */
  apply(event: ServerEvent): boolean {
    if (event.type === EVENTS.request) {
      const record = event.data as Interaction;
      if (record.status !== "pending" || this.closed.has(record.id)) return false;
      this.announced.set(record.id, record);
      const isNew = !this.open.has(record.id);
      this.open.set(record.id, record);
      if (isNew) this.emit({ type: "added", interaction: record });
      return isNew;
    }
    if (event.type === EVENTS.answered) {
      const record = event.data as Interaction;
      this.closed.add(record.id);
      this.announced.delete(record.id);
      const had = this.open.delete(record.id);
      if (had) this.emit({ type: "closed", interaction: record });
      return had;
    }
    return false;
  }

  /** Close a request this client answered (the event will confirm it). */
  close(record: Interaction): void {
    this.apply({ id: null, type: EVENTS.answered, data: record });
  }

  /** The requests by conversation, conversations in order of their oldest request. */
  groups(): ConversationGroup[] {
    const byConversation = new Map<string, Interaction[]>();
    for (const item of this.all()) {
      const list = byConversation.get(item.conversation_id) ?? [];
      list.push(item);
      byConversation.set(item.conversation_id, list);
    }
    return [...byConversation].map(([conversationId, requests]) => ({
      conversationId,
      title: this.titles.get(conversationId) || "Untitled conversation",
      requests,
    }));
  }
}

export type Change =
  | { type: "hydrated"; added: string[]; removed: string[] }
  | { type: "added"; interaction: Interaction }
  | { type: "closed"; interaction: Interaction };
