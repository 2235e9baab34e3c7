/** The same call through MCP and through the CLI reads the same, failures included. */
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, tempStore } from "../helpers/cli.ts";
import { callTool, connectMcp, dataOf, textOf } from "./mcp_support.ts";

Deno.test("a failure that is not a refusal is worded as the CLI words it", async () => {
  const root = await tempStore();
  const mcp = await connectMcp(root);
  try {
    const run = dataOf(await callTool(mcp, "memory_start", { actor: "claude" })).run as string;
    // state.json turns into a folder: reading it fails with an OS error, not a refusal.
    Deno.removeSync(`${root}/.bimri/state.json`);
    Deno.mkdirSync(`${root}/.bimri/state.json`);
    for (
      const [tool, args, argv] of [
        ["memory_journal", { text: "x" }, ["journal", "--run", run, "--text", "x"]],
        ["memory_recall", { key: "a.b" }, ["recall", "--key", "a.b"]],
      ] as [string, Record<string, unknown>, string[]][]
    ) {
      const before = hashTree(root);
      const result = await callTool(mcp, tool, args);
      const cli = await bimri(root, argv);
      assertEquals([result.isError, cli.code], [true, 2], `${tool}: ${textOf(result)}`);
      assertEquals(textOf(result).trim(), cli.stderr.trim(), tool);
      assertEquals(diffTrees(before, hashTree(root)), null, `${tool} wrote`);
    }
  } finally {
    Deno.removeSync(`${root}/.bimri/state.json`);
    await mcp.close();
  }
});

Deno.test("text that is not valid Unicode is refused before anything is written", async () => {
  const root = await tempStore();
  const mcp = await connectMcp(root);
  try {
    dataOf(await callTool(mcp, "memory_start", { actor: "claude" }));
    for (
      const [tool, args] of [
        ["memory_journal", { text: "Lone \ud800 surrogate." }],
        ["memory_propose", { key: "a.b", new_subject: true, tier: 2, text: "Low \udc00 half." }],
        ["memory_propose", {
          key: "a.b",
          new_subject: true,
          tier: 2,
          text: "x",
          tags: ["t\ud800"],
        }],
        ["memory_close", { summary: "Done \udfff." }],
      ] as [string, Record<string, unknown>][]
    ) {
      const before = hashTree(root);
      const result = await callTool(mcp, tool, args);
      assertEquals(result.isError, true, `${tool}: ${textOf(result)}`);
      assertMatch(textOf(result), /is not valid Unicode text/);
      assertEquals(diffTrees(before, hashTree(root)), null, `${tool} wrote`);
    }
  } finally {
    await mcp.close();
  }
});

Deno.test("memory_start resumes the session's run for any spelling start reads as the same", async () => {
  const root = await tempStore();
  const mcp = await connectMcp(root, "Claude");
  try {
    const first = dataOf(await callTool(mcp, "memory_start", { actor: "Claude", session: "s1" }));
    assertEquals([first.run, first.actor], ["R000001", "claude"]);
    // The CLI resumes R000001 for both spellings too.
    for (const args of [{ actor: "claude", session: "s1" }, { actor: "CLAUDE", session: " s1 " }]) {
      const again = await callTool(mcp, "memory_start", args);
      assertEquals(dataOf(again).run, "R000001", `${JSON.stringify(args)}: ${textOf(again)}`);
      assertEquals(dataOf(again).resumed, true);
    }
    // An invalid actor reads as on the command line.
    const bad = await callTool(mcp, "memory_start", { actor: "Bad Actor" });
    const cli = await bimri(root, ["start", "--actor", "Bad Actor"]);
    assertEquals([bad.isError, textOf(bad).trim()], [true, cli.stderr.trim()]);
  } finally {
    await mcp.close();
  }
  assertMatch((await bimri(root, ["status"])).stdout, /runs 1 \| active 0/);
});
