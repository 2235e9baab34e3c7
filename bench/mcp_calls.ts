/**
 * Times the everyday operations as tool calls on one resident `bimri mcp`
 * server: the same engine, lock and durable steps as the CLI, without a
 * process start and module load per operation. The client is the MCP SDK's,
 * as in the MCP tests; wall time is measured at the client, per call.
 */
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/** Wall times (ms) of each tool call, by row name, and what the server wrote to stderr. */
export type McpTimings = { calls: Record<string, number[]>; stderr: string };

/**
 * Starts `bimri --root <root> mcp` with `argv` (deno run ... main.ts, possibly
 * behind a wrapper such as /usr/bin/time, whose report ends up in stderr) and
 * runs `samples` sessions of start, journal, propose, sync, propose close and
 * close, each followed by hot and cold key lookups and a query.
 */
export async function measureMcp(
  argv: string[],
  root: string,
  samples: number,
  keys: { hot: string; cold: string[]; query: string },
): Promise<McpTimings> {
  const transport = new StdioClientTransport({
    command: argv[0],
    args: [...argv.slice(1), "--root", root, "mcp"],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    stderr += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
  });
  const client = new Client({ name: "bimri-bench", version: "1" });
  await client.connect(transport);
  const call = async (tool: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name: tool, arguments: args });
    if (result.isError) throw new Error(`${tool}: ${JSON.stringify(result.content)}`);
  };
  const calls: Record<string, number[]> = {};
  const timed = async (row: string, tool: string, args: Record<string, unknown>) => {
    const started = performance.now();
    await call(tool, args);
    (calls[row] ??= []).push(performance.now() - started);
  };
  try {
    for (let i = 0; i < samples; i++) {
      const key = `measure.mcp-${Date.now().toString(36)}-${i}`;
      await timed("memory_start", "memory_start", { actor: "bench" });
      await timed("memory_journal", "memory_journal", { text: "Measured journal entry." });
      await timed("memory_propose", "memory_propose", {
        tier: 2,
        new_subject: true,
        key,
        text: "Measured subject.",
      });
      await timed("memory_sync", "memory_sync", {});
      await call("memory_propose", { operation: "close", key });
      await timed("memory_close", "memory_close", { outcome: "success", summary: "Measured." });
      await timed("memory_recall key (hot)", "memory_recall", { key: keys.hot });
      if (keys.cold.length) {
        await timed("memory_recall key (cold)", "memory_recall", {
          key: keys.cold[i % keys.cold.length],
        });
      }
      await timed("memory_recall query", "memory_recall", { query: keys.query });
    }
  } finally {
    // Closing stdin ends the server; the transport waits for it to exit.
    await client.close();
  }
  return { calls, stderr };
}
