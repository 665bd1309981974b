// @ts-check
// The settings on the home page: where the signed-in user is notified of requests (the
// actions get_notifications and set_notifications), as `pawflow users set` changes them.

import * as api from "./api.js";
import { h, uid } from "./dom.js";

/** @import { Notifications, SetNotifications } from "./contract.js" */

/** @typedef {"email" | "slack" | "webhook" | "apprise"} NotifyChannel */

/** @type {{name: NotifyChannel, label: string}[]} */
const CHANNELS = [
  { name: "email", label: "Email" },
  { name: "slack", label: "Slack" },
  { name: "webhook", label: "Webhooks" },
  { name: "apprise", label: "Notification URL" },
];

/**
 * @param {string} label
 * @param {string} type
 * @param {string} hint
 */
function textField(label, type, hint) {
  const id = uid("notify");
  const input = h("input", { id, type, autocomplete: "off", placeholder: hint });
  return { input, element: h("p", null, h("label", { for: id }, label), h("br"), input) };
}

/** The "Notifications" section: loads the settings when first opened. */
export function notificationSettings() {
  const email = textField("Email address", "email", "ada@example.org");
  const slack = textField("Slack user id", "text", "U0123ABCD");
  const url = textField("Notification URL (Apprise)", "url", "ntfy://ntfy.sh/my-topic");
  const byDefault = h("input", { type: "checkbox", id: uid("notify-default") });
  const boxes = CHANNELS.map((channel) => ({
    channel,
    box: h("input", { type: "checkbox", id: uid(`notify-${channel.name}`) }),
  }));
  const status = h("p", { class: "note", role: "status" });
  const syncBoxes = () => {
    for (const { box } of boxes) box.disabled = byDefault.checked;
  };
  byDefault.addEventListener("change", syncBoxes);

  /** @param {Notifications} found */
  const show = (found) => {
    email.input.value = found.email || "";
    slack.input.value = found.slack || "";
    url.input.value = found.notify_url || "";
    byDefault.checked = found.notify === null;
    for (const { channel, box } of boxes) box.checked = found.channels.includes(channel.name);
    syncBoxes();
  };

  const form = h(
    "form",
    { class: "notify-settings", novalidate: true },
    email.element,
    slack.element,
    url.element,
    h(
      "fieldset",
      null,
      h("legend", null, "Notify me by"),
      h("label", { for: byDefault.id }, byDefault, " every channel with an address"),
      h("br"),
      boxes.map(({ channel, box }) => h("label", { for: box.id, class: "inline" }, box, " ", channel.label, " ")),
    ),
    h("button", { type: "submit", class: "primary" }, "Save"),
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.textContent = "";
    /** @type {SetNotifications} */
    const body = {
      email: email.input.value.trim(),
      slack: slack.input.value.trim(),
      notify_url: url.input.value.trim(),
      notify: byDefault.checked ? null : boxes.filter(({ box }) => box.checked).map(({ channel }) => channel.name),
    };
    try {
      show(await api.action("set_notifications", body));
      status.textContent = "Saved.";
    } catch (error) {
      status.textContent = api.messageOf(error);
    }
  });

  const section = h("details", { class: "settings" }, h("summary", null, "Notifications"), form);
  let loaded = false;
  section.addEventListener("toggle", async () => {
    if (loaded || !section.open) return;
    loaded = true;
    try {
      show(await api.action("get_notifications", {}));
    } catch (error) {
      loaded = false;
      status.textContent = api.messageOf(error);
    }
  });
  return section;
}
