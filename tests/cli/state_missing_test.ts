/**
 * A store whose state.json is gone while its history remains is never
 * started over: every command that would initialize a store refuses and
 * writes nothing, as the reference does. Only the genesis write interrupted
 * by a crash (a lone V000000 with the genesis view) is finished.
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  diffTrees,
  expectOk as ok,
  hashTree,
  newSubject,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

Deno.test("with state.json deleted and revisions present, start, status, doctor, index and sync refuse and change nothing", async () => {
  const root = await tempStore();
  const run = await startRun(root, "seed");
  ok(await bimri(root, newSubject(run, "k.one", "One.")), "propose");
  ok(await bimri(root, ["sync", "--run", run]), "sync");
  Deno.removeSync(join(root, ".bimri", "state.json"));
  const before = hashTree(root);
  for (
    const args of [
      ["start", "--actor", "next"],
      ["status"],
      ["doctor"],
      ["index"],
      ["sync", "--run", run],
      ["close", "--run", run],
    ]
  ) {
    const result = await bimri(root, args);
    assertEquals(result.code, 2, `${args[0]}: ${result.stdout}`);
    assertMatch(result.stderr, /state\.json is missing while memory revisions already exist/);
    assertEquals(diffTrees(before, hashTree(root)), null, `${args[0]} wrote nothing`);
  }
});

Deno.test("a genesis write interrupted after V000000 is finished by the next command", async () => {
  const root = await tempStore();
  ok(await bimri(root, ["start", "--actor", "first"]), "start");
  // What a crash right after the first revision leaves: V000000 and no state, no run yet.
  const fresh = await tempStore();
  Deno.mkdirSync(join(fresh, ".bimri", "revisions"), { recursive: true });
  Deno.copyFileSync(
    join(root, ".bimri", "revisions", "V000000.md"),
    join(fresh, ".bimri", "revisions", "V000000.md"),
  );
  const started = await bimri(fresh, ["start", "--actor", "first"]);
  assertEquals(started.code, 0, started.stderr);
  assertMatch(started.stdout, /^BIMRI RUN HANDLE: R000001$/m);
});
