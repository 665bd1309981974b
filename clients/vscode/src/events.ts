// The user's event stream (`GET /api/events`, server-sent events) with resumption: every
// reconnect sends the last id seen as `Last-Event-ID`, so the server replays exactly what was
// missed. After each (re)connection the owner re-reads state (`onConnect`), and a `reset`
// event (the id fell out of the retained log) asks for the same.

export interface ServerEvent {
  id: number | null;
  type: string;
  data: unknown;
}

/** An incremental parser of the `text/event-stream` format (WHATWG HTML, §9.2.6). */
export class SseParser {
  private buffer = "";
  private type = "";
  private data: string[] = [];
  private id: string | null = null;
  /** The last `retry:` value the server sent, in milliseconds. */
  retry: number | null = null;

  /** Feed text as it arrives; complete events come back in order. */
  feed(chunk: string): ServerEvent[] {
    this.buffer += chunk;
    const found: ServerEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (match === null) break;
      // A lone \r at the very end may be the first half of \r\n: wait for more.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.line(line);
      if (event !== null) found.push(event);
    }
    return found;
  }

  private line(line: string): ServerEvent | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "event") this.type = value;
    else if (name === "data") this.data.push(value);
    else if (name === "id" && !value.includes("\0")) this.id = value;
    else if (name === "retry" && /^\d+$/.test(value)) this.retry = Number(value);
    return null;
  }

  private dispatch(): ServerEvent | null {
    const type = this.type || "message";
    const data = this.data;
    this.type = "";
    this.data = [];
    if (data.length === 0) return null;
    const text = data.join("\n");
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    const id = this.id !== null && /^\d+$/.test(this.id) ? Number(this.id) : null;
    return { id, type, data: parsed };
  }
}

export interface StreamOptions {
  baseUrl: string;
  authorization: string;
  /** Called with each event, in order. */
  onEvent: (event: ServerEvent) => void;
  /** Called once connected (first time and every reconnect), and on `reset`: re-read state. */
  onConnect?: () => void | Promise<void>;
  /** Called when a connection fails or drops (before the retry). */
  onDisconnect?: (error: unknown) => void;
  /** Where to resume from (a previously seen id). */
  lastEventId?: number | null;
  /** Milliseconds between reconnects; default: what the server says (`retry:`), else 2 s. */
  retryMs?: number;
}

/** A resuming event stream; `close()` ends it for good. */
export class EventStream {
  lastEventId: number | null;
  connections = 0;
  private readonly abort = new AbortController();
  private readonly done: Promise<void>;
  private wake: (() => void) | null = null;
  private connection: AbortController | null = null;
  private serverRetry: number | null = null;

  constructor(private readonly options: StreamOptions) {
    this.lastEventId = options.lastEventId ?? null;
    this.done = this.run();
  }

  get closed(): boolean {
    return this.abort.signal.aborted;
  }

  /** Drop the current connection (as a network cut would); the stream reconnects. */
  interrupt(): void {
    this.connection?.abort();
  }

  async close(): Promise<void> {
    this.abort.abort();
    this.connection?.abort();
    this.wake?.();
    await this.done;
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      try {
        await this.connect();
        if (!this.closed) this.options.onDisconnect?.(new Error("the event stream ended"));
      } catch (error) {
        if (this.closed) break;
        this.options.onDisconnect?.(error);
      }
      if (this.closed) break;
      await this.pause(this.options.retryMs ?? this.serverRetry ?? 2000);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async connect(): Promise<void> {
    // A parser per connection: a cut mid-event leaves nothing half-parsed behind.
    const parser = new SseParser();
    const connection = new AbortController();
    this.connection = connection;
    const headers: Record<string, string> = {
      Authorization: this.options.authorization,
      Accept: "text/event-stream",
    };
    if (this.lastEventId !== null) headers["Last-Event-ID"] = String(this.lastEventId);
    const response = await fetch(`${this.options.baseUrl}/api/events`, {
      headers,
      signal: AbortSignal.any([this.abort.signal, connection.signal]),
    });
    if (!response.ok || response.body === null) {
      throw new Error(`the event stream was refused: HTTP ${response.status}`);
    }
    this.connections += 1;
    // State is re-read once the stream is open, so nothing announced after the read is lost.
    await this.options.onConnect?.();
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const event of parser.feed(decoder.decode(value, { stream: true }))) {
        if (event.id !== null) this.lastEventId = event.id;
        if (event.type === "reset") await this.options.onConnect?.();
        this.options.onEvent(event);
      }
      if (parser.retry !== null) this.serverRetry = parser.retry;
    }
  }
}
