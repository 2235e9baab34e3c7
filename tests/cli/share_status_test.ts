/**
 * Team memory around the edges: a fresh clone's install builds the store
 * from the records, start's brief and share status count the records
 * waiting (and start the changes of this clone its everyday verbs left for
 * the next export), an unshared store says nothing about sharing, and a
 * copied store takes a new replica ID on its next write and exports as it.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { copyStore, must, tempStore } from "../helpers/cli.ts";
import { agentSets, exportNow, gitInit, textOf, trustEveryReplica } from "../helpers/share.ts";
import { copyTree } from "../helpers/portable.ts";

function copyShare(from: string, to: string): void {
  copyTree(join(from, ".bimri-share"), join(to, ".bimri-share"));
}

function replicaFolders(root: string): string[] {
  return [...Deno.readDirSync(join(root, ".bimri-share"))].filter((e) => e.isDirectory)
    .map((e) => e.name).sort();
}

Deno.test("install builds a fresh clone's store from the records; start and status count what waits, start also what waits for the next export", async () => {
  const a = await tempStore();
  await agentSets(a, "codex", { "k.one": "One.", "k.two": "Two." });
  await gitInit(a); // share init needs a git work tree
  await must(a, ["share", "init", "--yes"]);
  const b = await tempStore();
  copyShare(a, b);
  const installed = await must(b, ["install", "--target", b]);
  // The owner trusts the other clone's replica first; its records then apply.
  assertMatch(installed, /BIMRI OWNER QUESTION: trust replica [a-z2-7]{26}, which says it is /);
  assertMatch(installed, /share pull imported 0 records/);
  await trustEveryReplica(b);
  assertMatch(await must(b, ["share", "pull"]), /share pull imported 2 records; applied 2/);
  assertEquals(await textOf(b, "k.one"), "One.");
  assertEquals(await textOf(b, "k.two"), "Two.");

  const [replicaA] = replicaFolders(a);
  await agentSets(a, "codex", { "k.one": "One v2.", "k.three": "Three." });
  // a's close wrote no record: start says they wait for the export, which writes them.
  assertEquals(recordCount(join(a, ".bimri-share", replicaA)), 2);
  assertMatch(
    await must(a, ["start", "--actor", "codex"]),
    /Team memory: 2 changes of this clone wait for the next export to \.bimri-share\/: run `bimri share status` and `git add \.bimri-share` before you commit/,
  );
  await exportNow(a);
  assertEquals(recordCount(join(a, ".bimri-share", replicaA)), 4);
  assertNotMatch(await must(a, ["start", "--actor", "codex"]), /changes? of this clone waits?/);
  Deno.removeSync(join(b, ".bimri-share"), { recursive: true });
  copyShare(a, b);
  const brief = await must(b, ["start", "--actor", "claude"]);
  assertMatch(
    brief,
    /Team memory: 2 records from other clones are waiting; run `bimri share pull`\./,
  );
  assert(brief.indexOf("Team memory") < brief.indexOf("=== END BRIEF ==="));
  const status = await must(b, ["share", "status"]);
  assertMatch(status, /Records waiting to be pulled: 2\./);
  const json = JSON.parse(await must(b, ["share", "status", "--json"]));
  assertEquals(json.waiting, 2);
  await must(b, ["share", "pull"]);
  assertEquals(await textOf(b, "k.one"), "One v2.");
  assertMatch(await must(b, ["share", "status"]), /Records waiting to be pulled: 0\./);
  assertMatch(
    await must(b, ["start", "--actor", "claude"]),
    /Team memory: no records from other clones are waiting\./,
  );
});

Deno.test("an unshared store's brief says nothing about team memory", async () => {
  const root = await tempStore();
  const brief = await must(root, ["start", "--actor", "codex"]);
  assertNotMatch(brief, /Team memory/);
  assertMatch(await must(root, ["share", "status"]), /not shared/);
});

/** How many record files a replica folder holds (its key file aside). */
function recordCount(folder: string): number {
  return [...Deno.readDirSync(folder)].filter((e) => /^[0-9]{8}\.json$/.test(e.name)).length;
}

Deno.test("a copied store mints its own replica ID on its next write and exports as it; the original keeps its own", async () => {
  const a = await tempStore();
  await agentSets(a, "codex", { "k.one": "One." });
  await gitInit(a); // share init needs a git work tree
  await must(a, ["share", "init", "--yes"]);
  const [original] = replicaFolders(a);
  const copy = await copyStore(a);
  await agentSets(copy, "codex", { "k.one": "One from the copy." });
  // The session minted the copy's ID; its close left the change for the next export.
  const replica = JSON.parse(Deno.readTextFileSync(join(copy, ".bimri", "replica.local.json")));
  assert(replica.replica !== original);
  assertEquals(replica.store_path, copy);
  assertEquals(replicaFolders(copy), [original]);
  await exportNow(copy);
  const folders = replicaFolders(copy);
  assertEquals(folders.length, 2);
  const minted = folders.find((f) => f !== original)!;
  assertEquals(minted, replica.replica);
  assertEquals(recordCount(join(copy, ".bimri-share", minted)), 1);
  assertEquals(recordCount(join(copy, ".bimri-share", original)), 1);
  assertEquals(
    JSON.parse(Deno.readTextFileSync(join(copy, ".bimri", "replica.local.json"))).replica,
    minted,
  );
  // The original still writes as itself.
  await agentSets(a, "codex", { "k.one": "One from the original." });
  assertEquals(recordCount(join(a, ".bimri-share", original)), 1);
  await exportNow(a);
  assertEquals(replicaFolders(a), [original]);
  assertEquals(recordCount(join(a, ".bimri-share", original)), 2);
  // Both changes replaced the same seed: each side sees one conflict after pulling the other.
  Deno.mkdirSync(join(a, ".bimri-share", minted));
  Deno.copyFileSync(
    join(copy, ".bimri-share", minted, "00000001.json"),
    join(a, ".bimri-share", minted, "00000001.json"),
  );
  Deno.copyFileSync(
    join(copy, ".bimri-share", minted, "key.json"),
    join(a, ".bimri-share", minted, "key.json"),
  );
  await trustEveryReplica(a);
  assertMatch(await must(a, ["share", "pull"]), /new conflicts 1/);
});
