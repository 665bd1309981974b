// The extension's entry point: sign-in (the token kept in SecretStorage), the Pending view
// with its badge, the event stream that keeps it current, notifications and the commands.

import * as vscode from "vscode";

import { PawflowClient } from "./client";
import { EventStream } from "./events";
import { summary, whyText } from "./kinds";
import { PendingModel, type ConversationGroup } from "./pending";
import { Answerer, OpenAnswers } from "./ui";
import { EVENTS, type InboxItem, type Interaction, type NotificationData } from "./wire";

const TOKEN_KEY = "pawflow.token";

type Node = { group: ConversationGroup } | { request: Interaction };

class PendingTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly model: PendingModel) {}

  refresh(): void {
    this.changed.fire();
  }

  getChildren(node?: Node): Node[] {
    if (node === undefined) return this.model.groups().map((group) => ({ group }));
    if ("group" in node) return node.group.requests.map((request) => ({ request }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if ("group" in node) {
      const item = new vscode.TreeItem(node.group.title, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `c:${node.group.conversationId}`;
      item.description = String(node.group.requests.length);
      item.iconPath = new vscode.ThemeIcon("comment-discussion");
      item.contextValue = "conversation";
      return item;
    }
    const record = node.request;
    const item = new vscode.TreeItem(summary(record), vscode.TreeItemCollapsibleState.None);
    item.id = `r:${record.id}`;
    item.description = record.expires_at ? `${record.kind} · until ${record.expires_at}` : record.kind;
    item.tooltip = new vscode.MarkdownString(undefined, false);
    item.tooltip.appendText(record.message);
    item.iconPath = new vscode.ThemeIcon(record.ui_surface ? "layout" : "question");
    item.contextValue = "request";
    item.command = { command: "pawflow.answer", title: "Answer", arguments: [record.id] };
    return item;
  }
}

class Connection implements vscode.Disposable {
  readonly model = new PendingModel();
  private stream: EventStream | null = null;
  client: PawflowClient | null = null;
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left);

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly onNotification: (data: NotificationData) => void,
  ) {
    this.status.command = "pawflow.focus";
  }

  private starting: Promise<void> = Promise.resolve();

  /** (Re)connect with the current settings; calls are serialized. */
  start(): Promise<void> {
    this.starting = this.starting.then(() => this.connect()).catch(() => undefined);
    return this.starting;
  }

  private async connect(): Promise<void> {
    await this.stop();
    const token = await this.context.secrets.get(TOKEN_KEY);
    const url = vscode.workspace.getConfiguration("pawflow").get<string>("serverUrl", "http://127.0.0.1:8765");
    void vscode.commands.executeCommand("setContext", "pawflow.signedIn", Boolean(token));
    if (!token) {
      this.client = null;
      this.model.beginHydration();
      this.model.hydrate([]);
      this.status.hide();
      return;
    }
    const client = new PawflowClient(url, token);
    this.client = client;
    this.stream = new EventStream({
      baseUrl: client.baseUrl,
      authorization: client.authorization,
      onConnect: async () => {
        this.model.beginHydration();
        const [pending, conversations] = await Promise.all([
          client.listPending(),
          client.action("list_conversations", {}),
        ]);
        this.model.titles = new Map(conversations.conversations.map((c) => [c.id, c.title]));
        this.model.hydrate(pending);
        this.show("$(bell)", "connected");
      },
      onDisconnect: (error) => this.show("$(debug-disconnect)", `reconnecting: ${String(error)}`),
      onEvent: (event) => {
        if (event.type === EVENTS.notification) this.onNotification(event.data as NotificationData);
        else if (this.model.apply(event) && event.type === EVENTS.request) void this.reread(client);
      },
    });
  }

  /** A request arrived: read again what waits for the user (it may wait for others). */
  private async reread(client: PawflowClient): Promise<void> {
    try {
      this.model.beginHydration();
      this.model.hydrate(await client.listPending());
    } catch {
      // The next reconnect reads it again.
    }
  }

  private show(icon: string, state: string): void {
    this.status.text = `${icon} ${this.model.size}`;
    this.status.tooltip = `PawFlow: ${this.model.size} pending (${state})`;
    this.status.show();
  }

  async stop(): Promise<void> {
    const stream = this.stream;
    this.stream = null;
    await stream?.close();
  }

  dispose(): void {
    void this.stop();
    this.status.dispose();
  }
}

export function activate(context: vscode.ExtensionContext): void {
  const open = new OpenAnswers();
  const connection = new Connection(context, (data) => void notify(data));
  const answerer = new Answerer(() => connection.client, open);
  const model = connection.model;
  const tree = new PendingTree(model);
  const view = vscode.window.createTreeView("pawflow.pending", { treeDataProvider: tree, showCollapseAll: true });

  const answerById = async (id?: string | Node) => {
    const found =
      typeof id === "string" ? model.get(id) : id && "request" in id ? id.request : await pickPending(model);
    if (found) await answerer.answer(found);
  };

  model.onChange((change) => {
    tree.refresh();
    view.badge = model.size ? { value: model.size, tooltip: `${model.size} pending` } : undefined;
    if (change.type === "closed") open.closed(change.interaction);
    if (change.type === "added") void announce(change.interaction);
  });

  async function announce(record: Interaction): Promise<void> {
    if (!vscode.workspace.getConfiguration("pawflow").get<boolean>("notifyNewRequests", true)) return;
    const choice = await vscode.window.showInformationMessage(`PawFlow: ${summary(record)}`, "Answer", "Later");
    if (choice === "Answer" && model.get(record.id)) await answerer.answer(record);
  }

  async function notify(data: NotificationData): Promise<void> {
    const waiting = model.all().filter((r) => r.conversation_id === data.conversation_id);
    const actions = waiting.length ? ["Answer", "Later"] : [];
    const text = data.title ? `${data.title}: ${data.message}` : data.message;
    let choice: string | undefined;
    if (data.urgency === "high") {
      choice = await vscode.window.showWarningMessage(`PawFlow: ${text}`, { modal: true }, ...actions);
    } else if (data.urgency === "normal") {
      choice = await vscode.window.showInformationMessage(`PawFlow: ${text}`, ...actions);
    } else {
      vscode.window.setStatusBarMessage(`PawFlow: ${text}`, 8000);
    }
    const first = waiting[0];
    if (choice === "Answer" && first) await answerer.answer(first);
  }

  context.subscriptions.push(
    connection,
    view,
    vscode.commands.registerCommand("pawflow.signIn", async () => {
      const token = await vscode.window.showInputBox({
        title: "PawFlow: sign in",
        prompt: "Paste the API token printed by `pawflow users add NAME`",
        placeHolder: "pf_…",
        password: true,
        ignoreFocusOut: true,
        validateInput: (text) => (text.trim() ? undefined : "The token is required."),
      });
      if (!token) return;
      const url = vscode.workspace.getConfiguration("pawflow").get<string>("serverUrl", "http://127.0.0.1:8765");
      try {
        await new PawflowClient(url, token.trim()).listAll({ status: "pending", limit: 1 });
      } catch (error) {
        void vscode.window.showErrorMessage(`PawFlow: sign-in failed: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      await context.secrets.store(TOKEN_KEY, token.trim()); // onDidChange reconnects
      void vscode.window.showInformationMessage(`PawFlow: signed in to ${url}`);
    }),
    vscode.commands.registerCommand("pawflow.signOut", async () => {
      await context.secrets.delete(TOKEN_KEY); // onDidChange disconnects
    }),
    vscode.commands.registerCommand("pawflow.refresh", () => connection.start()),
    vscode.commands.registerCommand("pawflow.answer", answerById),
    vscode.commands.registerCommand("pawflow.assigned", async () => {
      const client = connection.client;
      if (!client) return;
      let items: InboxItem[];
      try {
        items = await client.inbox("assigned");
      } catch (error) {
        void vscode.window.showErrorMessage(`PawFlow: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      if (!items.length) {
        void vscode.window.showInformationMessage("PawFlow: nothing is assigned to you.");
        return;
      }
      const picks = items.map(({ interaction, why }) => ({
        label: summary(interaction),
        description: `${whyText(why)} · ${interaction.kind}`,
        detail: model.titles.get(interaction.conversation_id),
        record: interaction,
      }));
      const chosen = await vscode.window.showQuickPick(picks, { title: "PawFlow: assigned to me" });
      if (chosen) await answerer.answer(chosen.record);
    }),
    vscode.commands.registerCommand("pawflow.focus", () => vscode.commands.executeCommand("pawflow.pending.focus")),
    vscode.commands.registerCommand("pawflow.openInWebChat", async (node?: Node) => {
      const record = node && "request" in node ? node.request : await pickPending(model);
      if (record && connection.client) {
        await vscode.env.openExternal(vscode.Uri.parse(connection.client.webChatUrl(record)));
      }
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("pawflow.serverUrl")) void connection.start();
    }),
    context.secrets.onDidChange((event) => {
      if (event.key === TOKEN_KEY) void connection.start();
    }),
  );
  void connection.start();
}

async function pickPending(model: PendingModel): Promise<Interaction | undefined> {
  const items = model.all().map((record) => ({
    label: summary(record),
    description: `${record.kind} · ${model.titles.get(record.conversation_id) ?? ""}`,
    record,
  }));
  if (!items.length) {
    void vscode.window.showInformationMessage("PawFlow: nothing is waiting for you.");
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { title: "PawFlow: pending requests" }))?.record;
}

export function deactivate(): void {}
