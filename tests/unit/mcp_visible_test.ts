/** MCP tool results show hidden characters of untrusted text as \uXXXX, in text and structured content alike. */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { toolResult } from "../../mcp/server.ts";
import { TOOL_SPECS } from "../../mcp/tools.ts";

Deno.test("a tool result escapes bidi, zero-width and escape characters everywhere", () => {
  const spec = TOOL_SPECS.find((s) => s.name === "memory_recall")!;
  const result = toolResult(spec, {
    exitCode: 0,
    text: "HOT\ta.b\tx\u202ey\n",
    stderr: ["BIMRI NOTICE: \x1b[2Jname"],
    data: { ok: true, rows: [{ text: "x\u200by" }] },
  });
  const text = (result.content[0] as { text: string }).text;
  strictEqual(text, "HOT\ta.b\tx\\u202ey\nBIMRI NOTICE: \\u001b[2Jname\n");
  deepStrictEqual(result.structuredContent, { ok: true, rows: [{ text: "x\\u200by" }] });
});

Deno.test("ordinary results are unchanged", () => {
  const spec = TOOL_SPECS.find((s) => s.name === "memory_recall")!;
  const result = toolResult(spec, { exitCode: 0, text: "HOT\ta.b\tplain\n", data: { ok: true } });
  strictEqual((result.content[0] as { text: string }).text, "HOT\ta.b\tplain\n");
  deepStrictEqual(result.structuredContent, { ok: true });
});
