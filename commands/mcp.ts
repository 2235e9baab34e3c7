/** `mcp`: serve the memory to Model Context Protocol clients on stdio. */
import { BIMRI_RELEASE } from "../engine/versions.ts";
import { type Command, ok } from "./command.ts";

/** The mcp verb. */
export const mcpCommand: Command = {
  name: "mcp",
  summary: "serve this memory to MCP clients (Claude Desktop, Cursor, ...) over stdio",
  help: `usage: bimri mcp [--root DIR]

Runs a Model Context Protocol server on standard input and output until the
client disconnects. Tools: memory_start, memory_journal, memory_propose,
memory_sync, memory_close, memory_recall, memory_status, memory_review,
memory_resolve (their arguments are this CLI's flags in snake_case).
Resource: bimri.md. One run per MCP session; a run the client leaves open is
closed with outcome partial when it disconnects. Diagnostics go to stderr.`,
  flags: {},
  async run(ctx) {
    // Loaded only here so every other verb starts without the MCP SDK.
    const { serveMcp } = await import("../mcp/server.ts");
    const { findVerb } = await import("./verbs.ts");
    await serveMcp({ root: ctx.root, version: BIMRI_RELEASE, findCommand: findVerb });
    return ok("", {});
  },
};
