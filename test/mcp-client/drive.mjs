// Drives Taskgraph's MCP server with the official TypeScript SDK client, for
// cmd/taskgraph/e2e_mcp_test.go. MCP_TRANSPORT=stdio spawns TASKGRAPH_BIN
// with "mcp" (and TASKGRAPH_BIN_ENV, KEY=VALUE lines, in its environment);
// MCP_TRANSPORT=http connects to TASKGRAPH_URL/mcp with the bearer token
// TASKGRAPH_TOKEN. Commands arrive on stdin as JSON lines, each with an id:
//   {"id": 1, "op": "list"}                                  -> {"id": 1, "tools": [...]}
//   {"id": 2, "op": "call", "name": "...", "args": {...}}    -> {"id": 2, "result": {...}}
// and a call's progress notifications as {"id": 2, "progress": {...}} before
// its result. Commands run concurrently. The first line printed is
// {"id": 0, "connected": true, "instructions": "..."} or {"id": 0, "connectError": "..."}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import readline from "node:readline";

const print = (v) => process.stdout.write(JSON.stringify(v) + "\n");

function transport() {
  if (process.env.MCP_TRANSPORT === "stdio") {
    const env = { PATH: process.env.PATH ?? "" };
    for (const line of (process.env.TASKGRAPH_BIN_ENV ?? "").split("\n")) {
      const i = line.indexOf("=");
      if (i > 0) env[line.slice(0, i)] = line.slice(i + 1);
    }
    const args = JSON.parse(process.env.TASKGRAPH_BIN_ARGS ?? '["mcp"]');
    return new StdioClientTransport({ command: process.env.TASKGRAPH_BIN, args, env, stderr: "inherit" });
  }
  const headers = {};
  if (process.env.TASKGRAPH_TOKEN) headers.Authorization = `Bearer ${process.env.TASKGRAPH_TOKEN}`;
  return new StreamableHTTPClientTransport(new URL("/mcp", process.env.TASKGRAPH_URL), { requestInit: { headers } });
}

const client = new Client({ name: "taskgraph-e2e", version: "1.0.0" });
try {
  await client.connect(transport());
} catch (e) {
  print({ id: 0, connectError: String(e?.message ?? e), code: e?.code ?? null });
  process.exit(0);
}
print({ id: 0, connected: true, instructions: client.getInstructions(), server: client.getServerVersion() });

const pending = new Set();
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const cmd = JSON.parse(line);
  const p = (async () => {
    try {
      if (cmd.op === "list") {
        const r = await client.listTools();
        print({ id: cmd.id, tools: r.tools });
      } else if (cmd.op === "call") {
        const r = await client.callTool({ name: cmd.name, arguments: cmd.args ?? {} }, undefined, {
          onprogress: (progress) => print({ id: cmd.id, progress }),
          resetTimeoutOnProgress: true,
          timeout: 120000,
        });
        print({ id: cmd.id, result: r });
      } else {
        print({ id: cmd.id, error: `unknown op ${cmd.op}` });
      }
    } catch (e) {
      print({ id: cmd.id, error: String(e?.message ?? e), code: e?.code ?? null });
    }
  })();
  pending.add(p);
  p.finally(() => pending.delete(p));
});
rl.on("close", async () => {
  await Promise.allSettled([...pending]);
  await client.close();
  process.exit(0);
});
