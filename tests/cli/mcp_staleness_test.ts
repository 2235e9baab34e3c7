/**
 * The MCP server is long-lived: between two tool calls the store may change
 * under it (other agents, the owner restoring a copy). Each call must act on
 * what the store holds then, never on what the session remembers.
 */
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, startRun, tempStore } from "../helpers/cli.ts";
import { callTool, connectMcp, dataOf, textOf } from "./mcp_support.ts";
import { copyTree } from "../helpers/portable.ts";
import { join } from "node:path";

/** Replaces `<root>/.bimri` by a byte copy of `backup` (`rm -rf` + a copy keeping times). */
async function restoreFolder(root: string, backup: string): Promise<void> {
  await Deno.remove(join(root, ".bimri"), { recursive: true });
  copyTree(backup, join(root, ".bimri"));
}

/** A store with no run yet, and a copy of its `.bimri` folder taken then. */
async function storeWithBackup(): Promise<{ root: string; backup: string }> {
  const root = await tempStore();
  assertEquals((await bimri(root, ["status"])).code, 0);
  const backup = join(await tempStore("bimri-backup-"), ".bimri");
  copyTree(join(root, ".bimri"), backup);
  return { root, backup };
}

Deno.test("after the store is replaced, the session's run ID naming another agent's run is not used by default", async () => {
  const { root, backup } = await storeWithBackup();
  const mcp = await connectMcp(root, "Claude");
  try {
    assertEquals(dataOf(await callTool(mcp, "memory_start")).run, "R000001");
    // The owner puts the older copy back; another agent then starts and gets R000001.
    await restoreFolder(root, backup);
    assertEquals(await startRun(root, "codex", ["--session", "codex-1"]), "R000001");
    for (
      const [tool, args] of [
        ["memory_journal", { text: "Meant for the MCP session's own run." }],
        ["memory_propose", { key: "api.timeout", new_subject: true, tier: 2, text: "30 s." }],
        ["memory_sync", {}],
        ["memory_close", { outcome: "success" }],
      ] as [string, Record<string, unknown>][]
    ) {
      const before = hashTree(root);
      const result = await callTool(mcp, tool, args);
      assertEquals(result.isError, true, `${tool}: ${textOf(result)}`);
      assertMatch(textOf(result), /R000001 is no longer this MCP session's run/);
      assertEquals(diffTrees(before, hashTree(root)), null, `${tool} wrote`);
    }
    // memory_start opens a run of the session's own.
    const again = dataOf(await callTool(mcp, "memory_start"));
    assertEquals([again.run, again.resumed], ["R000002", false]);
    assertEquals(
      dataOf(await callTool(mcp, "memory_journal", { text: "Own run." })).run,
      "R000002",
    );
  } finally {
    await mcp.close();
  }
  const status = await bimri(root, ["status"]);
  assertMatch(status.stdout, /^Active runs: R000001 \(codex\)$/m);
  const log = Deno.readTextFileSync(`${root}/.bimri/log/R000001.md`);
  assert(!log.includes("[ID:R000001-E"), "nothing journaled into the other agent's run");
});

Deno.test("a client leaving after the store was replaced does not close another agent's run", async () => {
  const { root, backup } = await storeWithBackup();
  const mcp = await connectMcp(root, "Claude");
  assertEquals(dataOf(await callTool(mcp, "memory_start")).run, "R000001");
  await restoreFolder(root, backup);
  assertEquals(await startRun(root, "codex"), "R000001");
  const before = hashTree(root);
  await mcp.close();
  assertMatch(mcp.stderr(), /R000001 now belongs to another agent and was left open/);
  assertEquals(diffTrees(before, hashTree(root)), null, "the disconnect wrote");
  const status = await bimri(root, ["status"]);
  assertMatch(status.stdout, /^Active runs: R000001 \(codex\)$/m);
});

Deno.test("memory_start with an empty session returns the session's one run every time", async () => {
  const root = await tempStore();
  const mcp = await connectMcp(root, "Claude");
  try {
    const first = dataOf(await callTool(mcp, "memory_start", { session: "" }));
    const again = dataOf(await callTool(mcp, "memory_start", { session: "" }));
    assertEquals([first.run, again.run, again.resumed], ["R000001", "R000001", true]);
    assertMatch((await bimri(root, ["status"])).stdout, /runs 1 \| active 1/);
  } finally {
    await mcp.close();
  }
  assertMatch((await bimri(root, ["status"])).stdout, /runs 1 \| active 0/);
});
