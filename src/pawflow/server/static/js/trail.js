// @ts-check
// A request's accountability, under its block: who it waits for, who handles it, how many
// approvals it has, its audit trail ("History") and each notification's outcome, read from
// get_interaction when opened.

import { action, ApiError } from "./api.js";
import { clear, h } from "./dom.js";
import { fromNow, when } from "./format.js";
import { me, waitsForOthers } from "./state.js";

/**
 * @import { AuditEntry, InteractionDetails } from "./contract.js"
 */

/** @type {Record<string, string>} */
const ACTION_TEXT = {
  created: "Asked",
  delivered: "Delivered",
  claimed: "Claimed",
  released: "Released",
  reassigned: "Reassigned",
  reminded: "Reminded",
  escalated: "Escalated",
  extended: "Extended",
  voted: "Voted",
  answered: "Answered",
  defaulted: "No one answered: the default was applied",
  expired: "Expired",
  cancelled: "Cancelled",
};

/**
 * The policy's state in words: "Waits for ada, group:leads · being handled by lou · 1 of 2
 * approvals".
 * @param {Record<string, unknown>} policy
 * @returns {string}
 */
export function policyText(policy) {
  const parts = [];
  const assignees = policy.assignees;
  if (Array.isArray(assignees) && assignees.length) parts.push(`Waits for ${assignees.join(", ")}`);
  if (typeof policy.claimed_by === "string") parts.push(`being handled by ${policy.claimed_by}`);
  if (typeof policy.progress === "string") parts.push(policy.progress);
  return parts.join(" · ");
}

/**
 * One audit step as a line: "Answered by ada via cli · 2 hours ago".
 * @param {AuditEntry} entry
 */
function stepLine(entry) {
  const what = ACTION_TEXT[entry.action] || entry.action;
  const by = entry.actor ? ` by ${entry.actor}` : "";
  const via = entry.via ? ` via ${entry.via}` : "";
  const at = h("time", { datetime: entry.at, title: when(entry.at) }, fromNow(entry.at));
  return h("li", { dataset: { action: entry.action } }, `${what}${by}${via} · `, at);
}

/**
 * A "History" disclosure for the request ``requestId``: it reads the trail when opened.
 * @param {string} requestId
 */
export function trailControl(requestId) {
  const summary = h("p", { class: "trail-policy" });
  const list = h("ol", { class: "trail-steps" });
  const sent = h("ul", { class: "trail-deliveries", "aria-label": "Notifications" });
  const details = h("details", { class: "trail" }, h("summary", null, "History"), summary, list, sent);
  /** @param {InteractionDetails} found */
  const show = (found) => {
    clear(summary);
    summary.append(found.policy ? policyText(found.policy) : "");
    const claim = found.interaction.status === "pending" ? claimControl(found) : null;
    if (claim) summary.append(" ", claim);
    clear(list);
    list.append(...found.audit.map(stepLine));
    clear(sent);
    // Each notification and how it went: "email to lee: failed — not configured".
    sent.append(...found.deliveries.map((d) => h("li", { dataset: { status: d.status } }, d.text)));
  };
  /**
   * Claim or release: the assignees see who handles the request.
   * @param {InteractionDetails} found
   */
  const claimControl = (found) => {
    const policy = found.policy;
    if (!policy || !Array.isArray(policy.assignees) || typeof policy.required_approvals === "number") {
      return null;
    }
    const holder = policy.claimed_by;
    if (holder && holder !== me.user) return null;
    if (!holder && waitsForOthers(found.interaction)) return null; // not the user's to take on
    const name = holder ? "release_interaction" : "claim_interaction";
    return h(
      "button",
      {
        type: "button",
        class: "trail-claim",
        onclick: async () => {
          try {
            show(await action(name, { request_id: requestId, via: "button" }));
          } catch (error) {
            if (!(error instanceof ApiError)) throw error;
            summary.append(" ", error.message);
          }
        },
      },
      holder ? "Release" : "Claim",
    );
  };
  details.addEventListener("toggle", async () => {
    if (!(/** @type {HTMLDetailsElement} */ (details).open)) return;
    try {
      show(await action("get_interaction", { request_id: requestId }));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      clear(list);
      list.append(h("li", null, error.status === 404 ? "Only its requester sees its history." : error.message));
    }
  });
  return details;
}
