/**
 * Crash injection between a commit and its shared record. On a shared store
 * start, sync and close leave their changes for the next export (`share
 * status`, which the pre-commit hook runs, a pull, any other share verb). The
 * crashes: a sync killed after its commit is durable but before its decision
 * is final (the next locked command finishes the commit, loads the export for
 * that, and exports it with the change left before it), and an export of two
 * changes killed before its first record or right after it (the next share
 * status or pull finishes it; start and sync write nothing unless they find
 * the record past the export cursor, which makes them finish it). Each change
 * is exported exactly once, in revision order with its own revision's entry,
 * and the following change takes the next seq. The same holds for `share init`
 * killed part-way through exporting the existing memory as seed records, and
 * for a `share pull` killed while committing the effects it decided.
 */
import { join } from "node:path";
import { assertEquals } from "../helpers/assert.ts";
import { bimri, must, startRun, tempStore } from "../helpers/cli.ts";
import {
  agentSets,
  exportNow,
  gitInit,
  openConflicts,
  textOf,
  trustEveryReplica,
} from "../helpers/share.ts";
import { copyTree } from "../helpers/portable.ts";

type Exported = { seq: number; source: string; key: string; text: string | null };

function exported(root: string): Exported[] {
  const share = join(root, ".bimri-share");
  const replica = [...Deno.readDirSync(share)].find((e) => e.isDirectory)!.name;
  const names = [...Deno.readDirSync(join(share, replica))].filter((e) => e.name !== "key.json");
  return names.map((e) => {
    const r = JSON.parse(Deno.readTextFileSync(join(share, replica, e.name)));
    return { seq: r.seq, source: r.source, key: r.key, text: r.entry?.text ?? null };
  }).sort((a, b) => a.seq - b.seq);
}

function sourcesOnce(records: Exported[]): void {
  const sources = records.filter((r) => r.source !== "seed").map((r) => r.source);
  assertEquals(new Set(sources).size, sources.length, `exported twice: ${sources.join(",")}`);
  assertEquals(records.map((r) => r.seq), records.map((_, i) => i + 1));
}

/** The record `seq` of `root`'s own replica, parsed. */
function recordAt(root: string, seq: number): Record<string, unknown> {
  const share = join(root, ".bimri-share");
  const replica = [...Deno.readDirSync(share)].find((e) => e.isDirectory)!.name;
  return JSON.parse(
    Deno.readTextFileSync(join(share, replica, `${String(seq).padStart(8, "0")}.json`)),
  );
}

/** The args of `next` (start, sync or a share subcommand) for run `run`. */
function nextArgs(next: string, run: string): string[] {
  if (next === "sync") return ["sync", "--run", run];
  if (next === "start") return ["start", "--actor", "codex"];
  return next.split(" ");
}

/** The texts the records carry, seed first, when both changes are exported. */
const BOTH = ["One.", "One v2.", "One v2b."];

/**
 * After the two changes were exported as seqs 2 and 3: the next change of
 * `run` is left by its sync for the next export, which gives it seq 4,
 * replacing the last recovered record.
 */
async function nextChangeTakesSeq4(root: string, run: string): Promise<void> {
  // A killed sync never moved the run's base: sync it first (nothing to commit).
  await must(root, ["sync", "--run", run]);
  assertEquals(exported(root).length, 3);
  await must(root, ["propose", "--run", run, "--key", "k.one", "--text", "One v3."]);
  await must(root, ["sync", "--run", run]);
  assertEquals(exported(root).length, 3, "the sync left its change for the next export");
  await exportNow(root);
  const last = exported(root);
  assertEquals(last.map((r) => r.text), [...BOTH, "One v3."]);
  assertEquals((recordAt(root, 4).replaces as string).endsWith(":3"), true);
  sourcesOnce(last);
}

/**
 * A shared store whose run synced a change of k.one (left for the next
 * export) and proposed a second one, not synced yet.
 */
async function twoChanges(): Promise<{ root: string; run: string }> {
  const root = await tempStore();
  await agentSets(root, "codex", { "k.one": "One." });
  await gitInit(root); // share init needs a git work tree
  await must(root, ["share", "init", "--yes"]);
  const run = await startRun(root);
  await must(root, ["propose", "--run", run, "--key", "k.one", "--text", "One v2."]);
  await must(root, ["sync", "--run", run]);
  await must(root, ["propose", "--run", run, "--key", "k.one", "--text", "One v2b."]);
  return { root, run };
}

// A sync killed after its head switch leaves the commit applying (no final
// decision, no line in the pending list, which names only the first change):
// the next locked command finishes the commit, which loads the export, and
// that export finds both changes, each with the text its own revision gave it.
for (const point of ["after-state", "after-view"]) {
  for (const next of ["start", "sync", "share status"]) {
    Deno.test(`a sync killed at ${point} is exported exactly once, after the change before it, by the next ${next}`, async () => {
      const { root, run } = await twoChanges();
      const killed = await bimri(root, ["sync", "--run", run], { env: { BIMRI_FAULT: point } });
      assertEquals(killed.code, 86, killed.stderr);
      assertEquals(await textOf(root, "k.one"), "One v2b.");
      assertEquals(exported(root).length, 1, "no sync exported");
      const args = nextArgs(next, run);
      await must(root, args);
      const after = exported(root);
      assertEquals(after.map((r) => r.text), BOTH, `the next ${next} exported both changes`);
      await must(root, args);
      await exportNow(root);
      assertEquals(exported(root), after, "exported once");
      sourcesOnce(after);
      await nextChangeTakesSeq4(root, run);
    });
  }
}

// The sync no longer exports (the fault points are not reached in it): an
// export (`share status`) of the two changes is killed instead, before its
// first record or right after it.
for (const point of ["share-before-export", "share-after-record"]) {
  /** Syncs the second change and kills the export; returns the records then. */
  const killExport = async (root: string, run: string): Promise<Exported[]> => {
    const synced = await bimri(root, ["sync", "--run", run], { env: { BIMRI_FAULT: point } });
    assertEquals(synced.code, 0, `the sync exports nothing, so reaches no ${point}`);
    assertEquals(exported(root).length, 1, "the syncs left their changes for the next export");
    const killed = await bimri(root, ["share", "status"], { env: { BIMRI_FAULT: point } });
    assertEquals(killed.code, 86, killed.stderr);
    const before = exported(root);
    assertEquals(before.length, point === "share-after-record" ? 2 : 1);
    return before;
  };
  for (const next of ["share status", "share pull"]) {
    Deno.test(`an export killed at ${point} is finished exactly once by the next ${next}`, async () => {
      const { root, run } = await twoChanges();
      await killExport(root, run);
      await must(root, next.split(" "));
      const after = exported(root);
      assertEquals(after.map((r) => r.text), BOTH);
      await must(root, next.split(" "));
      await exportNow(root);
      assertEquals(exported(root), after, "exported once");
      sourcesOnce(after);
      await nextChangeTakesSeq4(root, run);
    });
  }
  // start and sync leave their own changes for the next export, but one that
  // finds a record past the export cursor (an export cut short after it) loads
  // the export to adopt it, which finishes the export.
  const finishes = point === "share-after-record";
  for (const next of ["start", "sync"]) {
    const name = finishes
      ? `an export killed at ${point} is finished exactly once by the next ${next}, which finds its record`
      : `an export killed at ${point}: the next ${next} writes no record, the next share status finishes it exactly once`;
    Deno.test(name, async () => {
      const { root, run } = await twoChanges();
      const before = await killExport(root, run);
      const args = nextArgs(next, run);
      const first = await must(root, args);
      if (next === "start") {
        const waits = /Team memory: 2 changes of this clone wait for the next export/;
        assertEquals(waits.test(first), !finishes, first);
      }
      const done = exported(root);
      if (finishes) assertEquals(done.map((r) => r.text), BOTH, `the ${next} finished the export`);
      else assertEquals(done, before, `the ${next} wrote no record`);
      await must(root, args);
      await exportNow(root);
      const after = exported(root);
      assertEquals(after.map((r) => r.text), BOTH);
      await exportNow(root);
      assertEquals(exported(root), after, "exported once");
      sourcesOnce(after);
      await nextChangeTakesSeq4(root, run);
    });
  }
}

Deno.test("a resolve killed before its record is exported once by the next command", async () => {
  const root = await tempStore();
  await agentSets(root, "codex", { "k.two": "Two." });
  await gitInit(root); // share init needs a git work tree
  await must(root, ["share", "init", "--yes"]);
  const r1 = await startRun(root, "codex");
  const r2 = await startRun(root, "claude");
  await must(root, ["propose", "--run", r1, "--key", "k.two", "--text", "Two from one."]);
  await must(root, ["propose", "--run", r2, "--key", "k.two", "--text", "Two from two."]);
  await must(root, ["sync", "--run", r1]);
  const synced = await must(root, ["sync", "--run", r2]);
  const conflict = /C[0-9]{6}/.exec(synced)![0];
  // The syncs leave r1's change for the next export; exported first, so the
  // crash below comes in the resolution's own export, not in that one.
  assertEquals(exported(root).length, 1);
  await exportNow(root);
  assertEquals(exported(root).length, 2);
  const killed = await bimri(root, [
    "resolve",
    conflict,
    "--choose",
    "current",
    "--human-approved",
  ], { env: { BIMRI_FAULT: "share-before-export" } });
  assertEquals(killed.code, 86);
  assertEquals(exported(root).length, 2);
  await must(root, ["share", "status"]);
  assertEquals(exported(root).length, 3, "share status exported the pending resolution");
  await must(root, ["resolve", conflict, "--choose", "current", "--human-approved"]);
  const records = exported(root);
  assertEquals(records.length, 3);
  assertEquals(records[2].source, conflict);
  sourcesOnce(records);
});

for (const next of ["start", "share init", "share status"]) {
  Deno.test(`share init killed part-way through seeding is finished exactly once by the next ${next}`, async () => {
    const root = await tempStore();
    await agentSets(root, "codex", { "k.one": "One.", "k.two": "Two.", "k.three": "Three." });
    await gitInit(root); // share init needs a git work tree
    const killed = await bimri(root, ["share", "init", "--yes"], {
      env: { BIMRI_FAULT: "share-after-seed" },
    });
    assertEquals(killed.code, 86, killed.stderr);
    assertEquals(exported(root).length, 1);
    const args = next.split(" ");
    if (next === "start") args.push("--actor", "codex");
    if (next === "share init") args.push("--yes");
    await must(root, args);
    await must(root, args);
    const seeds = exported(root);
    assertEquals(seeds.map((r) => r.source), ["seed", "seed", "seed"]);
    assertEquals(seeds.map((r) => r.key).sort(), ["k.one", "k.three", "k.two"]);
    assertEquals(seeds.map((r) => r.seq), [1, 2, 3]);
    // The next change, left by its close for the next export, takes the next
    // seq and replaces its key's seed.
    await agentSets(root, "codex", { "k.two": "Two v2." });
    assertEquals(exported(root).length, 3, "the close left its change for the next export");
    await exportNow(root);
    const after = exported(root);
    assertEquals(after.length, 4);
    assertEquals(after[3].text, "Two v2.");
    sourcesOnce(after);
  });
}

Deno.test("many changes exported in a row: each record names its key's previous record, what it saw and its own revision's entry", async () => {
  const root = await tempStore();
  await agentSets(root, "codex", { "k.base": "Base." });
  await gitInit(root); // share init needs a git work tree
  await must(root, ["share", "init", "--yes"]);
  const share = join(root, ".bimri-share");
  const replica = [...Deno.readDirSync(share)].find((e) => e.isDirectory)!.name;
  // Twelve changes, one key each, then three keys again, all left for one export.
  for (let i = 0; i < 12; i++) await agentSets(root, "codex", { [`k.n${i}`]: `N${i}.` });
  for (const i of [0, 5, 11]) await agentSets(root, "codex", { [`k.n${i}`]: `N${i} v2.` });
  assertEquals(exported(root).length, 1, "the closes left their changes for the next export");
  await exportNow(root);
  const records = exported(root);
  sourcesOnce(records);
  assertEquals(records.length, 16);
  // Seq 1 is the seed; k.n<i> was first exported as seq i + 2, in revision
  // order, with the text its own revision gave it (not the head's v2).
  for (let i = 0; i < 12; i++) {
    assertEquals([records[i + 1].key, records[i + 1].text], [`k.n${i}`, `N${i}.`]);
  }
  for (const [seq, i] of [[14, 0], [15, 5], [16, 11]]) {
    const record = recordAt(root, seq);
    assertEquals([record.key, records[seq - 1].text], [`k.n${i}`, `N${i} v2.`]);
    assertEquals(record.replaces, `${replica}:${i + 2}`);
    assertEquals((record.vector as Record<string, number>)[replica], seq - 1);
  }
  // The same three keys again, each change exported on its own.
  for (const [seq, i] of [[17, 0], [18, 5], [19, 11]]) {
    await agentSets(root, "codex", { [`k.n${i}`]: `N${i} v3.` });
    assertEquals(exported(root).length, seq - 1);
    await exportNow(root);
    const record = recordAt(root, seq);
    assertEquals(record.key, `k.n${i}`);
    assertEquals(record.replaces, `${replica}:${seq - 3}`);
    assertEquals((record.vector as Record<string, number>)[replica], seq - 1);
  }
  sourcesOnce(exported(root));
});

/** Accepted decisions of import proposals in `root`, by key. */
function acceptedImports(root: string): Record<string, number> {
  const out: Record<string, number> = {};
  const decisions = join(root, ".bimri", "decisions");
  for (const file of Deno.readDirSync(decisions)) {
    const d = JSON.parse(Deno.readTextFileSync(join(decisions, file.name)));
    if (d.outcome !== "accepted") continue;
    const p = JSON.parse(Deno.readTextFileSync(join(root, ".bimri", "proposals", file.name)));
    if (!p.rationale.startsWith("Imported from replica")) continue;
    out[p.key] = (out[p.key] ?? 0) + 1;
  }
  return out;
}

for (
  const point of [
    "after-propose-entry",
    "after-proposal-file",
    "after-applying-decision",
    "after-archive",
    "after-revision",
    "after-state",
  ]
) {
  for (const next of ["share pull", "start"]) {
    Deno.test(`a share pull killed at ${point} is finished exactly once by the next ${next}`, async () => {
      const from = await tempStore();
      await agentSets(from, "codex", { "k.one": "One.", "k.two": "Two." });
      await gitInit(from); // share init needs a git work tree
      await must(from, ["share", "init", "--yes"]);
      await agentSets(from, "codex", { "k.one": "One v2.", "k.two": "Two v2." });
      await agentSets(from, "codex", { "k.one": "One v3." });
      await exportNow(from); // as the pre-commit hook does
      const root = await tempStore();
      copyTree(join(from, ".bimri-share"), join(root, ".bimri-share"));
      await trustEveryReplica(root);
      const killed = await bimri(root, ["share", "pull"], { env: { BIMRI_FAULT: point } });
      assertEquals(killed.code, 86, killed.stderr);
      const args = next.split(" ");
      if (next === "start") args.push("--actor", "codex");
      await must(root, args);
      await must(root, ["share", "pull"]);
      assertEquals(await textOf(root, "k.one"), "One v3.");
      assertEquals(await textOf(root, "k.two"), "Two v2.");
      assertEquals(await openConflicts(root), []);
      // The newest effect of each key was committed once, the interrupted one included.
      assertEquals(acceptedImports(root), { "k.one": 1, "k.two": 1 });
      const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri", "state.json")));
      assertEquals(
        Object.values(state.active_runs).filter((r) =>
          (r as { actor: string }).actor.startsWith("share-")
        ),
        [],
      );
      const doctor = await bimri(root, ["doctor"]);
      assertEquals(doctor.code, 0, doctor.stdout);
    });
  }
}

for (const verb of ["sync", "close"]) {
  Deno.test(`a share pull killed part-way is finished by the next ${verb} of a run begun before it, which then commits`, async () => {
    const from = await tempStore();
    await agentSets(from, "codex", { "k.one": "One.", "k.two": "Two." });
    await gitInit(from); // share init needs a git work tree
    await must(from, ["share", "init", "--yes"]);
    await agentSets(from, "codex", { "k.one": "One v2." });
    await exportNow(from); // as the pre-commit hook does
    const root = await tempStore();
    const run = await startRun(root, "claude");
    await must(root, [
      "propose",
      "--run",
      run,
      "--key",
      "k.mine",
      "--tier",
      "2",
      "--new-subject",
      "--text",
      "Mine.",
    ]);
    copyTree(join(from, ".bimri-share"), join(root, ".bimri-share"));
    await trustEveryReplica(root);
    const killed = await bimri(root, ["share", "pull"], { env: { BIMRI_FAULT: "after-revision" } });
    assertEquals(killed.code, 86, killed.stderr);
    const args = verb === "sync"
      ? ["sync", "--run", run]
      : ["close", "--run", run, "--outcome", "success"];
    await must(root, args);
    assertEquals(await textOf(root, "k.mine"), "Mine.");
    await must(root, ["share", "pull"]);
    assertEquals(await textOf(root, "k.one"), "One v2.");
    assertEquals(await textOf(root, "k.two"), "Two.");
    assertEquals(acceptedImports(root), { "k.one": 1, "k.two": 1 });
    const doctor = await bimri(root, ["doctor"]);
    assertEquals(doctor.code, 0, doctor.stdout);
  });
}
