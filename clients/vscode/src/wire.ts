// The wire contract of the PawFlow server, as this extension uses it: the
// `pawflow.user-interaction.v1` record, the action bodies and envelopes, uploads, errors and
// the event names. Each interface mirrors one schema of the server's OpenAPI document; the
// field lists below are checked against that document by the tests (test/contract.test.ts)
// and against the interfaces by the compiler, so a drift on either side fails.

export const CONTRACT = "pawflow.user-interaction.v1";
export const SURFACE_CONTRACT = "pawflow.ui-surface.v1";

export const KINDS = [
  "confirm",
  "choice",
  "multi",
  "text",
  "multiline",
  "integer",
  "decimal",
  "date",
  "datetime",
  "file",
  "form",
] as const;
export type Kind = (typeof KINDS)[number];

export const STATUSES = ["pending", "answered", "cancelled", "expired"] as const;
export type Status = (typeof STATUSES)[number];

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** OptionItem */
export interface Option {
  value: string;
  label: string;
}

/** Requester (other fields are allowed) */
export interface Requester {
  // Both have defaults on the server ("api"), so its schema requires neither.
  type?: string;
  name?: string;
}

/** Interaction: the `pawflow.user-interaction.v1` record. */
export interface Interaction {
  contract: typeof CONTRACT;
  id: string;
  kind: Kind;
  title: string | null;
  message: string;
  options: Option[] | null;
  response_schema: JsonObject;
  owner: string;
  conversation_id: string;
  requester: Requester;
  signal_id: string;
  status: Status;
  answer: Json;
  answered_by: string | null;
  answered_at: string | null;
  /** Where the answer came from: chat, button, cli, mcp, api, … */
  answered_via: string | null;
  /** For an answer typed in the chat: that message's seq. */
  answered_seq: number | null;
  created_at: string;
  expires_at: string | null;
  ui_surface: JsonObject | null;
}

/** FileRef: what an upload gives back, and a `file` answer. */
export interface FileRef {
  id: string;
  name: string;
  size: number;
  media_type: string;
  sha256: string;
}

/** FieldErrorBody */
export interface FieldError {
  path: string;
  message: string;
}

/** ErrorBody: every error response. */
export interface ErrorBody {
  error: string;
  errors?: FieldError[] | null;
  status?: string | null;
  /** A 403 on a request with assignees: whom it waits for. */
  waiting_for?: string[] | null;
  /** A 409 on a quorum's vote: the vote that stands for that person. */
  vote?: { [key: string]: Json } | null;
}

/** InteractionEnvelope */
export interface InteractionEnvelope {
  interaction: Interaction;
}

/** InteractionPage */
export interface InteractionPage {
  interactions: Interaction[];
  next_cursor: string | null;
}

/** FileEnvelope */
export interface FileEnvelope {
  file: FileRef;
}

/** Conversation */
export interface Conversation {
  id: string;
  owner: string;
  title: string;
  created_at: string;
  access: "owner" | "read" | "write";
  members: { [user: string]: "read" | "write" };
}

/** ConversationList */
export interface ConversationList {
  conversations: Conversation[];
}

/** ConversationEnvelope */
export interface ConversationEnvelope {
  conversation: Conversation;
}

/** Respond: the body of `respond_interaction`. */
export interface Respond {
  request_id: string;
  answer: Json;
  /** Where the answer was given (a client may say button, cli or api). */
  answered_via?: "button" | "cli" | "api";
}

/** RequestRef: the body of `get_interaction` and `cancel_interaction`. */
export interface RequestRef {
  request_id: string;
}

/** ListInteractions: the body of `list_interactions`. */
export interface ListInteractions {
  status?: Status | null;
  conversation_id?: string | null;
  kind?: Kind | null;
  limit?: number;
  cursor?: string | null;
}

/** RequestInteraction: the body of `request_interaction` (used by the tests to ask). */
export interface RequestInteraction {
  conversation_id: string;
  kind: Kind;
  message: string;
  title?: string | null;
  options?: (string | { value: string; label?: string | null })[] | null;
  response_schema?: JsonObject | null;
  expires_in?: string | number | null;
  expires_at?: string | null;
  ui_surface?: JsonObject | null;
  idempotency_key?: string | null;
  notify?: ("email" | "slack" | "webhook" | "apprise" | "push")[] | null;
  /** Who answers and what happens when nobody does (docs/governance.md). */
  assignees?: string[] | null;
  requester_may_answer?: boolean | null;
  reassign_to?: string[] | null;
  claim_for?: string | null;
  required_approvals?: number | null;
  reject?: "first" | "majority" | null;
  remind_every?: string | null;
  escalate?: { after: string; to: string[] }[] | null;
  on_expire?: unknown;
}

/** InboxBody: the body of `list_inbox`. */
export interface InboxBody {
  /** all: what the caller may answer now (what the badge counts); assigned: mine, groups
   * and claimed; own: the caller's own without assignees; mine: assigned to the caller (or
   * whom they stand in for); groups: through a group; claimed: claimed by the caller;
   * others: the caller's requests that wait for someone else; visible: all and others. */
  filter?: "all" | "assigned" | "own" | "mine" | "groups" | "claimed" | "others" | "visible";
}

/** Why a request is in the caller's inbox. */
export type InboxWhy = "own" | "mine" | "groups" | "claimed" | "others";

/** InboxItem */
export interface InboxItem {
  interaction: Interaction;
  why: InboxWhy;
  /** others: whom the request waits for (its assignees, or who claimed it). */
  waiting_for?: string[];
}

/** Inbox: what `list_inbox` gives back, soonest due first. */
export interface Inbox {
  items: InboxItem[];
}

/** ToolApprovalAnswer: the answer to a `tool_approval` surface (docs/agents.md). */
export interface ToolApprovalAnswer {
  decision: ToolDecision;
  arguments?: JsonObject;
  reason?: string;
  text?: string;
  always?: "conversation" | "agent";
}

export const TOOL_APPROVAL = "tool_approval";
export const TOOL_DECISIONS = ["approve", "edit", "reject", "respond"] as const;
export type ToolDecision = (typeof TOOL_DECISIONS)[number];

/** CreateConversation */
export interface CreateConversation {
  title?: string;
}

/** The actions this extension calls: `POST /api/actions/{name}`. */
export interface Actions {
  request_interaction: [RequestInteraction, InteractionEnvelope];
  get_interaction: [RequestRef, InteractionEnvelope];
  list_interactions: [ListInteractions, InteractionPage];
  respond_interaction: [Respond, InteractionEnvelope];
  cancel_interaction: [RequestRef, InteractionEnvelope];
  create_conversation: [CreateConversation, ConversationEnvelope];
  list_conversations: [Record<string, never>, ConversationList];
  list_inbox: [InboxBody, Inbox];
}
export type ActionName = keyof Actions;

/** The events of `GET /api/events` the extension acts on. */
export const EVENTS = {
  request: "interaction_request",
  answered: "interaction_answered",
  notification: "notification",
  ready: "ready",
  reset: "reset",
} as const;

/** The data of a `notification` event. */
export interface NotificationData {
  message: string;
  title: string | null;
  urgency: "low" | "normal" | "high";
  conversation_id?: string | null;
  message_id?: string;
}

// -- the field lists, checked both ways ------------------------------------------------------

type RequiredKeys<T> = {
  [K in keyof T]-?: Record<string, never> extends Pick<T, K> ? never : K;
}[keyof T];

type Covers<T, K extends readonly PropertyKey[]> = [Exclude<keyof T, K[number]>] extends [never]
  ? unknown
  : { readonly missing: Exclude<keyof T, K[number]> };

type CoversRequired<T, R extends readonly PropertyKey[]> = [
  Exclude<RequiredKeys<T>, R[number]>,
] extends [never]
  ? [Exclude<R[number], RequiredKeys<T>>] extends [never]
    ? unknown
    : { readonly notRequired: Exclude<R[number], RequiredKeys<T>> }
  : { readonly missingRequired: Exclude<RequiredKeys<T>, R[number]> };

export interface SchemaFields {
  readonly fields: readonly string[];
  readonly required: readonly string[];
}

/** Every field of T and exactly its required ones, or a compile error naming the gap. */
function schema<T>() {
  return <const F extends readonly (keyof T & string)[], const R extends readonly (keyof T & string)[]>(
    fields: F & Covers<T, F>,
    required: R & CoversRequired<T, R>,
  ): SchemaFields => ({ fields, required });
}

const ALL_INTERACTION = [
  "contract",
  "id",
  "kind",
  "title",
  "message",
  "options",
  "response_schema",
  "owner",
  "conversation_id",
  "requester",
  "signal_id",
  "status",
  "answer",
  "answered_by",
  "answered_at",
  "answered_via",
  "answered_seq",
  "created_at",
  "expires_at",
  "ui_surface",
] as const;

/** OpenAPI schema name → the fields this module declares for it. */
export const SCHEMAS: { readonly [name: string]: SchemaFields } = {
  Interaction: schema<Interaction>()(ALL_INTERACTION, ALL_INTERACTION),
  OptionItem: schema<Option>()(["value", "label"], ["value", "label"]),
  Requester: schema<Requester>()(["type", "name"], []),
  FileRef: schema<FileRef>()(
    ["id", "name", "size", "media_type", "sha256"],
    ["id", "name", "size", "media_type", "sha256"],
  ),
  FieldErrorBody: schema<FieldError>()(["path", "message"], ["path", "message"]),
  ErrorBody: schema<ErrorBody>()(["error", "errors", "status", "waiting_for", "vote"], ["error"]),
  InteractionEnvelope: schema<InteractionEnvelope>()(["interaction"], ["interaction"]),
  InteractionPage: schema<InteractionPage>()(
    ["interactions", "next_cursor"],
    ["interactions", "next_cursor"],
  ),
  FileEnvelope: schema<FileEnvelope>()(["file"], ["file"]),
  Conversation: schema<Conversation>()(
    ["id", "owner", "title", "created_at", "access", "members"],
    ["id", "owner", "title", "created_at", "access", "members"],
  ),
  ConversationList: schema<ConversationList>()(["conversations"], ["conversations"]),
  ConversationEnvelope: schema<ConversationEnvelope>()(["conversation"], ["conversation"]),
  Respond: schema<Respond>()(["request_id", "answer", "answered_via"], ["request_id", "answer"]),
  RequestRef: schema<RequestRef>()(["request_id"], ["request_id"]),
  ListInteractions: schema<ListInteractions>()(
    ["status", "conversation_id", "kind", "limit", "cursor"],
    [],
  ),
  RequestInteraction: schema<RequestInteraction>()(
    [
      "conversation_id",
      "kind",
      "message",
      "title",
      "options",
      "response_schema",
      "expires_in",
      "expires_at",
      "ui_surface",
      "idempotency_key",
      "notify",
      "assignees",
      "requester_may_answer",
      "reassign_to",
      "claim_for",
      "required_approvals",
      "reject",
      "remind_every",
      "escalate",
      "on_expire",
    ],
    ["conversation_id", "kind", "message"],
  ),
  CreateConversation: schema<CreateConversation>()(["title"], []),
  InboxBody: schema<InboxBody>()(["filter"], []),
  InboxItem: schema<InboxItem>()(["interaction", "why", "waiting_for"], ["interaction", "why"]),
  Inbox: schema<Inbox>()(["items"], ["items"]),
};

/** The action names this module declares, each a path of the OpenAPI document. */
export const ACTION_NAMES: readonly ActionName[] = [
  "request_interaction",
  "get_interaction",
  "list_interactions",
  "respond_interaction",
  "cancel_interaction",
  "create_conversation",
  "list_conversations",
  "list_inbox",
];
