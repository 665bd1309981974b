// @ts-check
// The contract as the web chat needs it: the names of the kinds, statuses, answer channels
// and surfaces, what each action takes and answers, and the shapes of the records. Generated
// from the server's own definitions (pawflow.interactions, pawflow.records, its OpenAPI
// document): do not edit. After a change there, write it again with
// `.venv/bin/python -m tests.server.test_webchat_contract`
// (tests/server/test_webchat_contract.py fails while this file is behind).

export const CONTRACT = "pawflow.user-interaction.v1";
export const SURFACE_CONTRACT = "pawflow.ui-surface.v1";

/** Every kind of request. */
export const KINDS = /** @type {const} */ ([
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
]);
/** @typedef {(typeof KINDS)[number]} Kind */

/** The kinds a field of a form can have (every kind but form). */
export const SCALAR_KINDS = /** @type {const} */ ([
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
]);
/** @typedef {(typeof SCALAR_KINDS)[number]} ScalarKind */

/** Where a request stands. */
export const STATUSES = /** @type {const} */ (["pending", "answered", "cancelled", "expired"]);
/** @typedef {(typeof STATUSES)[number]} Status */

/** Where an answer came from (a record's answered_via). */
export const CHANNELS = /** @type {const} */ ([
  "chat",
  "mcp",
  "agui",
  "a2a",
  "link",
  "email",
  "slack",
  "button",
  "cli",
  "api",
  "mcp-app",
]);
/** @typedef {(typeof CHANNELS)[number]} Channel */

/** The channels a client may declare when it answers. */
export const CLIENT_CHANNELS = /** @type {const} */ (["button", "cli", "api", "mcp-app"]);
/** @typedef {(typeof CLIENT_CHANNELS)[number]} ClientChannel */

/**
 * Whether ``value`` is one of ``names`` (and so of their type).
 * @template {string} T
 * @param {readonly T[]} names
 * @param {unknown} value
 * @returns {value is T}
 */
export function oneOf(names, value) {
  return typeof value === "string" && /** @type {readonly string[]} */ (names).includes(value);
}

/**
 * What each action takes and answers: `POST /api/actions/NAME` with `body`; its
 * `result` (null: an empty answer).
 * @typedef {object} Actions
 * @property {{body: RequestInteraction, result: InteractionEnvelope}} request_interaction
 * @property {{body: ListInteractions, result: InteractionPage}} list_interactions
 * @property {{body: Respond, result: InteractionEnvelope}} respond_interaction
 * @property {{body: RequestRef, result: InteractionEnvelope}} cancel_interaction
 * @property {{body: ListConfirmations, result: InteractionPage}} list_confirmations
 * @property {{body: Respond, result: InteractionEnvelope}} respond_confirmation
 * @property {{body: RequestRef, result: InteractionEnvelope}} cancel_confirmation
 * @property {{body: CreateConversation, result: ConversationEnvelope}} create_conversation
 * @property {{body: ListConversations, result: ConversationList}} list_conversations
 * @property {{body: GetHistory, result: History}} get_history
 * @property {{body: SendMessage, result: MessageEnvelope}} send_message
 * @property {{body: ShareConversation, result: ConversationEnvelope}} share_conversation
 * @property {{body: GetNotifications, result: Notifications}} get_notifications
 * @property {{body: SetNotifications, result: Notifications}} set_notifications
 * @property {{body: CreateWebhook, result: CreatedWebhook}} create_webhook
 * @property {{body: ListWebhooks, result: WebhookList}} list_webhooks
 * @property {{body: WebhookRef, result: Deleted}} delete_webhook
 * @property {{body: ListWebhookDeliveries, result: WebhookDeliveries}} list_webhook_deliveries
 * @property {{body: RequestRef, result: InteractionDetails}} get_interaction
 * @property {{body: ClaimBody, result: InteractionDetails}} claim_interaction
 * @property {{body: ClaimBody, result: InteractionDetails}} release_interaction
 * @property {{body: ReassignBody, result: InteractionDetails}} reassign_interaction
 * @property {{body: InboxBody, result: Inbox}} list_inbox
 * @property {{body: ListGroups, result: Groups}} list_groups
 * @property {{body: GroupBody, result: Groups}} add_to_group
 * @property {{body: GroupBody, result: Groups}} remove_from_group
 * @property {{body: DelegateBody, result: Delegations}} delegate
 * @property {{body: ListTokens, result: Tokens}} list_tokens
 * @property {{body: MakeToken, result: NewToken}} create_token
 * @property {{body: TokenRef, result: TokenInfo}} revoke_token
 * @property {{body: RotateToken, result: NewToken}} rotate_token
 * @property {{body: pawflow__server__tokens__UserRef, result: UserAccess}} disable_user
 * @property {{body: pawflow__server__tokens__UserRef, result: UserAccess}} enable_user
 * @property {{body: SignOut, result: SignedOut}} sign_out_everywhere
 * @property {{body: RespondEach, result: EachAnswered}} respond_each
 * @property {{body: GetPush, result: PushSettings}} get_push
 * @property {{body: SubscribePush, result: PushDevice}} subscribe_push
 * @property {{body: UnsubscribePush, result: Deleted}} unsubscribe_push
 * @property {{body: RemovePushDevice, result: Deleted}} remove_push_device
 * @property {{body: ListAgents, result: AgentList}} list_agents
 * @property {{body: AssignAgent, result: Assignment}} assign_agent
 * @property {{body: ListApprovalRules, result: ApprovalRules}} list_approval_rules
 * @property {{body: RuleRef, result: ApprovalRuleEnvelope}} revoke_approval_rule
 * @property {{body: RequestRef, result: ToolApproval}} get_tool_approval
 * @property {{body: ListInvitations, result: InvitationList}} list_invitations
 * @property {{body: InvitationRef, result: ConversationEnvelope}} accept_invitation
 * @property {{body: InvitationRef, result: null}} decline_invitation
 */

/**
 * @typedef {object} AgentList
 * @property {Array<string>} agents
 * @property {string | null} [assigned]
 */

/**
 * An "always allow": `agent` may call `tool` with `arguments` without asking, in
 * one conversation (`scope` conversation) or wherever it acts for `created_by`.
 * @typedef {object} ApprovalRule
 * @property {string} id
 * @property {string} agent
 * @property {string} tool
 * @property {Record<string, unknown>} arguments
 * @property {"conversation" | "agent"} scope
 * @property {string | null} conversation_id
 * @property {string} created_by
 * @property {string | null} request_id
 * @property {string} created_at
 * @property {string | null} revoked_at
 * @property {string | null} revoked_by
 */

/**
 * @typedef {object} ApprovalRuleEnvelope
 * @property {ApprovalRule} rule
 */

/**
 * @typedef {object} ApprovalRules
 * @property {Array<ApprovalRule>} rules
 */

/**
 * @typedef {object} AssignAgent
 * @property {string} conversation_id
 * @property {string} agent
 */

/**
 * @typedef {object} Assignment
 * @property {string} conversation_id
 * @property {string} agent
 */

/**
 * One step of a request's audit trail.
 * @typedef {object} AuditEntry
 * @property {number} seq
 * @property {string} request_id
 * @property {string} at
 * @property {string} action
 * @property {string | null} actor - Who took the step; null: the system or a policy.
 * @property {string | null} via - The client, channel or policy it came through.
 * @property {Record<string, unknown>} detail
 */

/**
 * @typedef {object} CardAction
 * @property {string} label
 * @property {boolean | string} value
 * @property {"primary" | "default" | "danger"} [style]
 */

/**
 * @typedef {object} CardField
 * @property {string} label
 * @property {string} value
 */

/**
 * @typedef {object} CardSurface
 * @property {"pawflow.ui-surface.v1"} contract
 * @property {"card"} type
 * @property {Kind} fallback
 * @property {string | null} [title]
 * @property {string | null} [subtitle]
 * @property {string | null} [body]
 * @property {Array<CardField>} [fields]
 * @property {Array<CardAction>} [actions]
 */

/**
 * @typedef {object} ClaimBody
 * @property {string} request_id
 * @property {ClientChannel} [via]
 */

/**
 * This server's clock against the database's (PostgreSQL only).
 * @typedef {object} ClockHealth
 * @property {"ok" | "skewed"} status
 * @property {number | null} offset_seconds - How far this server's clock is ahead of the
 *   database's (negative: behind)
 * @property {number} max_skew_seconds - PAWFLOW_MAX_CLOCK_SKEW
 * @property {string | null} read_at - When the database's clock was last read
 * @property {string} detail
 */

/**
 * @typedef {object} Column
 * @property {string} key
 * @property {string} label
 * @property {"start" | "end" | "center"} [align]
 */

/**
 * A conversation as one user sees it: their `access` and the other members.
 * @typedef {object} Conversation
 * @property {string} id
 * @property {string} owner
 * @property {string} title
 * @property {string} created_at
 * @property {"owner" | "write" | "read"} access
 * @property {Record<string, "read" | "write">} members
 */

/**
 * @typedef {object} ConversationEnvelope
 * @property {Conversation} conversation
 */

/**
 * @typedef {object} ConversationList
 * @property {Array<Conversation>} conversations
 */

/**
 * @typedef {object} CreateConversation
 * @property {string} [title]
 */

/**
 * @typedef {object} CreateWebhook
 * @property {string} url - An http(s) URL without credentials. Its host must resolve outside the
 *   server's network unless the server allows it (PAWFLOW_EGRESS_ALLOWED_HOSTS): the server checks
 *   that, beyond this document, with a 422 on url.
 * @property {Array<"interaction.created" | "interaction.answered" | "interaction.expired" |
 *   "interaction.cancelled">} events
 */

/**
 * @typedef {object} CreatedWebhook
 * @property {WebhookOut} webhook
 * @property {string} secret - The signing secret (whsec_…): shown this once.
 */

/**
 * @typedef {object} DelegateBody
 * @property {string} to
 * @property {string} until - ISO-8601 with a timezone: the delegation ends then; a past one is
 *   409.
 * @property {string | null} [principal] - Whom the delegate answers for: the caller unless an
 *   admin.
 */

/**
 * @typedef {object} Delegation
 * @property {string} principal
 * @property {string} delegate
 * @property {string} until
 */

/**
 * @typedef {object} Delegations
 * @property {Array<Delegation>} delegations
 */

/**
 * @typedef {object} Deleted
 * @property {boolean} deleted
 */

/**
 * One notification of a request: by which channel, to whom, and how it went.
 * @typedef {object} Delivery
 * @property {string} id
 * @property {string} channel
 * @property {string} recipient
 * @property {"queued" | "sent" | "failed" | "skipped"} status
 * @property {number} attempts
 * @property {string | null} error
 * @property {string} created_at
 * @property {string | null} sent_at
 * @property {boolean} [updated] - Whether the sent copy was updated once the request was settled
 *   (Slack says who answered).
 * @property {string} [text] - The delivery in words, as the History shows it: "email to lee:
 *   failed — not configured", "slack to ada: sent, updated after the answer".
 */

/**
 * @typedef {object} Done
 * @property {boolean} [ok]
 */

/**
 * @typedef {object} EachAnswered
 * @property {Array<Interaction>} answered - The requests answered (a quorum's vote leaves one
 *   pending), in order.
 * @property {Array<Refused>} refused - The requests left as they were, with why.
 */

/**
 * After a time since the request, add assignees (and tell them).
 * @typedef {object} EscalationStep
 * @property {string} after
 * @property {Array<string>} to
 */

/**
 * @typedef {object} FileEnvelope
 * @property {FileRef} file
 */

/**
 * An upload, as a `file` answer refers to it.
 * @typedef {object} FileRef
 * @property {string} id
 * @property {string} name
 * @property {number} size
 * @property {string} media_type
 * @property {string} sha256
 */

/**
 * @typedef {object} GetHistory
 * @property {string} conversation_id
 * @property {number} [after_seq]
 * @property {number} [limit]
 */

/** @typedef {Record<string, never>} GetNotifications */

/**
 * @typedef {object} GetPush
 * @property {string | null} [endpoint] - This browser's endpoint, to learn whether it is
 *   subscribed.
 */

/**
 * @typedef {object} GroupBody
 * @property {string} name
 * @property {Array<string>} [users] - remove_from_group: none removes the whole group.
 */

/**
 * @typedef {object} Groups
 * @property {Record<string, Array<string>>} groups
 */

/**
 * @typedef {object} Health
 * @property {"ok" | "degraded" | "unavailable"} status - ok; degraded: a background loop fails,
 *   the store answers; unavailable (503): the store does not answer, or a loop is not running.
 * @property {string} store - `ok`, or what is wrong with the database and for how long.
 * @property {Record<string, string>} loops - Each background loop of the process: `running`,
 *   `failing for N s (…)` or `not running`.
 * @property {string} version - The server's version of PawFlow.
 * @property {ClockHealth | null} [clock]
 */

/**
 * @typedef {object} History
 * @property {Array<MessageOut>} messages
 */

/**
 * @typedef {object} Inbox
 * @property {Array<InboxItem>} items
 */

/**
 * @typedef {object} InboxBody
 * @property {"all" | "assigned" | "own" | "mine" | "groups" | "claimed" | "others" | "visible"}
 *   [filter] - all: every request the caller may answer now (what their badge counts); assigned:
 *   mine, groups and claimed; own: the caller's own requests without assignees; mine: assigned to
 *   the caller (or to whom they stand in for); groups: through a group; claimed: claimed by the
 *   caller; others: the caller's requests that wait for someone else; visible: all and others.
 */

/**
 * @typedef {object} InboxItem
 * @property {Interaction} interaction
 * @property {"own" | "mine" | "groups" | "claimed" | "others"} why
 * @property {Array<string>} [waiting_for] - others: whom the request waits for (its assignees, or
 *   who claimed it).
 */

/**
 * A request for input: the `pawflow.user-interaction.v1` record.
 * @typedef {object} Interaction
 * @property {"pawflow.user-interaction.v1"} contract
 * @property {string} id
 * @property {Kind} kind
 * @property {string | null} title
 * @property {string} message
 * @property {Array<OptionItem> | null} options
 * @property {Record<string, unknown>} response_schema
 * @property {string} owner
 * @property {string} conversation_id
 * @property {Requester} requester
 * @property {string} signal_id
 * @property {Status} status
 * @property {unknown} answer
 * @property {string | null} answered_by
 * @property {string | null} answered_at
 * @property {string | null} answered_via
 * @property {number | null} answered_seq
 * @property {string} created_at
 * @property {string | null} expires_at
 * @property {Record<string, unknown> | null} ui_surface
 */

/**
 * A request with its policy's state (assignees, claim, quorum) and its audit trail.
 * @typedef {object} InteractionDetails
 * @property {Interaction} interaction
 * @property {Record<string, unknown> | null} policy - assignees, claimed_by, required_approvals,
 *   approvals, progress ('2 of 3 approvals'), on_expire…; null: anyone who may write answers.
 * @property {Array<AuditEntry>} audit
 * @property {Array<Delivery>} deliveries - The request's notifications so far.
 */

/**
 * @typedef {object} InteractionEnvelope
 * @property {Interaction} interaction
 */

/**
 * @typedef {object} InteractionPage
 * @property {Array<Interaction>} interactions
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} InvitationList
 * @property {Array<InvitationOut>} invitations
 */

/**
 * @typedef {object} InvitationOut
 * @property {string} conversation_id
 * @property {string} title
 * @property {string} invited_by
 * @property {"read" | "write"} access
 * @property {string} created_at
 */

/**
 * @typedef {object} InvitationRef
 * @property {string} conversation_id
 */

/**
 * @typedef {object} ListAgents
 * @property {string | null} [conversation_id]
 */

/**
 * @typedef {object} ListApprovalRules
 * @property {string | null} [conversation_id]
 * @property {string | null} [agent]
 * @property {boolean} [include_revoked]
 */

/**
 * @typedef {object} ListConfirmations
 * @property {Status | null} [status]
 * @property {string | null} [conversation_id]
 * @property {"confirm" | "choice" | "multi" | null} [kind]
 * @property {number} [limit]
 * @property {string | null} [cursor]
 */

/** @typedef {Record<string, never>} ListConversations */

/** @typedef {Record<string, never>} ListGroups */

/**
 * @typedef {object} ListInteractions
 * @property {Status | null} [status]
 * @property {string | null} [conversation_id]
 * @property {Kind | null} [kind]
 * @property {number} [limit]
 * @property {string | null} [cursor]
 */

/** @typedef {Record<string, never>} ListInvitations */

/**
 * @typedef {object} ListTokens
 * @property {string | null} [user] - Another user's tokens (admins).
 * @property {boolean} [all] - Everyone's tokens (admins).
 */

/**
 * @typedef {object} ListWebhookDeliveries
 * @property {string} webhook_id
 * @property {number} [limit]
 */

/** @typedef {Record<string, never>} ListWebhooks */

/**
 * @typedef {object} MakeToken
 * @property {string} [name]
 * @property {string | null} [expires] - How long the token is valid (90d, 12h, 1y…; 'never' where
 *   the server allows it); by default the server's PAWFLOW_TOKEN_MAX_AGE.
 */

/**
 * @typedef {object} MessageEnvelope
 * @property {MessageOut} message
 */

/**
 * A message as the API sends it: the record, and for agents' and notifications'
 * messages the content rendered as sanitized HTML.
 * @typedef {object} MessageOut
 * @property {number} seq
 * @property {string} id
 * @property {string} conversation_id
 * @property {"user" | "assistant" | "system" | "notification"} role
 * @property {string} author
 * @property {string} content
 * @property {Record<string, unknown> | null} data
 * @property {string} created_at
 * @property {string | null} html - Agents' and notifications' messages: the content as sanitized
 *   HTML.
 */

/**
 * @typedef {object} NewToken
 * @property {string} token - The secret, shown this once: send it as a Bearer token.
 * @property {TokenInfo} info
 */

/**
 * @typedef {object} Notifications
 * @property {string} user
 * @property {string | null} email
 * @property {string | null} slack
 * @property {string | null} notify_url
 * @property {Array<"email" | "slack" | "webhook" | "apprise" | "push"> | null} notify
 * @property {Array<"email" | "slack" | "webhook" | "apprise" | "push">} channels
 * @property {Array<ServerChannel>} server_channels - Every channel, on or off on this server:
 *   notify may name only those on.
 */

/**
 * @typedef {object} OptionIn
 * @property {string} value
 * @property {string | null} [label]
 */

/**
 * One option a `choice`/`multi` request offers, as the record carries it.
 * @typedef {object} OptionItem
 * @property {string} value
 * @property {string} label
 */

/**
 * Everything the admin page shows but the audit trail.
 * @typedef {object} Overview
 * @property {Array<Record<string, unknown>>} users
 * @property {Array<Record<string, unknown>>} groups
 * @property {Array<Record<string, string>>} delegations
 * @property {Array<Record<string, unknown>>} tokens
 * @property {Array<Record<string, unknown>>} webhooks
 * @property {Array<Record<string, unknown>>} approval_rules
 * @property {Array<Record<string, unknown>>} channels
 * @property {Record<string, boolean>} options
 * @property {Record<string, unknown> | null} sso
 */

/**
 * @typedef {object} PushDevice
 * @property {string} id
 * @property {string} device
 * @property {string} created_at
 */

/**
 * @typedef {object} PushKeys
 * @property {string} p256dh - The device's P-256 public key (base64url).
 * @property {string} auth - The device's authentication secret (base64url).
 */

/**
 * @typedef {object} PushSettings
 * @property {boolean} enabled - Whether this server sends Web Push at all.
 * @property {string | null} public_key - The server's VAPID public key: the browser's
 *   applicationServerKey.
 * @property {boolean} subscribed - Whether the endpoint given is one of the caller's.
 * @property {Array<PushDevice>} devices
 */

/**
 * @typedef {object} ReassignBody
 * @property {string} request_id
 * @property {ClientChannel} [via]
 * @property {Array<string>} to
 */

/**
 * @typedef {object} Refused
 * @property {string} request_id
 * @property {number} status - The HTTP status one answer would have had (403, 409, …).
 * @property {string} error - Why, in words: whom it waits for, what it became, …
 * @property {Array<string> | null} [waiting_for]
 */

/**
 * One of the caller's devices, by its id (as `get_push` lists them).
 * @typedef {object} RemovePushDevice
 * @property {string} device_id
 */

/**
 * Ask the caller (or whoever answers in the conversation) something.
 * @typedef {object} RequestInteraction
 * @property {string} conversation_id
 * @property {Kind} kind
 * @property {string} message
 * @property {string | null} [title]
 * @property {Array<string | OptionIn> | null} [options]
 * @property {Record<string, unknown> | null} [response_schema] - The answer's JSON Schema, in the
 *   contract's subset (docs/contract.md): which keywords a kind takes, bounds that agree, form
 *   fields that exist.
 * @property {string | number | null} [expires_in] - 90s, 5m, 12h, 3d, 2w, 1mo, 1y; 0 or absent:
 *   never
 * @property {string | null} [expires_at] - ISO-8601 with a timezone; a moment already past is a
 *   409
 * @property {Record<string, unknown> | null} [ui_surface] - A pawflow.ui-surface.v1 surface
 *   (docs/contract.md): its fallback is the request's kind, and a table or card fits that kind and
 *   its options.
 * @property {string | null} [idempotency_key]
 * @property {Array<"email" | "slack" | "webhook" | "apprise" | "push"> | null} [notify] - The
 *   channels to notify of this request ([]: none); absent: the owner's own (set_notifications).
 * @property {Array<string> | null} [assignees] - Who may answer: users and group:NAME entries
 *   (docs/governance.md); absent: the requester and the conversation's writers.
 * @property {boolean | null} [requester_may_answer] - false: the requester may not answer (no
 *   self-approval).
 * @property {Array<string> | null} [reassign_to] - Whom an assignee may hand the request to,
 *   besides them.
 * @property {string | null} [claim_for] - How long a claim lasts (1h).
 * @property {number | null} [required_approvals] - confirm: this many distinct assignees' yes
 *   approve it.
 * @property {"first" | "majority" | null} [reject] - With required_approvals: the first no
 *   rejects, or a majority.
 * @property {string | null} [remind_every] - Remind the assignees this often while it waits.
 * @property {Array<EscalationStep> | null} [escalate] - Steps that add assignees as time passes
 *   since the request.
 * @property {"cancel" | {cancel: true} | {answer: unknown} | {extend: string, escalate?:
 *   Array<string>} | null} [on_expire] - At the deadline: cancel, {answer: VALUE} (checked now
 *   against the request, which needs a deadline) or {escalate: [...], extend: DURATION}.
 */

/**
 * @typedef {object} RequestRef
 * @property {string} request_id
 */

/**
 * Who resumes on the answer: `{type: agent|flow|api, name, …}`.
 * @typedef {object} Requester
 * @property {"agent" | "flow" | "api"} [type]
 * @property {string} [name]
 */

/**
 * @typedef {object} Respond
 * @property {string} request_id
 * @property {unknown} answer - The typed value for the request's kind.
 * @property {ClientChannel} [answered_via] - Where the answer was given: a block's button (web
 *   chat, terminal, editor), the command line, or a plain API call. Kept on the record.
 */

/**
 * @typedef {object} RespondEach
 * @property {Array<string>} request_ids - The requests to answer, all of one kind (the first
 *   one's); each once.
 * @property {unknown} answer - The typed value for their kind, given to each.
 * @property {ClientChannel} [answered_via]
 */

/**
 * @typedef {object} RotateToken
 * @property {string} token_id
 * @property {string | null} [expires] - How long the token is valid (90d, 12h, 1y…; 'never' where
 *   the server allows it); by default the server's PAWFLOW_TOKEN_MAX_AGE.
 */

/**
 * @typedef {object} Row
 * @property {string | null} [value]
 * @property {Record<string, string | number | boolean | null>} cells
 */

/**
 * @typedef {object} RuleRef
 * @property {string} rule_id
 */

/**
 * @typedef {object} SendMessage
 * @property {string} conversation_id
 * @property {string} content
 */

/**
 * A channel and whether this server can send it.
 * @typedef {object} ServerChannel
 * @property {"email" | "slack" | "webhook" | "apprise" | "push"} channel
 * @property {boolean} on
 * @property {string | null} reason - Why the server cannot send it ("no PAWFLOW_SMTP_URL"); null
 *   when on.
 */

/**
 * @typedef {object} SessionOut
 * @property {string} user
 * @property {"token" | "session"} via
 * @property {string | null} csrf_token
 * @property {string} version - The server's version of PawFlow.
 * @property {"admin" | "member"} [role]
 * @property {string} [signout_url] - Where to go after POST /signout.
 */

/**
 * Where the caller is reached; a field left out stays as it is, "" clears it.
 * @typedef {object} SetNotifications
 * @property {string | null} [email]
 * @property {string | null} [slack]
 * @property {string | null} [notify_url] - An Apprise URL. Apprise must read it and its host must
 *   be one the server may call (PAWFLOW_EGRESS_ALLOWED_HOSTS): the server checks that, beyond this
 *   document, with a 422 on notify_url.
 * @property {Array<"email" | "slack" | "webhook" | "apprise" | "push"> | null} [notify] - The
 *   channels to use; null: every channel with an address.
 */

/**
 * @typedef {object} ShareConversation
 * @property {string} conversation_id
 * @property {string} user
 * @property {"read" | "write"} access
 */

/** @typedef {Record<string, never>} SignOut */

/**
 * @typedef {object} SignedOut
 * @property {number} ended - How many browser sessions ended.
 */

/**
 * A browser's `PushSubscription.toJSON()`, and what to call the device.
 * @typedef {object} SubscribePush
 * @property {string} endpoint
 * @property {PushKeys} keys
 * @property {string} [device]
 */

/**
 * @typedef {object} TableSurface
 * @property {"pawflow.ui-surface.v1"} contract
 * @property {"table"} type
 * @property {Kind} fallback
 * @property {string | null} [title]
 * @property {Array<Column>} columns
 * @property {Array<Row>} rows
 */

/**
 * A token as listed: never its secret.
 * @typedef {object} TokenInfo
 * @property {string} id
 * @property {string} user
 * @property {string} name
 * @property {string} created_at
 * @property {string | null} expires_at - Null: it does not expire.
 * @property {string | null} last_used_at - Written at most once a minute.
 */

/**
 * @typedef {object} TokenRef
 * @property {string} token_id
 */

/**
 * @typedef {object} Tokens
 * @property {Array<TokenInfo>} tokens
 */

/**
 * One approval request: what was proposed, decided and run.
 * @typedef {object} ToolApproval
 * @property {Interaction} interaction
 * @property {string} tool
 * @property {Record<string, unknown>} proposed
 * @property {string | null} [decision]
 * @property {Record<string, unknown> | null} [approved]
 * @property {string | null} [decided_by]
 * @property {string | null} [digest]
 * @property {ToolExecution | null} [executed]
 */

/**
 * The arguments an approved tool call was run with, under its approval request.
 * @typedef {object} ToolExecution
 * @property {string} request_id
 * @property {string} tool
 * @property {Record<string, unknown>} arguments
 * @property {string | null} run_id
 * @property {string} executed_at
 */

/**
 * This browser, by its endpoint.
 * @typedef {object} UnsubscribePush
 * @property {string} endpoint
 */

/**
 * @typedef {object} UserAccess
 * @property {string} user
 * @property {boolean} disabled
 * @property {boolean} changed - False: the user was already so.
 */

/**
 * @typedef {object} WebhookDeliveries
 * @property {Array<WebhookDeliveryOut>} deliveries
 */

/**
 * One event sent (or on its way) to a webhook; `id` is its `webhook-id`.
 * @typedef {object} WebhookDeliveryOut
 * @property {string} id
 * @property {string} webhook_id
 * @property {string} request_id
 * @property {"interaction.created" | "interaction.answered" | "interaction.expired" |
 *   "interaction.cancelled"} event
 * @property {"queued" | "sent" | "failed"} status
 * @property {number} attempts
 * @property {string | null} error
 * @property {number | null} response_status
 * @property {string} created_at
 * @property {string | null} next_at
 * @property {string | null} sent_at
 */

/**
 * @typedef {object} WebhookList
 * @property {Array<WebhookOut>} webhooks
 */

/**
 * @typedef {object} WebhookOut
 * @property {string} id
 * @property {string} url
 * @property {Array<"interaction.created" | "interaction.answered" | "interaction.expired" |
 *   "interaction.cancelled">} events
 * @property {string} created_at
 */

/**
 * @typedef {object} WebhookRef
 * @property {string} webhook_id
 */

/**
 * @typedef {object} pawflow__server__tokens__UserRef
 * @property {string} user
 */
