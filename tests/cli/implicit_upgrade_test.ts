import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, readStoreJson, startRun } from "../helpers/cli.ts";
import { copyFixture } from "../fixtures/fixtures.ts";

function stateBackups(root: string): string[] {
  return [...Deno.readDirSync(join(root, ".bimri/backups"))]
    .map((e) => e.name)
    .filter((n) => n.startsWith("state-v5.0-"));
}

Deno.test("a writer upgrades a v5.0 store first, as migrate would, and then runs", async () => {
  const root = await copyFixture("v5.0-stock");
  const oldState = Deno.readFileSync(join(root, ".bimri/state.json"));
  const started = await bimri(root, ["start", "--actor", "upgrader"]);
  assertEquals(started.code, 0, started.stderr);
  assertMatch(started.stdout, /=== BIMRI BRIEF R\d{6} /);
  assertMatch(started.stderr, /BIMRI NOTICE: memory format v5\.0 was upgraded to v5\.1\.0/);
  assertEquals(readStoreJson(root, "state.json").bimri_version, "5.1.0");
  const backups = stateBackups(root);
  assertEquals(backups.length, 1);
  assertEquals(Deno.readFileSync(join(root, ".bimri/backups", backups[0])), oldState);
  // Once upgraded, the next writer says nothing about it.
  const run = await startRun(root, "next");
  const sync = await bimri(root, ["sync", "--run", run]);
  assertEquals(sync.code, 0, sync.stderr);
  assert(!sync.stderr.includes("upgraded"), sync.stderr);
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});

Deno.test("a read-only audit of a v5.0 store refuses and changes nothing", async () => {
  const root = await copyFixture("v5.0-stock");
  const before = hashTree(root);
  const audit = await bimri(root, ["doctor", "--read-only"]);
  assert(audit.code !== 0, audit.stdout);
  assertEquals(readStoreJson(root, "state.json").bimri_version, "5.0");
  assertEquals(diffTrees(before, hashTree(root)), null);
});
