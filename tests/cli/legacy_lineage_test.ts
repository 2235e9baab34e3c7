/**
 * The record of a v1-v3 migration (`.bimri/migrations/legacy-to-v5.json`),
 * the byte-exact copies of the old files it names, V000000 and
 * `state.legacy_migration` must keep claiming each other after the
 * migration, as the reference checks on every load: doctor reports a broken
 * lineage and status refuses. A retried migration proves the whole record a
 * crashed run left before it writes state or retires any old file. A
 * migration the 5.0 converter started (its V000000 in the 5.0 template) is
 * finished with that revision's bytes, for v1-v3 and for v4 memory.
 */
import { join } from "node:path";
import { createHash } from "node:crypto";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, expectRefused, pathExists } from "../helpers/cli.ts";
import { copyFixture, writeFiles } from "../fixtures/fixtures.ts";

const MARKER = ".bimri/migrations/legacy-to-v5.json";

type Json = Record<string, unknown>;

function readJson(root: string, path: string): Json {
  return JSON.parse(Deno.readTextFileSync(join(root, path)));
}

function writeJson(root: string, path: string, value: unknown): void {
  Deno.writeTextFileSync(join(root, path), JSON.stringify(value, null, 2) + "\n");
}

function sha(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function v3Source(claim: string): string {
  return [
    "<!-- BIMRI v3.0 | Last Maintained: 2026-07-20 | Sessions: 1 -->",
    "# BIMRI: Memory File",
    "## Tier 1: Core Intelligence",
    `- ${claim}`,
    "## Tier 2: Active Context",
    "## Tier 3: Pattern Recognition",
    "",
  ].join("\n");
}

/** A v3 fixture (memory and rolling backup) migrated to v5. */
async function migratedV3(): Promise<string> {
  const root = await copyFixture("legacy-v3");
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  return root;
}

function activeAsset(marker: Json): Json {
  return (marker.assets as Json[]).find((a) => a.role === "active memory")!;
}

/**
 * status and plain doctor refuse to open the store without writing (exit 2, as
 * the reference's load does); read-only doctor reports the problem as an error.
 */
async function expectBrokenLineage(root: string, problem: RegExp): Promise<void> {
  await expectRefused(root, ["status"], problem);
  await expectRefused(root, ["doctor"], problem);
  const doctor = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(doctor.code, 1, `${doctor.stdout}${doctor.stderr}`);
  assertMatch(doctor.stdout, /^BIMRI doctor \(read-only\): FAILED$/m);
  assertMatch(doctor.stdout, problem);
}

Deno.test("a migrated store and a record from before converter_version and receipt prove themselves", async () => {
  const root = await migratedV3();
  assertEquals((await bimri(root, ["status"])).code, 0);
  const marker = readJson(root, MARKER);
  delete marker.converter_version;
  delete marker.receipt;
  writeJson(root, MARKER, marker);
  const doctor = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(doctor.code, 0, doctor.stdout);
  assertEquals((await bimri(root, ["status"])).code, 0);
});

Deno.test("a backup path that walks out of .bimri/backups is refused", async () => {
  const root = await migratedV3();
  const marker = readJson(root, MARKER);
  const active = activeAsset(marker);
  const copy = join(root, active.backup_path as string);
  Deno.writeFileSync(join(root, "escape.bin"), Deno.readFileSync(copy));
  Deno.removeSync(copy);
  active.backup_path = ".bimri/backups/../../escape.bin";
  writeJson(root, MARKER, marker);
  await expectBrokenLineage(
    root,
    /legacy migration backup path is not the deterministic direct \.bimri\/backups authority\./,
  );
});

Deno.test("a forged source with consistent hashes is not the conversion V000000 holds", async () => {
  const root = await migratedV3();
  const marker = readJson(root, MARKER);
  const active = activeAsset(marker);
  const forged = new TextEncoder().encode(v3Source("A forged source must not inherit authority."));
  const name = `legacy-${active.source_path}-${sha(forged)}.bin`;
  Deno.writeFileSync(join(root, ".bimri/backups", name), forged);
  Object.assign(active, {
    sha256: sha(forged),
    byte_length: forged.length,
    backup_path: `.bimri/backups/${name}`,
  });
  marker.source_hot_hash = sha(forged);
  writeJson(root, MARKER, marker);
  await expectBrokenLineage(
    root,
    /legacy migration revision is not the deterministic conversion of its preserved active source\./,
  );
});

Deno.test("state and the migration record must claim each other", async () => {
  const missing = await migratedV3();
  Deno.removeSync(join(missing, MARKER));
  await expectBrokenLineage(
    missing,
    /v5 state requires legacy-to-v5\.json, but the durable migration marker is missing\./,
  );

  const unknown = await migratedV3();
  const state = readJson(unknown, ".bimri/state.json");
  state.legacy_migration = "legacy-to-v6";
  writeJson(unknown, ".bimri/state.json", state);
  await expectBrokenLineage(unknown, /state legacy_migration has an unsupported value\./);

  const unclaimed = await migratedV3();
  const plain = readJson(unclaimed, ".bimri/state.json");
  delete plain.legacy_migration;
  writeJson(unclaimed, ".bimri/state.json", plain);
  await expectBrokenLineage(
    unclaimed,
    /legacy-to-v5\.json exists, but v5 state does not claim that migration\./,
  );
});

Deno.test("a deleted or altered byte-exact legacy backup is reported", async () => {
  for (const damage of ["delete", "alter"]) {
    const root = await migratedV3();
    const rolling = (readJson(root, MARKER).assets as Json[])
      .find((a) => a.role === "rolling backup")!;
    const copy = join(root, rolling.backup_path as string);
    if (damage === "delete") Deno.removeSync(copy);
    else Deno.writeTextFileSync(copy, "edited\n", { append: true });
    await expectBrokenLineage(
      root,
      /legacy migration backup is missing or damaged: \.bimri\/backups\/legacy-BIMRI-backup\.md-[0-9a-f]{64}\.bin/,
    );
  }
});

Deno.test("a retried migrate proves the crashed run's record before writing state or retiring sources", async () => {
  const root = await copyFixture("legacy-v3");
  const crashed = await bimri(root, ["migrate"], { env: { BIMRI_FAULT: "legacy-after-marker" } });
  assertEquals(crashed.code, 86, crashed.stderr);
  const marker = readJson(root, MARKER);
  delete marker.completed_at;
  writeJson(root, MARKER, marker);
  await expectRefused(
    root,
    ["migrate"],
    /legacy migration marker has an invalid completion time\. BIMRI wrote no state and retired no legacy source\./,
  );
  assert(pathExists(join(root, "BIMRI.md")) && pathExists(join(root, "BIMRI-backup.md")));
  assert(!pathExists(join(root, ".bimri/state.json")));
});

Deno.test("a migration interrupted before retirement retires nothing while a backup copy is gone", async () => {
  const root = await copyFixture("legacy-v3");
  const crashed = await bimri(root, ["migrate"], { env: { BIMRI_FAULT: "legacy-after-state" } });
  assertEquals(crashed.code, 86, crashed.stderr);
  const rolling = (readJson(root, MARKER).assets as Json[])
    .find((a) => a.role === "rolling backup")!;
  Deno.removeSync(join(root, rolling.backup_path as string));
  const before = Deno.readFileSync(join(root, "BIMRI-backup.md"));
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 2, result.stdout + result.stderr);
  assertMatch(result.stderr, /legacy migration backup is missing or damaged/);
  // The only remaining copy of the rolling backup is not deleted.
  assertEquals(Deno.readFileSync(join(root, "BIMRI-backup.md")), before);
});

/** The V000000 the 5.0 converter made of `v3Source(claim)`: 5.0 template, a blank line before the entry. */
function v50Conversion(claim: string): string {
  return [
    "# BIMRI Memory",
    "",
    "<!-- BIMRI v5 | Generated view. Do not edit directly. -->",
    "<!-- Full history: .bimri/log/ | Revisions: .bimri/revisions/ -->",
    "",
    "## Tier 1: Core Intelligence",
    "",
    "<!-- Confirmed facts, decisions, preferences and rules. Cap: 12. -->",
    "",
    `[R0-E1] [K:legacy.v3.t1-0001] [fact] [T:working] [SRC:legacy] [] ${claim}`,
    "",
    "## Tier 2: Active Context",
    "",
    "<!-- Current work, risks and next actions. Cap: 20. -->",
    "",
    "## Tier 3: Pattern Recognition",
    "",
    "<!-- Evidence-backed patterns. Cap: 8. -->",
    "",
    "<!-- END BIMRI -->",
    "",
  ].join("\n");
}

Deno.test("migrate finishes a v1-v3 migration the 5.0 converter started, keeping its V000000", async () => {
  const claim = "Resume the historical converter without rewriting its revision.";
  const historical = v50Conversion(claim);
  const root = await writeFiles({
    "BIMRI.md": v3Source(claim),
    ".bimri/revisions/V000000.md": historical,
  });
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertMatch(result.stdout, /^Memory: migrated BIMRI v3 from BIMRI\.md to v5\.1\.0\.$/m);
  assertMatch(result.stdout, /^Memory metadata normalized in immutable revision V000001\.md\.$/m);
  assertEquals(Deno.readTextFileSync(join(root, ".bimri/revisions/V000000.md")), historical);
  assertEquals(readJson(root, MARKER).converter_version, "5.0");
  const state = readJson(root, ".bimri/state.json");
  assertEquals(state.head_revision, 1);
  assertEquals(state.legacy_migration, "legacy-to-v5");
  const head = Deno.readTextFileSync(join(root, ".bimri/revisions/V000001.md"));
  assertEquals(Deno.readTextFileSync(join(root, "bimri.md")), head);
  assertEquals(
    head,
    historical.replace("BIMRI v5 |", "BIMRI v5.0.2 |").replace(
      /Cap: \d+\./g,
      "Capacity: state.json.",
    ),
  );
  // The old name is retired (on a case-insensitive disk it is the view itself).
  assert(
    !pathExists(join(root, "BIMRI.md")) ||
      Deno.statSync(join(root, "BIMRI.md")).ino === Deno.statSync(join(root, "bimri.md")).ino,
  );
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout);
  const again = await bimri(root, ["migrate"]);
  assertMatch(again.stdout, /no migration performed/);
  assert(!pathExists(join(root, ".bimri/revisions/V000002.md")));
});

Deno.test("v4 migrate keeps a V000000 the 5.0 converter wrote and normalizes the head", async () => {
  const claim = "Preserve the historical v4 conversion exactly.";
  const source = [
    "# BIMRI Memory",
    "",
    "<!-- BIMRI v4 | Generated view. Do not edit directly. -->",
    "<!-- Engine: legacy -->",
    "",
    "## Tier 1: Core Intelligence",
    "",
    "<!-- Confirmed facts, decisions, preferences and rules. Cap: 12. -->",
    "",
    `[R1-E1] [fact] [legacy] ${claim}`,
    "",
    "## Tier 2: Active Context",
    "",
    "<!-- Current work, risks and next actions. Cap: 20. -->",
    "",
    "## Tier 3: Pattern Recognition",
    "",
    "<!-- Evidence-backed patterns. Cap: 8. -->",
    "",
    "<!-- END BIMRI -->",
    "",
  ].join("\n");
  const historical = source
    .replace("BIMRI v4 |", "BIMRI v5 |")
    .replace(
      "<!-- Engine: legacy -->",
      "<!-- Full history: .bimri/log/ | Revisions: .bimri/revisions/ -->",
    )
    .replace(
      `[R1-E1] [fact] [legacy]`,
      `[R1-E1] [K:legacy.r1-e1] [fact] [T:working] [SRC:legacy] [legacy]`,
    );
  const root = await writeFiles({
    "bimri.md": source,
    ".bimri/state.json": JSON.stringify({
      bimri_version: "4.0",
      project_id: "historical-v4",
      run_count: 1,
      current_run_id: "R000",
    }),
    ".bimri/revisions/V000000.md": historical,
  });
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertMatch(result.stdout, /^Memory metadata normalized in immutable revision V000001\.md\.$/m);
  assertEquals(Deno.readTextFileSync(join(root, ".bimri/revisions/V000000.md")), historical);
  const head = Deno.readTextFileSync(join(root, ".bimri/revisions/V000001.md"));
  assertEquals(Deno.readTextFileSync(join(root, "bimri.md")), head);
  assertMatch(head, /BIMRI v5\.0\.2/);
  assertEquals(head.split(claim).length, 2);
  assertEquals(readJson(root, ".bimri/state.json").head_revision, 1);
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout);
});
