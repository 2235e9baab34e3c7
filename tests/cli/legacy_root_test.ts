/**
 * Older BIMRI memory (a v1-v3 `BIMRI.md` or a rolling backup) that appears
 * beside a current store, say from an old branch, stops every command with
 * exit 2 and nothing written, as the reference's store load does: the owner
 * must say which memory is authoritative before agents write more. `doctor
 * --read-only` reports it as a failed audit (exit 1). Files a cut-short
 * migration still has to retire are migrate_retire_crash_test.ts.
 */
import { basename, join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  expectRefused,
  must,
  newSubject,
  pathExists,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { copyFixture } from "../fixtures/fixtures.ts";
import { callTool, connectMcp, textOf } from "./mcp_support.ts";

const UNCLAIMED =
  /^BIMRI ERROR: (doctor cannot open the store: )?selected structured BIMRI authority coexists with unclaimed legacy root file\(s\): BIMRI\.md\. BIMRI stopped without importing or deleting them\. Ask the owner which memory is authoritative/;

async function storeWithRun(): Promise<{ root: string; run: string }> {
  const root = await tempStore();
  const run = await startRun(root);
  await must(root, newSubject(run, "k.one", "First value."));
  await must(root, ["sync", "--run", run]);
  return { root, run };
}

Deno.test("old memory beside a store stops every command until the owner moves it", async () => {
  const { root, run } = await storeWithRun();
  Deno.writeTextFileSync(join(root, "BIMRI.md"), "# BIMRI: Memory File\n<!-- BIMRI v3 -->\n");
  const verbs = [
    ["start", "--actor", "b"],
    ["journal", "--run", run, "--text", "more"],
    newSubject(run, "k.two", "Second value."),
    ["sync", "--run", run],
    ["close", "--run", run],
    ["status"],
    ["index"],
    ["doctor"],
    ["get", "--key", "k.one"],
    ["recall", "--query", "value"],
    ["search", "--query", "value"],
    ["review"],
  ];
  for (const verb of verbs) await expectRefused(root, verb, UNCLAIMED);
  const audit = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(audit.code, 1, audit.stdout);
  assertMatch(audit.stdout, /^ {2}- selected structured BIMRI authority coexists .*: BIMRI\.md\./m);

  Deno.renameSync(join(root, "BIMRI.md"), join(root, "..", `${basename(root)}-old.md`));
  assertEquals((await bimri(root, ["get", "--key", "k.one"])).code, 0);
  await must(root, ["close", "--run", run]);
  assertEquals((await bimri(root, ["doctor"])).code, 0);
});

Deno.test("a rolling backup in any case counts as old memory; the generated view does not", async () => {
  const { root } = await storeWithRun();
  Deno.writeTextFileSync(join(root, "Bimri-Backup.md"), "# BIMRI: Memory File\n");
  const r = await bimri(root, ["status"]);
  assertEquals(r.code, 2, r.stdout);
  assertMatch(r.stderr, /unclaimed legacy root file\(s\): Bimri-Backup\.md\./);
  Deno.removeSync(join(root, "Bimri-Backup.md"));
  // bimri.md itself is the generated view.
  assertEquals((await bimri(root, ["status"])).code, 0);
});

Deno.test("the MCP server refuses the same way, and finishes a cut-short retirement", async () => {
  const { root } = await storeWithRun();
  Deno.writeTextFileSync(join(root, "BIMRI.md"), "# BIMRI: Memory File\n<!-- BIMRI v3 -->\n");
  const mcp = await connectMcp(root, "Claude");
  try {
    const refused = await callTool(mcp, "memory_start");
    assertEquals(refused.isError, true, textOf(refused));
    assertMatch(textOf(refused), /unclaimed legacy root file\(s\): BIMRI\.md\./);
  } finally {
    await mcp.close();
  }

  const migrated = await copyFixture("legacy-v3");
  const crashed = await bimri(migrated, ["migrate"], {
    env: { BIMRI_FAULT: "legacy-after-state" },
  });
  assertEquals(crashed.code, 86, crashed.stderr);
  const server = await connectMcp(migrated, "Claude");
  try {
    const started = await callTool(server, "memory_start");
    assertEquals(started.isError, undefined, textOf(started));
    assertEquals(pathExists(join(migrated, "BIMRI.md")), false);
    assertEquals(pathExists(join(migrated, "BIMRI-backup.md")), false);
  } finally {
    await server.close();
  }
});
