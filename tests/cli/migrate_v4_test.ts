import { join } from "node:path";
import { createHash } from "node:crypto";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, startRun } from "../helpers/cli.ts";
import { copyFixture } from "../fixtures/fixtures.ts";

function read(root: string, path: string): string {
  return Deno.readTextFileSync(join(root, path));
}

function sha(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

const HISTORY = [
  ".bimri/log/R001.md",
  ".bimri/log/R002.md",
  ".bimri/log/R003.md",
  ".bimri/log/R004.md",
  ".bimri/archive/2026-04.md",
  ".bimri/inbox/note.md",
  ".bimri/backups/bimri-20260403-100000.md",
];

Deno.test("v4 state and memory migrate with historical IDs, keys and history in place", async () => {
  const root = await copyFixture("v4-store");
  const hot = Deno.readFileSync(join(root, "bimri.md"));
  const oldState = Deno.readFileSync(join(root, ".bimri/state.json"));
  const history = new Map(HISTORY.map((p) => [p, Deno.readFileSync(join(root, p))]));
  // The v4-era archive row is history the migration keeps byte for byte, and
  // readers skip it as inert legacy history.
  const migrated = await bimri(root, ["migrate"]);
  assertEquals(migrated.code, 0, migrated.stdout + migrated.stderr);
  assertMatch(migrated.stdout, /^Validation: PASSED\.$/m);
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
  assertEquals((await bimri(root, ["index"])).code, 0);
  assertEquals((await bimri(root, ["search", "--query", "sqlite"])).code, 0);

  const view = read(root, "bimri.md");
  assertEquals(view, read(root, ".bimri/revisions/V000000.md"));
  assertMatch(view, /^<!-- BIMRI v5\.0\.2 \| Generated view\. Do not edit directly\. -->$/m);
  const lines = view.split("\n").filter((l) => l.startsWith("["));
  assertEquals(lines, [
    "[R001-E01] [K:legacy.r001-e01] [decision] [T:working] [SRC:legacy] [arch] Use SQLite for the local cache. -> .bimri/log/R001.md",
    "[R002-E03] [K:legacy.r002-e03] [pref] [T:working] [SRC:legacy] [] The owner wants terse commit messages.",
    "[R002-E01] [K:legacy.r002-e01] [I:4] [active] [T:working] [SRC:legacy] [F:R001] [L:R002] [cache,perf] Cache warmup is slow on cold start. -> .bimri/log/R002.md",
    "[R003-E02] [K:legacy.r003-e02] [I:3] [watch] [T:working] [SRC:legacy] [F:R003] [L:R003] [] Ship the beta behind a flag. -> .bimri/log/R003.md",
    "[P001] [K:legacy.pattern-p001] [developing] [obs:3] [ev:R001-E01,R002-E01] The owner profiles before optimizing. | Falsify: an optimization merged without a measurement.",
    lines[5],
  ]);
  assertMatch(
    lines[5],
    /^\[P002\] \[K:legacy\.pattern-p002\] \[emerging\] \[obs:2\] \[ev:R003-E02\] Legacy pattern hypothesis x{520} \| Falsify: the opposite\.$/,
  );

  const state = JSON.parse(read(root, ".bimri/state.json"));
  assertEquals(state.bimri_version, "5.1.0");
  assertEquals(state.project_id, "acme-cache");
  assertEquals(state.cadence_class, "daily_cron");
  assertEquals(state.flag_threshold, 0.4);
  assertEquals(state.run_count, 4, "at least the highest existing log number");
  assertEquals(state.run_dates, { R001: "2026-04-01", R002: "2026-04-02", R003: "2026-04-03" });
  assertEquals([state.tier1_max, state.tier2_max, state.tier3_max], [12, 20, 8]);
  assert(!("current_run_id" in state) && !("tier2_hard" in state));

  for (const [path, bytes] of history) {
    assertEquals(Deno.readFileSync(join(root, path)), bytes, path);
  }
  const record = JSON.parse(read(root, ".bimri/migrations/v4-to-v5.json"));
  assertEquals(record.migration, "v4-to-v5");
  assertEquals(record.source_hot_hash, sha(hot));
  assertEquals(record.source_state_hash, sha(oldState));
  assertEquals(Deno.readFileSync(join(root, record.backup_hot)), hot);
  assertEquals(Deno.readFileSync(join(root, record.backup_state)), oldState);

  // New runs continue after the old numbers.
  assertEquals(await startRun(root), "R000005");
});

Deno.test("a migrated v4 store prints the migration receipt and passes doctor", async () => {
  const root = await copyFixture("v4-store");
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertMatch(result.stdout, /^Memory: migrated BIMRI v4\.0 from bimri\.md to v5\.1\.0\.$/m);
  assertMatch(
    result.stdout,
    /^Imported: Tier 1 2; Tier 2 2; Tier 3 2; total 6; converted patterns 2; inherited overlength 1\.$/m,
  );
  assertMatch(
    result.stdout,
    /^Validation: PASSED\.$/m,
  );
  assertMatch(
    result.stdout,
    /^Byte-exact backups: \.bimri\/backups\/state-v4\.json-.*, \.bimri\/backups\/bimri-v4\.md-/m,
  );
  assertMatch(result.stdout, /^Migration record: \.bimri\/migrations\/v4-to-v5\.json\.$/m);
  assertMatch(result.stdout, /^Validation: PASSED\.$/m);
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});

for (const point of ["v4-after-backups", "v4-after-marker", "v4-after-state"]) {
  Deno.test(`a v4 migration interrupted at ${point} resumes without new backups`, async () => {
    const root = await copyFixture("v4-store");
    const crashed = await bimri(root, ["migrate"], { env: { BIMRI_FAULT: point } });
    assertEquals(crashed.code, 86);
    const result = await bimri(root, ["migrate"]);
    assertEquals(result.code, 0, result.stdout + result.stderr);
    const backups = [...Deno.readDirSync(join(root, ".bimri/backups"))].map((e) => e.name).sort();
    assertEquals(backups.length, 3, backups.join(", "));
    assertEquals(read(root, "bimri.md"), read(root, ".bimri/revisions/V000000.md"));
    assertEquals(JSON.parse(read(root, ".bimri/state.json")).bimri_version, "5.1.0");
    const recovery = [...Deno.readDirSync(join(root, ".bimri/recovery"))].map((e) => e.name);
    assertEquals(recovery, [], "the v4 source is not mistaken for a manual edit");
  });
}

Deno.test("a v4 line that cannot be converted is refused with nothing written", async () => {
  const root = await copyFixture("v4-store");
  const hot = read(root, "bimri.md").replace(
    "[R002-E03] [pref] [] The owner wants terse commit messages.",
    "[R002-E03] [opinion] [] Not a v4 kind.",
  );
  Deno.writeTextFileSync(join(root, "bimri.md"), hot);
  const before = hashTree(root);
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 2);
  assertMatch(result.stderr, /^BIMRI ERROR: v4 memory could not be converted safely/);
  assertEquals(diffTrees(before, hashTree(root)), null);
});

Deno.test("v4 state next to an unclaimed uppercase BIMRI.md is refused with nothing written", async () => {
  const root = await copyFixture("v4-store");
  Deno.writeTextFileSync(join(root, "BIMRI.md"), "<!-- BIMRI v3 -->\n");
  const before = hashTree(root);
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 2);
  assertMatch(result.stderr, /unclaimed legacy root file BIMRI\.md/);
  assertEquals(diffTrees(before, hashTree(root)), null);
});

Deno.test("a v4 store whose current run has not closed is not migrated while its writer may still run", async () => {
  const root = await copyFixture("v4-store");
  const log = join(root, ".bimri/log/R003.md");
  const closed = Deno.readTextFileSync(log);
  Deno.writeTextFileSync(
    log,
    closed.split("\n").filter((l) => !l.startsWith("[CLOSED:")).join("\n"),
  );
  const before = hashTree(root);
  for (const args of [["migrate"], ["install", "--target", root]]) {
    const r = await bimri(root, args);
    assertEquals(r.code, 2, `${args[0]}: ${r.stdout}`);
    assertMatch(
      r.stderr,
      /v4 run R003 appears active; a v4 writer does not participate in the v5 lock\. Stop or close every v4 agent/,
    );
    assertEquals(diffTrees(before, hashTree(root)), null, `${args[0]} wrote nothing`);
  }
  Deno.writeTextFileSync(log, closed);
  const migrated = await bimri(root, ["migrate"]);
  assertEquals(migrated.code, 0, migrated.stderr);
});
