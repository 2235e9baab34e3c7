/**
 * The everyday verbs of a shared store (start, sync, close) commit as on an
 * unshared one and leave their changes for the next export (`share status`,
 * which the pre-commit hook runs, a pull, any other share verb): the records
 * appear only then, one per change in revision order, each with the entry
 * its own revision left. The list of pending changes is a hint: lost,
 * garbled or replaced by a link, the export still finds every change, once,
 * and nothing is written through the link.
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, must, startRun, tempStore } from "../helpers/cli.ts";
import { exportNow, sharedStore as sharedStoreOf } from "../helpers/share.ts";

type Exported = {
  seq: number;
  source: string;
  key: string;
  text: string | null;
  replaces: unknown;
  operation: string;
};

/** A shared store with one subject, and the path of its own replica folder. */
function sharedStore(): Promise<{ root: string; own: string }> {
  return sharedStoreOf(undefined, { "team.rule": "Review every migration." });
}

/** The records of a replica folder, in seq order. */
function exported(own: string): Exported[] {
  return [...Deno.readDirSync(own)].filter((e) => /^\d{8}\.json$/.test(e.name)).map((e) => {
    const r = JSON.parse(Deno.readTextFileSync(join(own, e.name)));
    return {
      seq: r.seq,
      source: r.source,
      key: r.key,
      text: r.entry?.text ?? null,
      replaces: r.replaces,
      operation: r.operation,
    };
  }).sort((a, b) => a.seq - b.seq);
}

const PENDING = join(".bimri", "share-pending.local.txt");

/** One session of three changes (two of one key, one new subject), synced twice; returns its run. */
async function threeChanges(root: string): Promise<string> {
  const run = await startRun(root, "codex");
  await must(root, ["propose", "--run", run, "--key", "team.rule", "--text", "Rule two."]);
  await must(root, ["sync", "--run", run]);
  await must(root, ["propose", "--run", run, "--key", "team.rule", "--text", "Rule three."]);
  await must(root, [
    "propose",
    "--run",
    run,
    "--key",
    "team.next",
    "--tier",
    "2",
    "--new-subject",
    "--text",
    "Next step.",
  ]);
  await must(root, ["sync", "--run", run]);
  return run;
}

Deno.test("sync and close write no record; share status exports each change once, in order, with its own revision's entry", async () => {
  const { root, own } = await sharedStore();
  const seeded = exported(own);
  assertEquals(seeded.map((r) => r.source), ["seed"]);
  const run = await threeChanges(root);
  await must(root, ["close", "--run", run, "--outcome", "success"]);
  assertEquals(exported(own).length, 1, "an everyday verb wrote a record");
  assertEquals(Deno.readTextFileSync(join(root, PENDING)).trim().split("\n"), [
    `${run}-Q001`,
    `${run}-Q002`,
    `${run}-Q003`,
  ]);
  // The next session's brief says what waits, in text and JSON.
  const start = await bimri(root, ["start", "--actor", "claude", "--json"]);
  assertEquals(start.code, 0, start.stderr);
  const brief = JSON.parse(start.stdout);
  assertEquals(brief.share_unexported, 3); // one revision per accepted change
  assertMatch(brief.brief, /Team memory: 3 changes of this clone wait for the next export/);
  assertEquals(exported(own).length, 1, "start wrote a record");

  await exportNow(root);
  const records = exported(own);
  assertEquals(records.map((r) => [r.seq, r.source, r.key, r.text]), [
    [1, "seed", "team.rule", "Review every migration."],
    [2, `${run}-Q001`, "team.rule", "Rule two."],
    [3, `${run}-Q002`, "team.rule", "Rule three."],
    [4, `${run}-Q003`, "team.next", "Next step."],
  ]);
  const replica = own.split(/[\\/]/).pop();
  assertEquals(records.map((r) => r.replaces), [null, `${replica}:1`, `${replica}:2`, null]);
  assertEquals(
    await Deno.lstat(join(root, PENDING)).then(() => true, () => false),
    false,
    "the pending list outlived the export",
  );
  // Nothing is exported twice by a later export or command.
  await exportNow(root);
  await must(root, ["start", "--actor", "claude"]);
  assertEquals(exported(own).length, 4);
  const again = JSON.parse(await must(root, ["start", "--actor", "claude", "--json"]));
  assertEquals(again.share_unexported, 0);
});

Deno.test("a lost or garbled pending list still exports every change once (the export scans the decisions)", async () => {
  for (const damage of ["lost", "garbled", "stale"] as const) {
    const { root, own } = await sharedStore();
    const run = await threeChanges(root);
    const pending = join(root, PENDING);
    if (damage === "lost") Deno.removeSync(pending);
    if (damage === "garbled") Deno.writeTextFileSync(pending, "not a proposal\n");
    // Stale: names only the first change, as if a crash lost the later lines.
    if (damage === "stale") Deno.writeTextFileSync(pending, `${run}-Q001\n`);
    await exportNow(root);
    assertEquals(
      exported(own).map((r) => [r.source, r.text]),
      [
        ["seed", "Review every migration."],
        [`${run}-Q001`, "Rule two."],
        [`${run}-Q002`, "Rule three."],
        [`${run}-Q003`, "Next step."],
      ],
      damage,
    );
  }
});

Deno.test("a link planted as the pending list is never written through; the export still finds the changes", async () => {
  if (Deno.build.os === "windows") return; // symbolic links need privileges there
  const { root, own } = await sharedStore();
  const target = join(await tempStore("bimri-outside-"), "victim.txt");
  Deno.writeTextFileSync(target, "untouched\n");
  Deno.symlinkSync(target, join(root, PENDING), { type: "file" });
  const run = await threeChanges(root);
  assertEquals(Deno.readTextFileSync(target), "untouched\n");
  await exportNow(root);
  assertEquals(Deno.readTextFileSync(target), "untouched\n");
  assertEquals(exported(own).map((r) => r.source), [
    "seed",
    `${run}-Q001`,
    `${run}-Q002`,
    `${run}-Q003`,
  ]);
});

Deno.test("share pull exports this clone's pending changes before it imports anything", async () => {
  const { root, own } = await sharedStore();
  const run = await threeChanges(root);
  await must(root, ["share", "pull"]);
  assertEquals(exported(own).map((r) => r.source), [
    "seed",
    `${run}-Q001`,
    `${run}-Q002`,
    `${run}-Q003`,
  ]);
});

Deno.test("a resolve refused for an unknown conflict leaves nothing pending: the next session's change still waits for the export", async () => {
  const { root, own } = await sharedStore();
  const refused = await bimri(root, [
    "resolve",
    "C000042",
    "--choose",
    "current",
    "--human-approved",
  ]);
  assertEquals(refused.code, 2, refused.stderr);
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri", "share.local.json")));
  assertEquals(state.pending_resolution ?? null, null);
  const run = await startRun(root, "codex");
  await must(root, ["propose", "--run", run, "--key", "team.rule", "--text", "Rule two."]);
  await must(root, ["close", "--run", run, "--outcome", "success"]);
  assertEquals(exported(own).length, 1, "close exported: it found a resolution pending");
  await exportNow(root);
  assertEquals(exported(own).map((r) => r.source), ["seed", `${run}-Q001`]);
});

Deno.test("a change whose line goes cold as it is committed (a full hot view) is exported with its own entry", async () => {
  const { root, own } = await sharedStore();
  const run = await startRun(root, "codex");
  // Fill the hot view with Tier 3 lines, so a new Tier 2 line is cooled at once.
  for (let i = 1; i <= 104; i++) {
    await must(root, [
      "propose",
      "--run",
      run,
      "--key",
      `p.k${i}`,
      "--tier",
      "3",
      "--new-subject",
      "--text",
      `Pattern ${i} ${"x".repeat(470)}`,
      "--falsifier",
      "f",
      "--confidence",
      "emerging",
    ]);
  }
  await must(root, ["sync", "--run", run]);
  const filler = "y".repeat(400);
  const steps: string[][] = [
    ["--key", "cold.x", "--tier", "2", "--new-subject", "--text", `First ${filler}`],
    ["--key", "cold.x", "--text", `Second ${filler}`],
    ["--key", "cold.y", "--tier", "2", "--new-subject", "--text", `Only ${filler}`],
    ["--key", "cold.y", "--operation", "close"],
  ];
  for (const step of steps) {
    await must(root, ["propose", "--run", run, ...step]);
    await must(root, ["sync", "--run", run]);
  }
  const seed = exported(own).length;
  await exportNow(root);
  const late = exported(own).slice(seed).filter((r) => r.key.startsWith("cold."));
  assertEquals(late.map((r) => [r.key, r.text?.slice(0, 6) ?? null]), [
    ["cold.x", "First "],
    ["cold.x", "Second"],
    ["cold.y", "Only y"],
    ["cold.y", null],
  ]);
  const operations = exported(own).slice(seed).filter((r) => r.key.startsWith("cold."))
    .map((r) => r.operation);
  assertEquals(operations, ["set", "set", "set", "close"]);
});
