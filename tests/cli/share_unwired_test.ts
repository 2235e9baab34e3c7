/**
 * Verbs that commit no memory (journal, propose, get, search, recall) need nothing of
 * team memory: an unreadable `.bimri/share.local.json` stops every writing
 * verb with its `BIMRI ERROR` but leaves an agent able to log and read. Since
 * issue 42 they do not even load engine/share/ on a shared store (the unit
 * test below holds the wiring decision).
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, must, startRun, tempStore } from "../helpers/cli.ts";
import { shareMayBeWired } from "../../commands/run.ts";
import { agentSets, gitInit } from "../helpers/share.ts";

Deno.test("journal, propose, get, search and recall work on a shared store whose share bookkeeping is unreadable", async () => {
  const root = await tempStore();
  await agentSets(root, "codex", { "team.rule": "Review every migration." });
  await gitInit(root); // share init needs a git work tree
  await must(root, ["share", "init", "--yes"]);
  const run = await startRun(root);
  Deno.writeTextFileSync(join(root, ".bimri", "share.local.json"), "{not json");

  const journal = await bimri(root, ["journal", "--run", run, "--text", "Logged anyway."]);
  const propose = await bimri(root, [
    "propose",
    "--run",
    run,
    "--key",
    "team.rule",
    "--text",
    "Review every migration twice.",
  ]);
  assertEquals(propose.code, 0, propose.stderr);
  assertEquals(journal.code, 0, journal.stderr);
  assertMatch(journal.stdout, new RegExp(`^${run}-E[0-9]{3}$`, "m"));
  const get = await bimri(root, ["get", "--key", "team.rule"]);
  assertEquals(get.code, 0, get.stderr);
  assertMatch(get.stdout, /Review every migration\./);
  for (const verb of [["search", "--query", "migration"], ["recall", "--query", "migration"]]) {
    const read = await bimri(root, verb);
    assertEquals(read.code, 0, `${verb[0]}: ${read.stderr}`);
  }

  // A verb that may commit still reads the bookkeeping, and refuses.
  const sync = await bimri(root, ["sync", "--run", run]);
  assertEquals(sync.code, 2);
  assertMatch(sync.stderr, /BIMRI ERROR: .*share\.local\.json is unreadable/);
  await Deno.remove(root, { recursive: true });
});

Deno.test("a shared store wires team memory for every verb that may commit, and for no other", async () => {
  const root = await tempStore();
  Deno.mkdirSync(join(root, ".bimri"));
  for (const verb of ["start", "propose", "sync", "close", "journal"]) {
    assertEquals(shareMayBeWired(verb, root), false, `${verb} before the store is shared`);
  }
  assertEquals(shareMayBeWired("share", root), true, "share may make the store shared");
  Deno.writeTextFileSync(join(root, ".bimri", "replica.local.json"), "{}");
  for (const verb of ["start", "sync", "close", "resolve", "maintain", "status"]) {
    assertEquals(shareMayBeWired(verb, root), true, verb);
  }
  for (const verb of ["journal", "propose", "get", "search", "recall"]) {
    assertEquals(shareMayBeWired(verb, root), false, verb);
  }
  await Deno.remove(root, { recursive: true });
});
