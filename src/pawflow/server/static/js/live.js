// @ts-check
// The live connection: the user's durable event log over server-sent events.
//
// Each event id is its position in the log. When the connection drops, EventSource
// reconnects by itself and sends Last-Event-ID, so the server replays exactly what was
// missed; if the browser gives up (the stream was refused), a new stream resumes from the
// last id with ?after=. A `reset` event means the log cannot be replayed from our position:
// the page reloads its state from the actions. After every reconnect the page also
// re-reads pending requests, so nothing depends on the replay alone.

const HANDLED = [
  "ready",
  "reset",
  "interaction_request",
  "interaction_answered",
  "message",
  "notification",
  "agent_progress",
  "invitation",
];
const MAX_BACKOFF = 15000;

/** @typedef {"connecting" | "live" | "reconnecting"} LiveState */

/**
 * What the page does with the stream: onEvent(type, data) for each event with its JSON,
 * onGone() when a stream was refused (the session may be over).
 * @typedef {object} LiveHandlers
 * @property {(type: string, data: any) => void} onEvent
 * @property {() => void} onReady
 * @property {() => void} onReconnected
 * @property {() => void} onReset
 * @property {(state: LiveState) => void} onState
 * @property {() => void} onGone
 */

export class Live {
  /** @param {LiveHandlers} handlers */
  constructor(handlers) {
    this.handlers = handlers;
    /** @type {EventSource | null} */
    this.source = null;
    /** @type {string | null} */
    this.lastId = null;
    this.dropped = false;
    this.backoff = 1000;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.timer = undefined;
  }

  start() {
    this.handlers.onState("connecting");
    this.open(null);
  }

  stop() {
    clearTimeout(this.timer);
    if (this.source) this.source.close();
    this.source = null;
  }

  /** @param {string | null} after */
  open(after) {
    const url = after === null ? "/api/events" : `/api/events?after=${encodeURIComponent(after)}`;
    const source = new EventSource(url);
    this.source = source;
    for (const type of HANDLED) {
      source.addEventListener(type, (event) => this.receive(type, event));
    }
    source.addEventListener("open", () => {
      this.backoff = 1000;
      this.handlers.onState("live");
      if (this.dropped) {
        this.dropped = false;
        this.handlers.onReconnected();
      }
    });
    source.addEventListener("error", () => {
      if (source !== this.source) return;
      this.dropped = true;
      this.handlers.onState("reconnecting");
      if (source.readyState === EventSource.CLOSED) {
        // The browser will not retry this one (an HTTP error): start a new stream later.
        source.close();
        clearTimeout(this.timer);
        this.timer = setTimeout(() => {
          this.handlers.onGone();
          this.open(this.lastId);
        }, this.backoff);
        this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF);
      }
    });
  }

  /**
   * @param {string} type
   * @param {MessageEvent<string>} event
   */
  receive(type, event) {
    if (event.lastEventId) this.lastId = event.lastEventId;
    let data = null;
    try {
      data = JSON.parse(event.data);
    } catch {
      return;
    }
    if (type === "ready") this.handlers.onReady();
    else if (type === "reset") this.handlers.onReset();
    else this.handlers.onEvent(type, data);
  }
}
