// @ts-check
// The web chat's service worker: it makes the chat an installable app and shows the
// requests the server pushes (Web Push, docs/channels.md) as notifications.
//
// A push carries {request_id, tag, title, body, answer_url, conversation_url, actions,
// deadline}: the body says the question, who asks, where and by when (in UTC; `deadline`
// lets the device say it in its own time zone). A confirm or a short
// choice offers its answers as the notification's actions: pressing one POSTs that answer
// (`pick`) to the answer link, which the answer spends, so one press answers once and a
// second press, here or on another device, is told the request was answered already.
// Showing a notification answers nothing. Tapping the notification opens the link's page.

/** The action of a notification that opens the request's conversation. */
const CONVERSATION = "conversation";

const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));

/**
 * @typedef {{action: string, title: string}} PushAction
 * @typedef {{at: string, text: string}} Deadline
 * @typedef {{request_id: string, tag: string, title: string, body: string,
 *   answer_url: string, conversation_url?: string, actions: PushAction[],
 *   deadline?: Deadline | null}} PushPayload
 */

/**
 * The body with its deadline said in this device's time zone, as the web chat says times.
 * @param {PushPayload} push
 * @returns {string}
 */
function localBody(push) {
  const deadline = push.deadline;
  const moment = deadline ? new Date(deadline.at) : null;
  if (!deadline || !moment || Number.isNaN(moment.getTime())) return push.body;
  const local = new Intl.DateTimeFormat(undefined, {
    dateStyle: "medium",
    timeStyle: "short",
  }).format(moment);
  return push.body.replace(deadline.text, local);
}

sw.addEventListener("install", () => {
  sw.skipWaiting();
});

sw.addEventListener("activate", (event) => {
  event.waitUntil(sw.clients.claim());
});

/**
 * The payload of a push, or null for one that is not PawFlow's.
 * @param {PushMessageData | null} data
 * @returns {PushPayload | null}
 */
function payloadOf(data) {
  if (!data) return null;
  try {
    const found = data.json();
    return found && typeof found.answer_url === "string" ? /** @type {PushPayload} */ (found) : null;
  } catch {
    return null;
  }
}

sw.addEventListener("push", (event) => {
  const push = payloadOf(event.data);
  if (!push) return;
  const most = Number(/** @type {{maxActions?: number}} */ (Notification).maxActions) || 2;
  // A choice with more answers than fit is answered on its page (a tap opens it).
  const answers = push.actions.length <= most ? push.actions : [];
  // One without answers offers its conversation beside the tap that opens the question.
  const actions =
    answers.length || !push.conversation_url
      ? answers
      : [{ action: CONVERSATION, title: "Open the conversation" }];
  /** @type {NotificationOptions & {actions: PushAction[]}} */
  const options = {
    body: localBody(push),
    tag: push.tag,
    icon: "/static/icons/icon-192.png",
    badge: "/static/icons/icon-192.png",
    requireInteraction: answers.length > 0,
    data: {
      answer_url: push.answer_url,
      conversation_url: push.conversation_url,
      actions: answers,
    },
    actions,
  };
  event.waitUntil(sw.registration.showNotification(push.title, options));
});

/**
 * Answer with the action pressed, through the answer link; on any refusal (answered
 * already, expired), say so in a notification whose tap opens the link's page, which says
 * how the request ended.
 * @param {Notification} notification
 * @param {string} action "" when the notification itself was tapped
 */
async function clicked(notification, action) {
  const data = /** @type {{answer_url?: string, conversation_url?: string,
    actions?: PushAction[]}} */ (notification.data || {});
  const page = data.answer_url;
  if (!page) return;
  if (action === CONVERSATION && data.conversation_url) {
    notification.close();
    await sw.clients.openWindow(data.conversation_url);
    return;
  }
  const chosen = (data.actions || []).find((item) => item.action === action);
  notification.close();
  if (!chosen) {
    await sw.clients.openWindow(page);
    return;
  }
  let answered = false;
  try {
    const response = await fetch(page, {
      method: "POST",
      body: new URLSearchParams({ pick: chosen.action }),
      credentials: "omit",
      redirect: "error",
    });
    answered = response.ok;
  } catch {
    answered = false;
  }
  if (answered) {
    await sw.registration.showNotification(`Answered “${chosen.title}”`, {
      tag: notification.tag,
      body: notification.title,
      icon: "/static/icons/icon-192.png",
      silent: true,
    });
  } else {
    await sw.registration.showNotification("Not answered", {
      tag: notification.tag,
      body: `${notification.title}: it was answered already, or can no longer be. Tap to see.`,
      icon: "/static/icons/icon-192.png",
      data: { answer_url: page, actions: [] },
    });
  }
}

sw.addEventListener("notificationclick", (event) => {
  const done = clicked(event.notification, event.action);
  // A click dispatched by a script (not the system's) cannot extend its event.
  if (event.isTrusted) event.waitUntil(done);
});
