// @ts-check
// Conversations offered to the signed-in user: each shows who offers it and with what
// access, and joins (Accept) or goes away (Decline). Nothing of the conversation itself is
// shown until it is accepted.

import * as api from "./api.js";
import { announce, clear, h, uid } from "./dom.js";

/** @import { Conversation, InvitationOut } from "./contract.js" */

export class InvitationList {
  /** @param {(conversation: Conversation) => void} onJoined runs after one is accepted */
  constructor(onJoined) {
    this.onJoined = onJoined;
    this.titleId = uid("invitations-title");
    this.list = h("ul", { class: "invitation-list", "aria-labelledby": this.titleId });
    this.el = h(
      "section",
      { class: "invitations", hidden: true },
      h("h2", { id: this.titleId }, "Invitations"),
      this.list,
    );
    /** @type {InvitationOut[]} */
    this.invitations = [];
  }

  async load() {
    const found = await api.action("list_invitations", {});
    this.invitations = found.invitations;
    this.render();
  }

  render() {
    clear(this.list);
    this.el.hidden = this.invitations.length === 0;
    for (const invitation of this.invitations) this.list.append(this.item(invitation));
  }

  /** @param {InvitationOut} invitation */
  item(invitation) {
    const title = invitation.title || "Untitled conversation";
    const access = invitation.access === "write" ? "to read and answer" : "to read";
    const error = h("p", { class: "field-error", role: "alert", hidden: true });
    /** @param {boolean} accept */
    const decide = async (accept) => {
      error.hidden = true;
      const ref = { conversation_id: invitation.conversation_id };
      try {
        const joined = accept ? (await api.action("accept_invitation", ref)).conversation : null;
        if (!accept) await api.action("decline_invitation", ref);
        this.invitations = this.invitations.filter((i) => i !== invitation);
        this.render();
        if (joined) {
          announce(`Joined ${title}`);
          this.onJoined(joined);
        } else {
          announce(`Declined ${title}`);
        }
      } catch (failure) {
        error.textContent = api.messageOf(failure);
        error.hidden = false;
      }
    };
    return h(
      "li",
      { class: "invitation", dataset: { conversationId: invitation.conversation_id } },
      h("span", { class: "conversation-name" }, title),
      h("span", { class: "invitation-from" }, `${invitation.invited_by} invites you ${access}`),
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          {
            type: "button",
            class: "primary small",
            "aria-label": `Accept invitation to ${title}`,
            onclick: () => decide(true),
          },
          "Accept",
        ),
        h(
          "button",
          {
            type: "button",
            class: "small",
            "aria-label": `Decline invitation to ${title}`,
            onclick: () => decide(false),
          },
          "Decline",
        ),
      ),
      error,
    );
  }
}
