// A small HTTP client of the PawFlow server: the actions, uploads, and the errors they give
// back as typed exceptions. It uses the runtime's fetch, so it runs in the extension host and
// in plain node (the tests) alike. The server's validation is canonical: this client sends
// what the person entered and reports what the server refused, field by field.

import type {
  Actions,
  ActionName,
  ErrorBody,
  FieldError,
  FileRef,
  InboxBody,
  InboxItem,
  Interaction,
  Json,
  InteractionPage,
  ListInteractions,
  Respond,
} from "./wire";

/** Anything the server refused; `status` is the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: ErrorBody | null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** 422: the answer (or input) was refused; the request stays pending. */
export class InvalidInput extends ApiError {
  constructor(
    message: string,
    readonly fieldErrors: FieldError[],
    body: ErrorBody | null,
  ) {
    super(422, message, body);
    this.name = "InvalidInput";
  }
}

/** 409: the request left `pending` (answered elsewhere, cancelled, expired). */
export class NotPending extends ApiError {
  constructor(
    message: string,
    readonly current: string | null,
    body: ErrorBody | null,
  ) {
    super(409, message, body);
    this.name = "NotPending";
  }
}

/** 404: unknown, or not the caller's: the server does not say which. */
export class NotFound extends ApiError {
  constructor(message: string, body: ErrorBody | null) {
    super(404, message, body);
    this.name = "NotFound";
  }
}

/** No answer at all: refused connection, unknown host, timeout. */
export class Unreachable extends Error {
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(`cannot reach the PawFlow server at ${url}: ${describe(cause)}`);
    this.name = "Unreachable";
  }
}

function describe(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as Error & { cause?: unknown }).cause;
    return inner instanceof Error ? inner.message : cause.message;
  }
  return String(cause);
}

/** The one message to show a person for a field error list (a path only for a field). */
export function errorText(errors: readonly FieldError[]): string {
  return errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; ");
}

async function failure(response: Response): Promise<ApiError> {
  let body: ErrorBody | null = null;
  try {
    body = (await response.json()) as ErrorBody;
  } catch {
    body = null;
  }
  const message = body && typeof body.error === "string" ? body.error : response.statusText;
  switch (response.status) {
    case 422:
      return new InvalidInput(message, body?.errors ?? [], body);
    case 409:
      // A request that left `pending` says what it became; a quorum's repeated vote (the
      // vote that stands in `vote`) is a refusal in the server's words.
      return body?.vote ? new ApiError(409, message, body) : new NotPending(message, body?.status ?? null, body);
    case 404:
      return new NotFound(message, body);
    default:
      return new ApiError(response.status, message, body);
  }
}

export interface ClientOptions {
  /** Milliseconds before a request is given up (default 30 s). */
  timeoutMs?: number;
}

export class PawflowClient {
  readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(
    baseUrl: string,
    private readonly token: string,
    options: ClientOptions = {},
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  get authorization(): string {
    return `Bearer ${this.token}`;
  }

  private async send(path: string, init: RequestInit): Promise<Response> {
    const url = this.baseUrl + path;
    let response: Response;
    try {
      response = await fetch(url, {
        ...init,
        headers: { Authorization: this.authorization, ...(init.headers ?? {}) },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (cause) {
      throw new Unreachable(this.baseUrl, cause);
    }
    if (!response.ok) throw await failure(response);
    return response;
  }

  /** `POST /api/actions/{name}` with its typed body and answer. */
  async action<N extends ActionName>(name: N, body: Actions[N][0]): Promise<Actions[N][1]> {
    const response = await this.send(`/api/actions/${name}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Actions[N][1];
  }

  /** Every interaction matching `filter`, across all pages, oldest first. */
  async listAll(filter: Omit<ListInteractions, "cursor"> = {}): Promise<Interaction[]> {
    const found: Interaction[] = [];
    let cursor: string | null = null;
    do {
      const page: InteractionPage = await this.action("list_interactions", { ...filter, limit: 1000, cursor });
      found.push(...page.interactions);
      cursor = page.next_cursor;
    } while (cursor !== null);
    return found;
  }

  /** What waits for the caller's answer (`list_inbox`, `all`): their own requests and those
   * assigned to them, their groups or whom they stand in for. What the Pending view shows. */
  async listPending(): Promise<Interaction[]> {
    return (await this.inbox("all")).map((item) => item.interaction);
  }

  /** What waits for the caller as an assignee (`list_inbox`), soonest due first. */
  async inbox(filter: NonNullable<InboxBody["filter"]> = "all"): Promise<InboxItem[]> {
    return (await this.action("list_inbox", { filter })).items;
  }

  async get(requestId: string): Promise<Interaction> {
    return (await this.action("get_interaction", { request_id: requestId })).interaction;
  }

  /** Answer; a refused answer raises InvalidInput with the server's field errors. */
  async respond(requestId: string, answer: Json): Promise<Interaction> {
    const body: Respond = { request_id: requestId, answer, answered_via: "button" };
    return (await this.action("respond_interaction", body)).interaction;
  }

  async cancel(requestId: string): Promise<Interaction> {
    return (await this.action("cancel_interaction", { request_id: requestId })).interaction;
  }

  /** Upload a file for a `file` request (or a form's file `field`); answer with its `id`. */
  async upload(
    name: string,
    content: Uint8Array<ArrayBuffer>,
    options: { requestId?: string; field?: string; mediaType?: string } = {},
  ): Promise<FileRef> {
    const form = new FormData();
    const type = options.mediaType ?? "application/octet-stream";
    form.append("file", new Blob([content], { type }), name);
    if (options.requestId !== undefined) form.append("request_id", options.requestId);
    if (options.field !== undefined) form.append("field", options.field);
    const response = await this.send("/api/files", { method: "POST", body: form });
    return ((await response.json()) as { file: FileRef }).file;
  }

  /** The URL of the web chat at a request's conversation (the hand-off target). */
  webChatUrl(interaction: Pick<Interaction, "conversation_id">): string {
    return `${this.baseUrl}/?c=${encodeURIComponent(interaction.conversation_id)}`;
  }
}
