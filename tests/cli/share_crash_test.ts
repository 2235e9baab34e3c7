/**
 * Crash injection between a commit and its shared record: the process is
 * killed (BIMRI_FAULT) after the commit is durable but before the record is
 * written, or after the record but before the share state names it. The next
 * command of the store finishes the export exactly once, and the following
 * change takes the next seq. The same holds for `share init` killed part-way
 * through exporting the existing memory as seed records, and for a `share
 * pull` killed while committing the effects it decided.
 */
import { join } from "node:path";
import { assertEquals } from "../helpers/assert.ts";
import { bimri, must, startRun, tempStore } from "../helpers/cli.ts";
import { agentSets, gitInit, openConflicts, textOf, trustEveryReplica } from "../helpers/share.ts";
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

for (const point of ["after-state", "after-view", "share-before-export", "share-after-record"]) {
  for (const next of ["start", "sync", "share status"]) {
    Deno.test(`a sync killed at ${point} is exported exactly once by the next ${next}`, async () => {
      const root = await tempStore();
      await agentSets(root, "codex", { "k.one": "One." });
      await gitInit(root); // share init needs a git work tree
      await must(root, ["share", "init", "--yes"]);
      const run = await startRun(root);
      await must(root, ["propose", "--run", run, "--key", "k.one", "--text", "One v2."]);
      const killed = await bimri(root, ["sync", "--run", run], { env: { BIMRI_FAULT: point } });
      assertEquals(killed.code, 86, killed.stderr);
      assertEquals(await textOf(root, "k.one"), "One v2.");
      const before = exported(root);
      assertEquals(before.length, point === "share-after-record" ? 2 : 1);
      const args = next === "sync" ? ["sync", "--run", run] : next.split(" ");
      if (next === "start") args.push("--actor", "codex");
      await must(root, args);
      await must(root, args);
      const after = exported(root);
      assertEquals(after.length, 2);
      assertEquals(after[1].text, "One v2.");
      sourcesOnce(after);
      // The following change takes the next seq and replaces the recovered one
      // (the killed sync never moved the run's base: sync it first).
      await must(root, ["sync", "--run", run]);
      assertEquals(exported(root).length, 2);
      await must(root, ["propose", "--run", run, "--key", "k.one", "--text", "One v3."]);
      await must(root, ["sync", "--run", run]);
      const last = exported(root);
      assertEquals(last.length, 3);
      assertEquals(last[2].text, "One v3.");
      const third = JSON.parse(
        Deno.readTextFileSync(
          join(
            root,
            ".bimri-share",
            [...Deno.readDirSync(join(root, ".bimri-share"))]
              .find((e) => e.isDirectory)!.name,
            "00000003.json",
          ),
        ),
      );
      assertEquals(third.replaces.endsWith(":2"), true);
      sourcesOnce(last);
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
    // The next change takes the next seq and replaces its key's seed.
    await agentSets(root, "codex", { "k.two": "Two v2." });
    const after = exported(root);
    assertEquals(after.length, 4);
    assertEquals(after[3].text, "Two v2.");
    sourcesOnce(after);
  });
}

Deno.test("many exports in a row: each names its key's previous record and what it saw", async () => {
  const root = await tempStore();
  await agentSets(root, "codex", { "k.base": "Base." });
  await gitInit(root); // share init needs a git work tree
  await must(root, ["share", "init", "--yes"]);
  // Twelve exports, one key each, then three keys again.
  for (let i = 0; i < 12; i++) await agentSets(root, "codex", { [`k.n${i}`]: `N${i}.` });
  for (const i of [0, 5, 11]) await agentSets(root, "codex", { [`k.n${i}`]: `N${i} v2.` });
  const records = exported(root);
  sourcesOnce(records);
  assertEquals(records.length, 16);
  const share = join(root, ".bimri-share");
  const replica = [...Deno.readDirSync(share)].find((e) => e.isDirectory)!.name;
  const read = (seq: number) =>
    JSON.parse(Deno.readTextFileSync(join(share, replica, `${String(seq).padStart(8, "0")}.json`)));
  // Seq 1 is the seed; k.n<i> was first exported as seq i + 2.
  for (const [seq, i] of [[14, 0], [15, 5], [16, 11]]) {
    const record = read(seq);
    assertEquals(record.key, `k.n${i}`);
    assertEquals(record.replaces, `${replica}:${i + 2}`);
    assertEquals(record.vector[replica], seq - 1);
  }
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
