/**
 * MCP test support: a real SDK client that spawns `bimri mcp` as a
 * subprocess (the same command prefix as the CLI tests, so BIMRI_CMD works),
 * and a raw line-level session for malformed input.
 */
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { commandPrefix } from "../helpers/cli.ts";

/** Environment every spawned server gets (TZ pinned like the CLI tests). */
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { TZ: "UTC", NO_COLOR: "1", ...extra };
  for (const name of ["HOME", "PATH", "DENO_DIR", "USERPROFILE", "SYSTEMROOT", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined && env[name] === undefined) env[name] = value;
  }
  return env;
}

/** A connected SDK client and the server's stderr. */
export type McpSession = {
  client: Client;
  stderr: () => string;
  /** Closes stdin and waits for the server process to exit. */
  close: () => Promise<void>;
};

/** Spawns `bimri --root <root> mcp` and connects an SDK client to it. */
export async function connectMcp(
  root: string,
  clientName = "Test Agent",
  env: Record<string, string> = {},
): Promise<McpSession> {
  const [command, ...prefix] = commandPrefix();
  const transport = new StdioClientTransport({
    command,
    args: [...prefix, "--root", root, "mcp"],
    env: serverEnv(env),
    cwd: root,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    stderr += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
  });
  const client = new Client({ name: clientName, version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    close: () => client.close(),
  };
}

/** Calls a tool and returns the result (tool errors are results, not exceptions). */
export async function callTool(
  session: McpSession,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return await session.client.callTool({ name, arguments: args }) as CallToolResult;
}

/** The text content of a tool result. */
export function textOf(result: CallToolResult): string {
  return result.content.map((c) => c.type === "text" ? c.text : "").join("");
}

/** The structured content of a successful tool result. */
export function dataOf(result: CallToolResult): Record<string, unknown> {
  if (result.isError) throw new Error(`tool failed: ${textOf(result)}`);
  if (!result.structuredContent) throw new Error("no structured content");
  return result.structuredContent;
}

/** One raw JSON-RPC exchange: writes `lines` to `bimri mcp`, closes stdin, returns every reply. */
export async function rawSession(
  root: string,
  lines: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; replies: Record<string, unknown>[]; stderr: string }> {
  const [command, ...prefix] = commandPrefix();
  const child = new Deno.Command(command, {
    args: [...prefix, "--root", root, "mcp"],
    cwd: root,
    env: serverEnv(env),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(lines.map((l) => l + "\n").join("")));
  await writer.close();
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  const replies = text.split("\n").filter((l) => l.trim() !== "").map((l) =>
    JSON.parse(l) as Record<string, unknown>
  );
  return { code: out.code, replies, stderr: new TextDecoder().decode(out.stderr) };
}

/** The initialize request and initialized notification every raw session begins with. */
export function handshake(): string[] {
  return [
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "raw-client", version: "1" },
      },
    }),
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  ];
}
