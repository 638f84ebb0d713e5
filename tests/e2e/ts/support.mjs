// What the TypeScript end-to-end tests share: where the binary under test is, and starting,
// waiting for and stopping the processes they run. Not a test file itself (the runner picks
// up `*.test.mjs`).

import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { once } from "node:events";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const e2e = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const root = path.resolve(e2e, "..", "..");
export const ferry = process.env.FERRY_BIN ?? path.join(root, "target", "debug", "ferry");
export const python = process.env.PYTHON ?? path.join(root, ".venv", "bin", "python");

/** Ends a process a test started: asked first, killed when it does not end within 10 s. */
export async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10000);
  await once(child, "exit");
  clearTimeout(timer);
}

/** A loopback port nothing listens on now. */
export async function freePort() {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  server.close();
  await once(server, "close");
  return port;
}

/** Whether anything accepts HTTP on the loopback `port`. */
export async function canConnect(port) {
  try {
    await fetch(`http://127.0.0.1:${port}/mcp`, { method: "GET" });
    return true;
  } catch {
    return false;
  }
}

/** Starts `ferry ARGS` (with the environment `env`) and resolves once something accepts
 * connections on `port`. */
export async function startFerry(args, env, port, { timeoutMs = 60000 } = {}) {
  const child = spawn(ferry, args, { stdio: ["ignore", "ignore", "pipe"], env });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`ferry exited with ${child.exitCode} before it was ready:\n${stderr}`);
    }
    if (await canConnect(port)) return child;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`ferry did not become ready in ${timeoutMs} ms:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
