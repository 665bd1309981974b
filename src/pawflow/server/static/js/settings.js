// @ts-check
// The settings on the home page: where the signed-in user is notified of requests (the
// actions get_notifications and set_notifications), as `pawflow users set` changes them,
// and whether this browser gets push notifications (get_push, subscribe_push,
// unsubscribe_push; the service worker, sw.js, shows them).

import * as api from "./api.js";
import { h, uid } from "./dom.js";
import { when } from "./format.js";

/** @import { Notifications, PushDevice, SetNotifications } from "./contract.js" */

/** @typedef {"email" | "slack" | "webhook" | "apprise" | "push"} NotifyChannel */

/** @type {{name: NotifyChannel, label: string}[]} */
const CHANNELS = [
  { name: "email", label: "Email" },
  { name: "slack", label: "Slack" },
  { name: "webhook", label: "Webhooks" },
  { name: "apprise", label: "Notification URL" },
  { name: "push", label: "Push (devices)" },
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

/** What to call this browser in the list of devices: "Chrome on Android". */
function deviceName() {
  const agent = navigator.userAgent;
  const system = /Android/.test(agent)
    ? "Android"
    : /iPhone|iPad/.test(agent)
      ? "iOS"
      : /Windows/.test(agent)
        ? "Windows"
        : /Mac OS X/.test(agent)
          ? "macOS"
          : /Linux/.test(agent)
            ? "Linux"
            : "a device";
  const browser = /Edg\//.test(agent)
    ? "Edge"
    : /Firefox\//.test(agent)
      ? "Firefox"
      : /Chrom(e|ium)\//.test(agent)
        ? "Chrome"
        : /Safari\//.test(agent)
          ? "Safari"
          : "A browser";
  return `${browser} on ${system}`;
}

/**
 * The "Notify this device" switch: subscribes this browser to the server's pushes, or
 * stops them. Shown once ``load`` finds that the server sends pushes.
 */
function pushSwitch() {
  const box = h("input", { type: "checkbox", id: uid("push-device") });
  const status = h("p", { class: "note", role: "status" });
  const devices = h("ul", { class: "push-devices", "aria-label": "Devices notified" });
  const element = h(
    "fieldset",
    { class: "push-device", hidden: true },
    h("legend", null, "This device"),
    h("label", { for: box.id }, box, " Notify this device"),
    status,
    devices,
  );
  /** @type {string | null} */
  let key = null;
  const current = async () => (await navigator.serviceWorker.ready).pushManager.getSubscription();

  const load = async () => {
    const able = "serviceWorker" in navigator && "PushManager" in window;
    const mine = able ? await current() : null;
    const found = await api.action("get_push", mine ? { endpoint: mine.endpoint } : {});
    key = found.public_key;
    element.hidden = !found.enabled;
    box.checked = found.subscribed;
    box.disabled = !able;
    if (!able) status.textContent = "This browser cannot receive push notifications.";
    showDevices(found.devices);
  };

  /** @param {PushDevice[]} found every device of the user's that is notified */
  const showDevices = (found) => {
    devices.replaceChildren(
      ...found.map((device) => {
        const remove = h("button", { type: "button", class: "quiet" }, "Remove");
        remove.setAttribute("aria-label", `Remove ${device.device}`);
        remove.addEventListener("click", async () => {
          remove.disabled = true;
          try {
            await api.action("remove_push_device", { device_id: device.id });
            await load();
          } catch (error) {
            remove.disabled = false;
            status.textContent = api.messageOf(error);
          }
        });
        return h("li", null, `${device.device}, since ${when(device.created_at)} `, remove);
      }),
    );
  };

  const subscribe = async () => {
    if ((await Notification.requestPermission()) !== "granted") {
      throw new Error("Notifications are blocked for this site: allow them in the browser's settings.");
    }
    const registration = await navigator.serviceWorker.ready;
    const old = await registration.pushManager.getSubscription();
    if (old) await old.unsubscribe(); // perhaps made with another key, or for another person
    const made = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
    const keys = made.toJSON().keys || {};
    await api.action("subscribe_push", {
      endpoint: made.endpoint,
      keys: { p256dh: keys.p256dh || "", auth: keys.auth || "" },
      device: deviceName(),
    });
  };

  const unsubscribe = async () => {
    const mine = await current();
    if (!mine) return;
    try {
      await api.action("unsubscribe_push", { endpoint: mine.endpoint });
    } catch (error) {
      if (!(error instanceof api.ApiError && error.status === 404)) throw error;
    }
    await mine.unsubscribe();
  };

  box.addEventListener("change", async () => {
    const on = box.checked;
    status.textContent = "";
    box.disabled = true;
    try {
      await (on ? subscribe() : unsubscribe());
      await load();
      status.textContent = on ? "This device will be notified." : "This device will not be notified.";
    } catch (error) {
      box.checked = !on;
      status.textContent = api.messageOf(error);
    } finally {
      box.disabled = false;
    }
  });
  return { element, load };
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
  const unavailable = h("p", { class: "note channels-off", hidden: true });
  /** The channels this server cannot send: neither offered nor their addresses sent. */
  let off = new Set(/** @type {string[]} */ ([]));
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
    off = new Set(found.server_channels.filter((c) => !c.on).map((c) => c.channel));
    for (const { channel, box } of boxes) {
      box.checked = found.channels.includes(channel.name);
      const label = box.parentElement;
      if (label) label.hidden = off.has(channel.name);
    }
    email.element.hidden = off.has("email");
    slack.element.hidden = off.has("slack");
    url.element.hidden = off.has("apprise");
    const why = found.server_channels.filter((c) => !c.on).map((c) => `${c.channel} (${c.reason})`);
    unavailable.textContent = why.length ? `This server does not send ${why.join(", ")}.` : "";
    unavailable.hidden = !why.length;
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
      unavailable,
    ),
    h("button", { type: "submit", class: "primary" }, "Save"),
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.textContent = "";
    /** @type {SetNotifications} */
    const body = {
      notify: byDefault.checked
        ? null
        : boxes.filter(({ channel, box }) => box.checked && !off.has(channel.name)).map(({ channel }) => channel.name),
    };
    if (!off.has("email")) body.email = email.input.value.trim();
    if (!off.has("slack")) body.slack = slack.input.value.trim();
    if (!off.has("apprise")) body.notify_url = url.input.value.trim();
    try {
      show(await api.action("set_notifications", body));
      status.textContent = "Saved.";
    } catch (error) {
      status.textContent = api.messageOf(error);
    }
  });

  const push = pushSwitch();
  const section = h("details", { class: "settings" }, h("summary", null, "Notifications"), form, push.element);
  let loaded = false;
  section.addEventListener("toggle", async () => {
    if (loaded || !section.open) return;
    loaded = true;
    try {
      show(await api.action("get_notifications", {}));
      await push.load();
    } catch (error) {
      loaded = false;
      status.textContent = api.messageOf(error);
    }
  });
  return section;
}
