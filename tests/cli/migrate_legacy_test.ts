import { join } from "node:path";
import { createHash } from "node:crypto";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, pathExists, proposeTier2, startRun } from "../helpers/cli.ts";
import { copyFixture, fixturePath, writeFiles } from "../fixtures/fixtures.ts";

function read(root: string, path: string): string {
  return Deno.readTextFileSync(join(root, path));
}

function sha(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

const V3_SOURCE = Deno.readTextFileSync(join(fixturePath("legacy-v3"), "BIMRI.md"));

Deno.test("v3 memory with its rolling backup migrates losslessly and reports overflow", async () => {
  const root = await copyFixture("legacy-v3");
  const source = Deno.readFileSync(join(root, "BIMRI.md"));
  const backup = Deno.readFileSync(join(root, "BIMRI-backup.md"));
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertMatch(result.stdout, /^Memory: migrated BIMRI v3 from BIMRI\.md to v5\.1\.0\.$/m);
  assertMatch(
    result.stdout,
    /^Imported: Tier 1 3; Tier 2 3; Tier 3 0; total 6; converted patterns 1; inherited overlength 1\.$/m,
  );
  assertMatch(
    result.stdout,
    /^Byte-exact backups: \.bimri\/backups\/legacy-BIMRI\.md-[0-9a-f]{64}\.bin, \.bimri\/backups\/legacy-BIMRI-backup\.md-[0-9a-f]{64}\.bin\.$/m,
  );
  assertMatch(result.stdout, /^Migration record: \.bimri\/migrations\/legacy-to-v5\.json\.$/m);
  assertMatch(result.stdout, /^Validation: PASSED\.$/m);

  // Exact source bytes preserved under content-addressed names; old names retired.
  const sourceCopy = `.bimri/backups/legacy-BIMRI.md-${sha(source)}.bin`;
  const backupCopy = `.bimri/backups/legacy-BIMRI-backup.md-${sha(backup)}.bin`;
  assertEquals(Deno.readFileSync(join(root, sourceCopy)), source);
  assertEquals(Deno.readFileSync(join(root, backupCopy)), backup);
  assert(
    !pathExists(join(root, "BIMRI.md")) || Deno.statSync(join(root, "BIMRI.md")).ino ===
        Deno.statSync(join(root, "bimri.md")).ino,
  );
  assert(!pathExists(join(root, "BIMRI-backup.md")));

  const view = read(root, "bimri.md");
  assertEquals(view, read(root, ".bimri/revisions/V000000.md"));
  const lines = view.split("\n").filter((l) => l.startsWith("["));
  assertEquals(
    lines[0],
    "[R0-E1] [K:legacy.v3.t1-0001] [fact] [T:working] [SRC:legacy] [] Workspace builds the Acme checkout service.",
  );
  assertEquals(
    lines[3],
    "[R0-E4] [K:legacy.v3.t2-20260501-01] [I:4] [active] [T:working] [SRC:legacy] [F:R0] [L:R0] [checkout,retry] Retry logic for payment webhooks is half done; finish the backoff.",
  );
  assertEquals(
    lines[5],
    "[R0-E6] [K:legacy.v3.pattern-0001] [I:3] [watch] [T:working] [SRC:legacy] [F:R0] [L:R0] [workflow] The owner simplifies architecture before adding features.",
  );
  // The over-long inherited claim is kept whole.
  const longClaim = V3_SOURCE.split("\n").find((l) => l.startsWith("Inherited long claim"))!;
  assert(longClaim.length > 500);
  assert(lines[2].endsWith(` ${longClaim}`));

  const record = JSON.parse(read(root, ".bimri/migrations/legacy-to-v5.json"));
  assertEquals(record.migration, "legacy-to-v5");
  assertEquals(record.source_version, 3);
  assertEquals(record.source_hot_hash, sha(source));
  assertEquals(
    record.revision_sha256,
    sha(Deno.readFileSync(join(root, ".bimri/revisions/V000000.md"))),
  );
  assertEquals(record.assets.map((a: { backup_path: string }) => a.backup_path), [
    sourceCopy,
    backupCopy,
  ]);
  assertEquals(record.assets[0].byte_length, source.length);
  assertEquals(record.id_map.length, 6);
  assertEquals(record.receipt.inherited_overlength_claims, 1);
  const state = JSON.parse(read(root, ".bimri/state.json"));
  assertEquals(state.run_count, 14);
  assertEquals(state.legacy_migration, "legacy-to-v5");

  // Idempotent: a second migrate only verifies.
  const before = hashTree(root);
  const again = await bimri(root, ["migrate"]);
  assertMatch(again.stdout, /existing v5\.1\.0 verified; no migration performed/);
  assertEquals(diffTrees(before, hashTree(root)), null);
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);

  // The migrated store continues: runs are numbered after the old session count.
  const run = await startRun(root);
  assertEquals(run, "R000015");
  const propose = await bimri(
    root,
    proposeTier2(run, "legacy.v3.t2-20260502-01", "README install section drafted."),
  );
  if (/unknown (command|verb)/i.test(propose.stderr)) return; // propose not built yet
  assertEquals(propose.code, 0, propose.stderr);
  const sync = await bimri(root, ["sync", "--run", run]);
  assertEquals(sync.code, 0, sync.stderr);
  assertMatch(
    read(root, "bimri.md"),
    /\[K:legacy\.v3\.t2-20260502-01\].*README install section drafted\./,
  );
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});

Deno.test("v1 (lowercase) and v2 (uppercase) sources migrate with their counts", async () => {
  const v1 = await copyFixture("legacy-v1");
  const r1 = await bimri(v1, ["migrate"]);
  assertEquals(r1.code, 0, r1.stdout + r1.stderr);
  assertMatch(r1.stdout, /Memory: migrated BIMRI v1 from bimri\.md to v5\.1\.0\./);
  assertMatch(
    r1.stdout,
    /Imported: Tier 1 1; Tier 2 2; Tier 3 0; total 3; converted patterns 1; inherited overlength 0\./,
  );
  assertMatch(
    read(v1, "bimri.md"),
    /\[K:legacy\.v1\.t1-0001\] \[fact\].* Project: a static site for the bakery\.$/m,
  );
  assertEquals(JSON.parse(read(v1, ".bimri/state.json")).run_count, 3);
  const v2 = await copyFixture("legacy-v2");
  const r2 = await bimri(v2, ["migrate"]);
  assertEquals(r2.code, 0, r2.stdout + r2.stderr);
  assertMatch(
    r2.stdout,
    /Imported: Tier 1 1; Tier 2 1; Tier 3 0; total 2; converted patterns 0; inherited overlength 0\./,
  );
  assertMatch(read(v2, "bimri.md"), /\[K:legacy\.v2\.t2-legacy-0001\] \[I:2\] \[active\]/);
});

const HEADER = "<!-- BIMRI v3.0 | Sessions: 2 -->\n\n";
const TIERS = (t1: string, t2: string, t3 = "") =>
  `${HEADER}## Tier 1: Core Intelligence\n${t1}\n## Tier 2: Active Context\n${t2}\n## Tier 3: Pattern Recognition\n${t3}`;
const META =
  "[ID:T2-20260101-01] [IMP:3] [CREATED:2026-01-01] [SESSION:1] [LAST_USED:2026-01-01] [LAST_USED_SESSION:1] [TAGS:a] [W:3.0]";

const REFUSALS: Array<[string, Record<string, string>, RegExp]> = [
  [
    "differing upper/lowercase sources",
    { "BIMRI.md": TIERS("- one\n", ""), "bimri.md": TIERS("- two\n", "") },
    /case variants/,
  ],
  [
    "a backup whose case does not match the source",
    { "BIMRI.md": TIERS("- one\n", ""), "bimri-backup.md": TIERS("- one\n", "") },
    /backup provenance is ambiguous/,
  ],
  [
    "a rolling backup without active memory",
    { "BIMRI-backup.md": TIERS("- one\n", "") },
    /without active memory/,
  ],
  [
    "a Tier 2 claim without metadata",
    { "BIMRI.md": TIERS("- one\n", "Loose line.\n") },
    /Tier 2 metadata/,
  ],
  [
    "metadata without its claim",
    { "BIMRI.md": TIERS("- one\n", `${META}\n`) },
    /no following memory claim/,
  ],
  [
    "two version headers",
    { "BIMRI.md": HEADER + TIERS("- one\n", "") },
    /exactly one BIMRI v1, v2, or v3 header/,
  ],
  [
    "a missing tier heading",
    { "BIMRI.md": `${HEADER}## Tier 1: Core Intelligence\n- one\n` },
    /ordered Tier 1/,
  ],
  [
    "a claim using the pointer delimiter",
    { "BIMRI.md": TIERS("- see -> docs\n", "") },
    /pointer delimiter/,
  ],
  [
    "a claim too long to keep losslessly",
    { "BIMRI.md": TIERS(`- ${"y".repeat(4090)}\n`, "") },
    /4096|cannot be kept/,
  ],
  [
    "unrelated history without state",
    { "BIMRI.md": TIERS("- one\n", ""), ".bimri/log/R000001.md": "# Run R000001\n" },
    /unrelated BIMRI history/,
  ],
];

for (const [name, files, message] of REFUSALS) {
  Deno.test(`legacy migration refuses ${name} with nothing written`, async () => {
    const root = await writeFiles(files);
    const before = hashTree(root);
    const result = await bimri(root, ["migrate"]);
    assertEquals(result.code, 2, result.stdout + result.stderr);
    assertMatch(result.stderr, /^BIMRI ERROR: /);
    assertMatch(result.stderr, message);
    assertEquals(diffTrees(before, hashTree(root)), null);
  });
}

for (const point of ["legacy-after-backups", "legacy-after-marker", "legacy-after-state"]) {
  Deno.test(`a legacy migration interrupted at ${point} completes on retry`, async () => {
    const root = await copyFixture("legacy-v3");
    const crashed = await bimri(root, ["migrate"], { env: { BIMRI_FAULT: point } });
    assertEquals(crashed.code, 86);
    const result = await bimri(root, ["migrate"]);
    assertEquals(result.code, 0, result.stdout + result.stderr);
    assertMatch(result.stdout, /Validation: PASSED\./);
    assertEquals(read(root, "bimri.md"), read(root, ".bimri/revisions/V000000.md"));
    assertEquals([...Deno.readDirSync(join(root, ".bimri/backups"))].length, 2);
    assert(!pathExists(join(root, "BIMRI-backup.md")));
  });
}

Deno.test("a current store next to an unclaimed legacy file is refused with nothing written", async () => {
  const root = await writeFiles({});
  assertEquals((await bimri(root, ["migrate"])).code, 0);
  Deno.writeTextFileSync(join(root, "BIMRI-backup.md"), TIERS("- stray\n", ""));
  const before = hashTree(root);
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 2);
  assertMatch(result.stderr, /unclaimed legacy root file\(s\): BIMRI-backup\.md/);
  assertEquals(diffTrees(before, hashTree(root)), null);
});

Deno.test("a command that would create a store refuses beside older memory and changes nothing; migrate imports it", async () => {
  for (const name of ["legacy-v3", "legacy-v1"]) {
    const root = await copyFixture(name);
    const before = hashTree(root);
    for (const args of [["start", "--actor", "codex"], ["status"], ["doctor"]]) {
      const r = await bimri(root, args);
      assertEquals(r.code, 2, `${name} ${args[0]}: ${r.stdout}`);
      assertMatch(r.stderr, /older BIMRI memory|not a BIMRI v5 view/);
      assertMatch(r.stderr, /bimri migrate/);
      assertEquals(diffTrees(before, hashTree(root)), null, `${name} ${args[0]} wrote nothing`);
    }
    const migrated = await bimri(root, ["migrate"]);
    assertEquals(migrated.code, 0, migrated.stderr);
    const started = await bimri(root, ["start", "--actor", "codex"]);
    assertEquals(started.code, 0, started.stderr);
  }
});
