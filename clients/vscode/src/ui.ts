// Answering one request with the editor's own UI, as `uiFor` decides: quick picks, input
// boxes (the server's refusal shown in the box, the request staying pending), the webview
// panel for multiline, forms and surfaces, the open-file dialog for files, and the hand-off
// to the web chat for whatever cannot be answered faithfully here.

import * as vscode from "vscode";

import { send, submitFromPage, toPage, type Outcome } from "./answer";
import { PawflowClient } from "./client";
import { parseTyped, summary, uiFor, type PickItem, type UiDescriptor } from "./kinds";
import { renderPage, type FromPage, type ToPage } from "./webview";
import type { Interaction, Json } from "./wire";

type QuickUi = Extract<UiDescriptor, { ui: "quickPick" }>;
type InputUi = Extract<UiDescriptor, { ui: "inputBox" }>;
type DialogUi = Extract<UiDescriptor, { ui: "openDialog" }>;

/** Open answer UIs by request id, so an answer given elsewhere closes them. */
export class OpenAnswers {
  private readonly open = new Map<string, (status: string) => void>();

  track(id: string, close: (status: string) => void): vscode.Disposable {
    this.open.set(id, close);
    return new vscode.Disposable(() => {
      if (this.open.get(id) === close) this.open.delete(id);
    });
  }

  closed(record: Interaction): void {
    this.open.get(record.id)?.(record.status);
  }
}

export class Answerer {
  private readonly panels = new Map<string, vscode.WebviewPanel>();

  constructor(
    private readonly client: () => PawflowClient | null,
    private readonly open: OpenAnswers,
  ) {}

  async answer(record: Interaction): Promise<void> {
    const client = this.client();
    if (client === null) {
      void vscode.commands.executeCommand("pawflow.signIn");
      return;
    }
    const ui = uiFor(record);
    switch (ui.ui) {
      case "quickPick":
        return this.pick(client, record, ui);
      case "inputBox":
        return this.input(client, record, ui);
      case "webview":
        return this.panel(client, record, ui);
      case "openDialog":
        return this.file(client, record, ui);
      case "handoff":
        return this.handoff(client, record, ui.reason);
    }
  }

  private async report(outcome: Outcome): Promise<void> {
    if (outcome.ok) {
      vscode.window.setStatusBarMessage("$(check) PawFlow: answer sent", 4000);
    } else if (!outcome.refused) {
      void vscode.window.showWarningMessage(`PawFlow: ${outcome.message}`);
    }
  }

  private pick(client: PawflowClient, record: Interaction, ui: QuickUi): Promise<void> {
    return new Promise((resolve) => {
      const quick = vscode.window.createQuickPick<vscode.QuickPickItem & { item: PickItem }>();
      quick.title = record.title ?? "PawFlow";
      quick.placeholder = ui.note ? `${ui.placeholder} (${ui.note})` : ui.placeholder;
      quick.canSelectMany = ui.canPickMany;
      quick.ignoreFocusOut = true;
      quick.items = ui.items.map((item) => ({ label: item.label, description: item.description, item }));
      const tracking = this.open.track(record.id, (status) => {
        quick.hide();
        void vscode.window.showInformationMessage(`PawFlow: this request was ${status} elsewhere.`);
      });
      quick.onDidAccept(async () => {
        const chosen = ui.canPickMany ? quick.selectedItems : quick.activeItems.slice(0, 1);
        if (!ui.canPickMany && chosen.length === 0) return;
        const answer: Json = ui.canPickMany
          ? chosen.map((c) => c.item.value)
          : (chosen[0] as (typeof chosen)[number]).item.value;
        quick.busy = true;
        quick.enabled = false;
        const outcome = await send(client, record.id, answer);
        quick.busy = false;
        quick.enabled = true;
        if (!outcome.ok && outcome.refused) {
          // Quick picks have no validation line: the refusal is shown and the pick stays.
          quick.title = `${record.title ?? "PawFlow"}: ${outcome.message}`;
          return;
        }
        await this.report(outcome);
        quick.hide();
      });
      quick.onDidHide(() => {
        tracking.dispose();
        quick.dispose();
        resolve();
      });
      quick.show();
    });
  }

  private input(client: PawflowClient, record: Interaction, ui: InputUi): Promise<void> {
    return new Promise((resolve) => {
      const box = vscode.window.createInputBox();
      box.title = record.title ?? "PawFlow";
      box.prompt = ui.note ? `${ui.prompt} (${ui.note})` : ui.prompt;
      box.placeholder = ui.placeholder;
      box.ignoreFocusOut = true;
      const tracking = this.open.track(record.id, (status) => {
        box.hide();
        void vscode.window.showInformationMessage(`PawFlow: this request was ${status} elsewhere.`);
      });
      box.onDidChangeValue(() => {
        box.validationMessage = undefined;
      });
      box.onDidAccept(async () => {
        box.busy = true;
        box.enabled = false;
        const outcome = await send(client, record.id, parseTyped(record.kind, box.value));
        box.busy = false;
        box.enabled = true;
        if (!outcome.ok && outcome.refused) {
          box.validationMessage = outcome.message;
          return;
        }
        await this.report(outcome);
        box.hide();
      });
      box.onDidHide(() => {
        tracking.dispose();
        box.dispose();
        resolve();
      });
      box.show();
    });
  }

  private panel(client: PawflowClient, record: Interaction, ui: UiDescriptor): void {
    const existing = this.panels.get(record.id);
    if (existing) {
      existing.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      "pawflow.answer",
      `PawFlow: ${summary(record)}`,
      vscode.ViewColumn.Active,
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [] },
    );
    this.panels.set(record.id, panel);
    const nonce = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
    panel.webview.html = renderPage(record, { nonce, cspSource: panel.webview.cspSource, note: ui.note });
    const post = (message: ToPage) => void panel.webview.postMessage(message);
    const tracking = this.open.track(record.id, (status) => post({ type: "closed", status }));
    panel.webview.onDidReceiveMessage(async (message: FromPage) => {
      if (message.type === "handoff") {
        await this.handoff(client, record, "Open this request in the web chat.");
      } else if (message.type === "submit") {
        const outcome = await submitFromPage(client, record, message);
        post(toPage(outcome));
        await this.report(outcome);
      }
    });
    panel.onDidDispose(() => {
      tracking.dispose();
      this.panels.delete(record.id);
    });
  }

  private async file(client: PawflowClient, record: Interaction, ui: DialogUi): Promise<void> {
    for (;;) {
      const limits = [
        ui.mediaTypes.includes("*/*") ? null : `type: ${ui.mediaTypes.join(", ")}`,
        ui.maxBytes === null ? null : `at most ${ui.maxBytes} bytes`,
      ].filter(Boolean);
      const chosen = await vscode.window.showOpenDialog({
        canSelectMany: false,
        openLabel: "Upload and answer",
        title: `${summary(record)}${limits.length ? ` (${limits.join(", ")})` : ""}`,
      });
      const uri = chosen?.[0];
      if (!uri) return;
      const content = await vscode.workspace.fs.readFile(uri);
      const name = uri.path.split("/").pop() || "upload";
      let outcome: Outcome;
      try {
        const ref = await client.upload(name, new Uint8Array(content), { requestId: record.id });
        outcome = await send(client, record.id, ref.id);
      } catch (error) {
        outcome = { ok: false, refused: true, message: error instanceof Error ? error.message : String(error), errors: [] };
      }
      if (!outcome.ok && outcome.refused) {
        const again = await vscode.window.showWarningMessage(`PawFlow: ${outcome.message}`, "Choose another file");
        if (again) continue;
        return;
      }
      await this.report(outcome);
      return;
    }
  }

  private async handoff(client: PawflowClient, record: Interaction, reason: string): Promise<void> {
    const open = "Open in the web chat";
    const choice = await vscode.window.showWarningMessage(`PawFlow: ${reason}`, open);
    if (choice === open) await vscode.env.openExternal(vscode.Uri.parse(client.webChatUrl(record)));
  }
}
