// Conversations offered to the signed-in user: each shows who offers it and with what
// access, and joins (Accept) or goes away (Decline). Nothing of the conversation itself is
// shown until it is accepted.

import * as api from "./api.js";
import { announce, clear, h, uid } from "./dom.js";

export class InvitationList {
  /** onJoined(conversation) runs after an invitation is accepted. */
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

  item(invitation) {
    const title = invitation.title || "Untitled conversation";
    const access = invitation.access === "write" ? "to read and answer" : "to read";
    const error = h("p", { class: "field-error", role: "alert", hidden: true });
    const decide = async (action) => {
      error.hidden = true;
      try {
        const found = await api.action(action, { conversation_id: invitation.conversation_id });
        this.invitations = this.invitations.filter((i) => i !== invitation);
        this.render();
        if (action === "accept_invitation") {
          announce(`Joined ${title}`);
          this.onJoined(found.conversation);
        } else {
          announce(`Declined ${title}`);
        }
      } catch (failure) {
        error.textContent = failure.message;
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
            onclick: () => decide("accept_invitation"),
          },
          "Accept",
        ),
        h(
          "button",
          {
            type: "button",
            class: "small",
            "aria-label": `Decline invitation to ${title}`,
            onclick: () => decide("decline_invitation"),
          },
          "Decline",
        ),
      ),
      error,
    );
  }
}
