// A real `pawflow serve` for the tests: a free loopback port, a throwaway SQLite file in a
// temporary directory, users and tokens made with `pawflow users add`. The executable comes
// from PAWFLOW_BIN, by default the repository's virtualenv.

import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

import { PawflowClient } from "../src/client";

const run = promisify(execFile);
const PACKAGE_ROOT = path.resolve(__dirname, "..", "..");
export const PAWFLOW_BIN =
  process.env.PAWFLOW_BIN ?? path.resolve(PACKAGE_ROOT, "..", "..", ".venv", "bin", "pawflow");

/** Poll `check` until it returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  { timeoutMs = 10_000, intervalMs = 20, what = "the condition" } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export class Served {
  private process: ChildProcess | null = null;
  private output: string[] = [];
  private users = 0;

  private constructor(
    readonly directory: string,
    readonly db: string,
    readonly url: string,
  ) {}

  static async start(): Promise<Served> {
    const directory = mkdtempSync(path.join(tmpdir(), "pawflow-vscode-"));
    const db = `sqlite:///${path.join(directory, "pawflow.db")}`;
    const port = await freePort();
    const served = new Served(directory, db, `http://127.0.0.1:${port}`);
    const child = spawn(PAWFLOW_BIN, ["serve", "--port", String(port), "--db", db], {
      cwd: directory,
      env: {
        ...process.env,
        PAWFLOW_SWEEP_INTERVAL: "3600",
        PAWFLOW_RATE_LIMIT: "100000",
        PAWFLOW_RATE_BURST: "100000",
        PAWFLOW_LOG_LEVEL: "warning",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    served.process = child;
    child.stdout?.on("data", (chunk: Buffer) => served.output.push(chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => served.output.push(chunk.toString()));
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code) =>
        reject(new Error(`pawflow serve exited (${code}): ${served.output.join("")}`)),
      ),
    );
    exited.catch(() => undefined);
    const spawnFailed = new Promise<never>((_, reject) =>
      child.once("error", (error) =>
        reject(new Error(`cannot run ${PAWFLOW_BIN} (set PAWFLOW_BIN): ${error.message}`)),
      ),
    );
    spawnFailed.catch(() => undefined);
    const healthy = eventually(
      async () => {
        const response = await fetch(`${served.url}/healthz`);
        return response.ok || undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50, what: "pawflow serve to answer /healthz" },
    );
    await Promise.race([healthy, exited, spawnFailed]);
    return served;
  }

  /** A new user (unique name) and its API token, made by `pawflow users add`. */
  async user(prefix = "ann"): Promise<{ name: string; token: string }> {
    this.users += 1;
    const name = `${prefix}-${process.pid}-${this.users}`;
    const { stdout } = await run(PAWFLOW_BIN, ["users", "add", name, "--db", this.db], {
      cwd: this.directory,
    });
    const lines = stdout.trim().split("\n");
    return { name, token: (lines[lines.length - 1] ?? "").trim() };
  }

  async client(prefix = "ann"): Promise<PawflowClient> {
    const { token } = await this.user(prefix);
    return new PawflowClient(this.url, token);
  }

  async stop(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (child !== null && child.exitCode === null) {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await gone;
    }
    rmSync(this.directory, { recursive: true, force: true });
  }
}
