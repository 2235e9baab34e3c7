/** The MCP tool memory_share_pull imports other clones' records like `bimri share pull`. */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { must, tempStore } from "../helpers/cli.ts";
import { copyTree } from "../helpers/portable.ts";
import {
  agentSets,
  exportNow,
  gitInit,
  textOf as getText,
  trustEveryReplica,
} from "../helpers/share.ts";
import { callTool, connectMcp, dataOf, textOf } from "./mcp_support.ts";

Deno.test("memory_share_pull builds a fresh clone's memory and reports what it imported", async () => {
  const a = await tempStore();
  await agentSets(a, "codex", { "k.one": "One.", "k.two": "Two." });
  await gitInit(a); // share init needs a git work tree
  await must(a, ["share", "init", "--yes"]);
  const b = await tempStore();
  copyTree(join(a, ".bimri-share"), join(b, ".bimri-share"));
  const mcp = await connectMcp(b);
  try {
    // Until the owner trusts the replica, the agent gets the owner's question and nothing applies.
    const waiting = await callTool(mcp, "memory_share_pull");
    assertMatch(
      textOf(waiting),
      /BIMRI OWNER QUESTION: trust replica [a-z2-7]{26}, which says it is /,
    );
    assertEquals(dataOf(waiting).imported, 0);
    // Trust is the owner's, through the CLI: no MCP tool grants it.
    await trustEveryReplica(b);
    const result = await callTool(mcp, "memory_share_pull");
    assertEquals(result.isError ?? false, false, textOf(result));
    assertMatch(textOf(result), /share pull imported 2 records; applied 2/);
    assertEquals(dataOf(result).imported, 2);
    const again = await callTool(mcp, "memory_share_pull");
    assertEquals(dataOf(again).imported, 0);
  } finally {
    await mcp.close();
  }
  assertEquals(await getText(b, "k.two"), "Two.");
});

Deno.test("memory_share_pull reports a gap as share status does: the count waiting and the missing record", async () => {
  const a = await tempStore();
  await agentSets(a, "codex", { "k.one": "One.", "k.two": "Two." });
  await gitInit(a); // share init needs a git work tree
  await must(a, ["share", "init", "--yes"]);
  await agentSets(a, "codex", { "k.one": "One v2." });
  await exportNow(a); // record 3, as the pre-commit hook writes it
  const b = await tempStore();
  copyTree(join(a, ".bimri-share"), join(b, ".bimri-share"));
  const replica = [...Deno.readDirSync(join(b, ".bimri-share"))].find((e) => e.isDirectory)!.name;
  const first = JSON.parse(
    Deno.readTextFileSync(join(b, ".bimri-share", replica, "00000001.json")),
  );
  const missing = first.key === "k.one" ? "00000001.json" : "00000002.json";
  Deno.removeSync(join(b, ".bimri-share", replica, missing));
  await trustEveryReplica(b);
  const mcp = await connectMcp(b);
  try {
    const result = await callTool(mcp, "memory_share_pull");
    const data = dataOf(result);
    assertEquals(data.applied, 1);
    assertEquals(data.waiting, 1);
    assertEquals(
      (data.gaps as { replica: string; missing: number[] }[]).map((g) => [g.replica, g.missing]),
      [[replica, [Number(missing.slice(0, 8))]]],
    );
  } finally {
    await mcp.close();
  }
  const status = JSON.parse(await must(b, ["share", "status", "--json"]));
  assertEquals(status.waiting, 1);
  assertEquals(status.gaps.length, 1);
  assertEquals(await getText(b, "k.two"), "Two.");
  assertEquals(await getText(b, "k.one"), null);
});
