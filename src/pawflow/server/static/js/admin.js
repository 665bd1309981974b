// @ts-check
// The admin page (/admin): users, groups, delegations, tokens, webhooks, approval rules,
// channels, options and the audit trail, drawn from /api/admin/overview. Every button is a
// real <button> (keyboard reachable); the server answers 403 to anyone but an admin.

import * as api from "./api.js";
import { announce, clear, h } from "./dom.js";

/** @typedef {Record<string, any>} Row */

export class AdminView {
  constructor() {
    this.element = h("section", { class: "admin", "aria-labelledby": "admin-title" });
    this.title = h("h2", { id: "admin-title", tabindex: "-1" }, "Admin");
    this.body = h("div", { class: "admin-body" });
    this.element.append(this.title, this.body);
  }

  focusTitle() {
    this.title.focus();
  }

  async refresh() {
    /** @type {Row} */
    let found;
    try {
      found = await api.adminGet("overview");
    } catch (error) {
      clear(this.body).append(h("p", { role: "alert" }, api.messageOf(error)));
      return;
    }
    clear(this.body).append(
      this.users(found.users),
      this.groups(found.groups),
      this.delegations(found.delegations),
      this.tokens(found.tokens),
      this.table("Webhooks", ["owner", "url", "events"], found.webhooks, (row) =>
        this.button("Remove", "webhooks/remove", { id: row.id }, `Remove webhook ${row.url}`),
      ),
      this.table("Approval rules", ["owner", "agent", "tool", "scope"], found.approval_rules, (row) =>
        this.button("Revoke", "approval_rules/revoke", { id: row.id }, `Revoke rule ${row.tool}`),
      ),
      this.channels(found.channels),
      this.options(found.options, found.sso),
      this.audit(),
    );
  }

  /**
   * @param {string} label
   * @param {string} path
   * @param {Record<string, unknown>} body
   * @param {string} [name]
   */
  button(label, path, body, name) {
    return h(
      "button",
      {
        type: "button",
        class: "quiet",
        "aria-label": name || label,
        onclick: async () => {
          try {
            await api.adminPost(path, body);
            announce(`${name || label}: done`);
            await this.refresh();
          } catch (error) {
            announce(api.messageOf(error));
            this.body.prepend(h("p", { role: "alert", class: "error" }, api.messageOf(error)));
          }
        },
      },
      label,
    );
  }

  /**
   * A small form: its fields' values are posted to ``path``.
   * @param {string} label
   * @param {string} path
   * @param {{name: string, label: string, type?: string}[]} fields
   * @param {(values: Record<string, string>) => Record<string, unknown>} shape
   */
  form(label, path, fields, shape) {
    const inputs = fields.map((field) =>
      h("input", { name: field.name, type: field.type || "text", "aria-label": field.label, placeholder: field.label, required: true }),
    );
    return h(
      "form",
      {
        class: "admin-form",
        "aria-label": label,
        onsubmit: async (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          /** @type {Record<string, string>} */
          const values = {};
          for (const input of inputs) values[input.name] = input.value.trim();
          try {
            await api.adminPost(path, shape(values));
            announce(`${label}: done`);
            await this.refresh();
          } catch (error) {
            announce(api.messageOf(error));
            this.body.prepend(h("p", { role: "alert", class: "error" }, api.messageOf(error)));
          }
        },
      },
      ...inputs,
      h("button", { type: "submit" }, label),
    );
  }

  /**
   * @param {string} title
   * @param {string[]} columns
   * @param {Row[]} rows
   * @param {(row: Row) => Node} [actions]
   * @param {Node[]} [extra]
   */
  table(title, columns, rows, actions, extra = []) {
    const section = h("section", { class: "admin-section", "aria-label": title }, h("h3", null, title), ...extra);
    if (!rows.length) {
      section.append(h("p", { class: "empty" }, "None."));
      return section;
    }
    const head = h("tr", null, ...columns.map((c) => h("th", { scope: "col" }, c)));
    if (actions) head.append(h("th", { scope: "col" }, "Actions"));
    const body = rows.map((row) => {
      // Each cell carries its column's name: on a narrow screen a row is a card of labels.
      const line = h("tr", null, ...columns.map((c) => h("td", { dataset: { label: c } }, format(row[c]))));
      if (actions) line.append(h("td", { class: "row-actions" }, actions(row)));
      return line;
    });
    section.append(h("div", { class: "table-wrap" }, h("table", null, h("thead", null, head), h("tbody", null, ...body))));
    return section;
  }

  /** @param {Row[]} users */
  users(users) {
    const add = this.form("Add user", "users/add", [{ name: "name", label: "User name" }], (v) => ({ name: v.name }));
    const rows = users.map((u) => ({ ...u, state: u.disabled ? "disabled" : "active" }));
    return this.table("Users", ["id", "role", "state", "email", "groups"], rows, (row) => {
      const other = row.role === "admin" ? "member" : "admin";
      return h(
        "span",
        { class: "actions" },
        this.button(`Make ${other}`, "users/role", { name: row.id, role: other }, `Make ${row.id} ${other}`),
        this.button("Revoke tokens", "users/revoke_tokens", { name: row.id }, `Revoke the tokens of ${row.id}`),
        row.disabled
          ? this.button("Enable", "users/enable", { name: row.id }, `Enable ${row.id}`)
          : this.button("Disable", "users/disable", { name: row.id }, `Disable ${row.id}`),
      );
    }, [add]);
  }

  /** @param {Row[]} groups */
  groups(groups) {
    const add = this.form(
      "Add to group",
      "groups/add",
      [{ name: "group", label: "Group" }, { name: "user", label: "User" }],
      (v) => ({ name: v.group, users: [v.user] }),
    );
    const rows = groups.map((g) => ({ ...g, kept: g.provider ? "identity provider" : "here" }));
    return this.table("Groups", ["name", "members", "kept"], rows, (row) =>
      row.provider
        ? h("span", { class: "muted" }, "Change it at the provider")
        : h(
            "span",
            { class: "actions" },
            ...row.members.map((/** @type {string} */ member) =>
              this.button(`Remove ${member}`, "groups/remove", { name: row.name, users: [member] }, `Remove ${member} from ${row.name}`),
            ),
          ),
    [add]);
  }

  /** @param {Row[]} delegations */
  delegations(delegations) {
    const add = this.form(
      "Delegate",
      "delegations/add",
      [{ name: "principal", label: "For" }, { name: "to", label: "Delegate" }, { name: "until", label: "Until (2030-01-01T00:00:00Z)" }],
      (v) => v,
    );
    return this.table("Delegations", ["principal", "delegate", "until"], delegations, (row) =>
      this.button("End", "delegations/revoke", { principal: row.principal, to: row.delegate }, `End the delegation of ${row.principal} to ${row.delegate}`),
    [add]);
  }

  /** @param {Row[]} tokens */
  tokens(tokens) {
    return this.table("Tokens", ["owner", "name", "created_at", "last_used_at", "expires_at"], tokens, (row) =>
      this.button("Revoke", "tokens/revoke", { id: row.id }, `Revoke token ${row.name || row.id} of ${row.owner}`),
    );
  }

  /** @param {Row[]} channels */
  channels(channels) {
    const rows = channels.map((c) => ({
      ...c,
      state: c.configured ? "configured" : "not configured",
      outbox: Object.entries(c.outbox).map(([k, v]) => `${v} ${k}`).join(", ") || "—",
    }));
    return this.table("Channels", ["name", "state", "outbox"], rows);
  }

  /**
   * @param {Row} options
   * @param {Row | null} sso
   */
  options(options, sso) {
    const on = Boolean(options.link_signin);
    return h(
      "section",
      { class: "admin-section", "aria-label": "Sign-in" },
      h("h3", null, "Sign-in"),
      h("p", null, sso ? `Single sign-on: ${sso.name} (${sso.issuer}).` : "Single sign-on is not set up."),
      h("p", null, `Sign-in links are ${on ? "on" : "off"}. `,
        this.button(on ? "Turn sign-in links off" : "Turn sign-in links on", "options", { link_signin: !on })),
    );
  }

  audit() {
    const list = h("div", { class: "audit-list" });
    const fields = ["user", "action", "request", "since", "until"].map((name) =>
      h("input", { name, "aria-label": `Filter by ${name}`, placeholder: name }),
    );
    const query = (/** @type {string} */ format) => {
      const params = new URLSearchParams({ format });
      for (const input of fields) if (input.value.trim()) params.set(input.name, input.value.trim());
      return params.toString();
    };
    const show = async () => {
      try {
        const found = await api.adminGet(`audit?${query("json")}`);
        clear(list).append(this.table("Entries", ["at", "kind", "actor", "action", "target", "address"], found.entries.slice().reverse()));
      } catch (error) {
        clear(list).append(h("p", { role: "alert" }, api.messageOf(error)));
      }
    };
    const form = h(
      "form",
      { class: "admin-form", "aria-label": "Filter the audit trail", onsubmit: (/** @type {SubmitEvent} */ e) => { e.preventDefault(); show(); } },
      ...fields,
      h("button", { type: "submit" }, "Filter"),
      h("a", { href: "#", class: "export", onclick: (/** @type {MouseEvent} */ e) => { /** @type {HTMLAnchorElement} */ (e.currentTarget).href = `/api/admin/audit?${query("jsonl")}`; } }, "Export JSON Lines"),
      h("a", { href: "#", class: "export", onclick: (/** @type {MouseEvent} */ e) => { /** @type {HTMLAnchorElement} */ (e.currentTarget).href = `/api/admin/audit?${query("csv")}`; } }, "Export CSV"),
    );
    show();
    return h("section", { class: "admin-section", "aria-label": "Audit trail" }, h("h3", null, "Audit trail"), form, list);
  }
}

/** @param {unknown} value */
function format(value) {
  if (value === null || value === undefined || value === "") return "—";
  if (Array.isArray(value)) return value.join(", ") || "—";
  return String(value);
}
