// The pictures of docs/vscode.md: the Pending view and a quick pick, drawn in chromium from
// what a real server returns (through the same model and `uiFor` the extension uses), in
// the layout and colours of the editor's dark theme. Run: npm run screenshots

import path from "node:path";

import { chromium } from "playwright-core";

import { uiFor, summary } from "../src/kinds";
import { PendingModel } from "../src/pending";
import { Served } from "../test/server";

const OUT = path.resolve(__dirname, "..", "..", "..", "..", "docs", "img");

const esc = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `
body { margin: 0; font: 13px system-ui, sans-serif; background: #1f1f1f; color: #cccccc; display: flex; height: 100vh; }
.bar { width: 48px; background: #181818; display: flex; flex-direction: column; align-items: center; padding-top: 8px; }
.icon { width: 24px; height: 24px; margin: 12px 0; position: relative; color: #858585; }
.icon.on { color: #fff; } .icon.on::before { content: ""; position: absolute; left: -12px; top: -6px; width: 2px; height: 36px; background: #0078d4; }
.badge { position: absolute; right: -8px; bottom: -6px; background: #0078d4; color: #fff; font-size: 9px; border-radius: 8px; padding: 1px 5px; }
.side { width: 340px; background: #181818; border-right: 1px solid #2b2b2b; }
.title { padding: 10px 20px; font-size: 11px; letter-spacing: .04em; }
.section { padding: 4px 12px; font-weight: 700; font-size: 11px; text-transform: uppercase; }
.row { padding: 3px 12px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.row.group { font-weight: 600; } .row.item { padding-left: 36px; } .row.sel { background: #04395e; }
.desc { color: #9d9d9d; margin-left: 6px; font-size: 12px; }
.editor { flex: 1; position: relative; background: #1f1f1f; }
.pick { position: absolute; left: 50%; top: 8px; transform: translateX(-50%); width: 560px; background: #252526; border: 1px solid #454545; border-radius: 6px; box-shadow: 0 0 8px #000a; padding: 6px; }
.pick .head { text-align: center; padding: 2px 0 6px; font-weight: 600; }
.pick input { width: 100%; box-sizing: border-box; background: #313131; color: #ccc; border: 1px solid #0078d4; padding: 4px 6px; font: inherit; }
.pick .opt { padding: 4px 8px; } .pick .opt.sel { background: #04395e; border-radius: 3px; }
`;

const PAW = `<svg viewBox="0 0 24 24" fill="currentColor"><ellipse cx="6" cy="9" rx="2" ry="2.6"/><ellipse cx="10" cy="5.5" rx="2" ry="2.6"/><ellipse cx="14.5" cy="5.5" rx="2" ry="2.6"/><ellipse cx="18.5" cy="9" rx="2" ry="2.6"/><path d="M12 11c-3 0-6 4.2-6 6.6C6 19.5 7.6 20 9 20c1.3 0 2-.6 3-.6s1.7.6 3 .6c1.4 0 3-.5 3-2.4C18 15.2 15 11 12 11z"/></svg>`;

async function main(): Promise<void> {
  const served = await Served.start();
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox"] });
  try {
    const ann = await served.client("alice");
    const deploys = (await ann.action("create_conversation", { title: "Release 2.4" })).conversation.id;
    const data = (await ann.action("create_conversation", { title: "Nightly data import" })).conversation.id;
    const ask = (conversation_id: string, body: object) =>
      ann.action("request_interaction", { conversation_id, ...(body as { kind: "confirm"; message: string }) });
    const where = await ask(deploys, {
      kind: "choice",
      title: "Deploy to staging or production?",
      message: "Release 2.4 passed its checks. Where should it go?",
      options: [
        { value: "staging", label: "Staging" },
        { value: "production", label: "Production" },
      ],
      expires_in: "3d",
    });
    await ask(deploys, { kind: "confirm", title: "Apply migration 0042_orders?", message: "Apply migration 0042_orders?" });
    await ask(deploys, { kind: "multiline", title: "Release notes", message: "Write the release notes." });
    await ask(data, { kind: "integer", title: "How many retries?", message: "The import failed twice. How many retries?" });
    await ask(data, { kind: "file", title: "Upload the corrected CSV", message: "Upload the corrected CSV" });

    const model = new PendingModel();
    const conversations = await ann.action("list_conversations", {});
    model.titles = new Map(conversations.conversations.map((c) => [c.id, c.title]));
    model.hydrate(await ann.listPending());

    const rows = model
      .groups()
      .map(
        (g) =>
          `<div class="row group">⌄ ${esc(g.title)}<span class="desc">${g.requests.length}</span></div>` +
          g.requests
            .map((r) => `<div class="row item${r.id === where.interaction.id ? " sel" : ""}">${esc(summary(r))}<span class="desc">${r.kind}</span></div>`)
            .join(""),
      )
      .join("");
    const sidebar = `<div class="bar"><div class="icon on">${PAW}<span class="badge">${model.size}</span></div></div>
      <div class="side"><div class="title">PAWFLOW</div><div class="section">⌄ Pending</div>${rows}</div>`;

    const page = await browser.newPage({ viewport: { width: 1000, height: 360 } });
    await page.setContent(`<style>${STYLE}</style>${sidebar}<div class="editor"></div>`);
    await page.screenshot({ path: path.join(OUT, "vscode-pending.png") });

    const ui = uiFor(where.interaction);
    if (ui.ui !== "quickPick") throw new Error("a choice is answered with a quick pick");
    const options = ui.items.map((item, i) => `<div class="opt${i === 0 ? " sel" : ""}">${esc(item.label)}</div>`).join("");
    const pick = `<div class="pick"><div class="head">${esc(where.interaction.title ?? "PawFlow")}</div>
      <input placeholder="${esc(ui.placeholder)}"><div>${options}</div></div>`;
    await page.setContent(`<style>${STYLE}</style>${sidebar}<div class="editor">${pick}</div>`);
    await page.screenshot({ path: path.join(OUT, "vscode-quick-pick.png") });
  } finally {
    await browser.close();
    await served.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
