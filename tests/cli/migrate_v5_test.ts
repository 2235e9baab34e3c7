import { createHash } from "node:crypto";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  diffTrees,
  hashTree,
  pathExists,
  proposeTier2,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { copyFixture } from "../fixtures/fixtures.ts";

const HEADLINE =
  "BIMRI: migration/initialization complete at memory format v5.1.0 (engine v5.1.2).";

function read(root: string, path: string): string {
  return Deno.readTextFileSync(join(root, path));
}

function withoutPaths(tree: Map<string, string>, prefixes: string[]): Map<string, string> {
  return new Map([...tree].filter(([k]) => !prefixes.some((p) => k.startsWith(p))));
}

Deno.test("migrate on an empty folder initializes, then verifies with the reference's exact text", async () => {
  const root = await tempStore();
  const first = await bimri(root, ["migrate"]);
  assertEquals(first.code, 0, first.stderr);
  assertEquals(first.stdout.split("\n")[0], HEADLINE);
  assertMatch(first.stdout, /^Validation: PASSED\.$/m);
  assert(Deno.statSync(join(root, ".bimri/revisions/V000000.md")).isFile);
  const before = hashTree(root);
  const second = await bimri(root, ["migrate"]);
  assertEquals(
    second.stdout,
    `${HEADLINE}\nMemory: existing v5.1.0 verified; no migration performed.\nValidation: PASSED.\n`,
  );
  assertEquals(diffTrees(before, hashTree(root)), null);
  const json = JSON.parse((await bimri(root, ["--json", "migrate"])).stdout);
  assertEquals(json.mode, "verified");
  assertEquals(json.validation, "PASSED");
});

const V502 = "reference-v5.0.2-populated";

/** The path the state upgrade keeps the exact old state at (content-addressed, as the reference names it). */
function upgradeBackup(oldState: Uint8Array): string {
  return `.bimri/backups/state-v5.0.2-${createHash("sha256").update(oldState).digest("hex")}.json`;
}

function manualEditRecoveries(root: string): string[] {
  return [...Deno.readDirSync(join(root, ".bimri/recovery"))].map((e) => e.name)
    .filter((n) => n.startsWith("manual-hot-"));
}

/** The receipt's memory lines the reference prints for the fixture's 5.0.2 state (its view metadata is current). */
function upgradedLines(backup: string): string {
  return [
    "Memory: upgraded v5.0.2 to v5.1.0; custom limits preserved (T1/T2/T3 17/43/13, entry 500 chars, 50,000 bytes).",
    "Previous limits: T1/T2/T3 17/43/13, entry 500 chars, 50,000 bytes.",
    `State backup: ${backup}.`,
  ].join("\n");
}

Deno.test("v5.0.2 migrate takes the reference's state upgrade: exact backup in .bimri/backups, no update transaction", async () => {
  const root = await copyFixture(V502);
  // An owner's symlink among unknown files must be preserved, never followed. Its
  // target is relative with native separators and need not exist, so it is typed.
  Deno.symlinkSync(join("..", "unknown-owner-file.txt"), join(root, ".bimri/inbox/owner-link"), {
    type: "file",
  });
  const oldState = Deno.readFileSync(join(root, ".bimri/state.json"));
  const backup = upgradeBackup(oldState);
  const before = hashTree(root);

  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertEquals(
    result.stdout.split("\n").slice(0, 5).join("\n"),
    `${HEADLINE}\n${upgradedLines(backup)}\nValidation: PASSED.`,
  );
  // The installer's code-only transaction is not this command's business.
  assert(!pathExists(join(root, ".bimri-update-backups")), "no .bimri-update-backups");
  assertEquals(Deno.readFileSync(join(root, backup)), oldState);
  // Memory is untouched: view, every revision (no metadata revision: the
  // head's v5.0.2 header and comments are current), logs, records, unknown
  // files and the owner's symlink. Only state, the derived index and audit
  // caches, the lock and the new backup differ.
  const changed = [
    ".bimri/state.json",
    ".bimri/engine.lock",
    ".bimri/index.tsv",
    ".bimri/audit-",
    backup,
  ];
  assertEquals(
    diffTrees(withoutPaths(before, changed), withoutPaths(hashTree(root), changed)),
    null,
  );

  const state = JSON.parse(read(root, ".bimri/state.json"));
  const old = JSON.parse(new TextDecoder().decode(oldState));
  assertEquals(state.bimri_version, "5.1.0");
  assertEquals(state.cold_current, {});
  for (const [k, v] of Object.entries(old)) {
    if (k !== "bimri_version") assertEquals(state[k], v, k);
  }
  assertEquals(Object.keys(state).sort(), [...Object.keys(old), "cold_current"].sort());

  // The upgraded store verifies, passes doctor and keeps working.
  const again = await bimri(root, ["migrate"]);
  assertMatch(again.stdout, /^Memory: existing v5\.1\.0 verified; no migration performed\.$/m);
  const doctor = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(doctor.code, 0, doctor.stdout);
  const run = await startRun(root);
  assertEquals(run, "R000012");
  const journal = await bimri(root, ["journal", "--run", run, "--text", "After the upgrade."]);
  assertEquals(journal.code, 0, journal.stderr);
  const propose = await bimri(
    root,
    proposeTier2(run, "fixture.subject", "Updated after the upgrade."),
  );
  assertEquals(propose.code, 0, propose.stderr);
  const sync = await bimri(root, ["sync", "--run", run]);
  assertEquals(sync.code, 0, sync.stderr);
  assertMatch(sync.stdout, /applied 1/);
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});

Deno.test("v5.0.2 migrate heals a hand-edited bimri.md: the edit is kept as a manual-edit conflict, exit 0", async () => {
  const root = await copyFixture(V502);
  const head = read(root, ".bimri/revisions/V000008.md");
  const edited = read(root, "bimri.md") + "junk line\n";
  Deno.writeTextFileSync(join(root, "bimri.md"), edited);
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertMatch(result.stdout, /^Memory: upgraded v5\.0\.2 to v5\.1\.0; /m);
  assertMatch(result.stdout, /^Validation: PASSED\.$/m);
  // The owner's notice goes to stderr, as every command (and the reference's migrate) prints it.
  assertMatch(result.stderr, /^BIMRI NOTICE: a direct edit to bimri\.md was preserved.*C000003/m);
  assert(!result.stdout.includes("direct edit"), result.stdout);
  assertEquals(JSON.parse(read(root, ".bimri/state.json")).bimri_version, "5.1.0");
  // The view is the accepted head again; the edit's exact bytes are kept.
  assertEquals(read(root, "bimri.md"), head);
  const recoveries = manualEditRecoveries(root);
  assertEquals(recoveries.length, 1);
  assertEquals(read(root, `.bimri/recovery/${recoveries[0]}`), edited);
  const conflict = JSON.parse(read(root, ".bimri/conflicts/C000003.json"));
  assertEquals(conflict.type, "manual-edit");
  assertEquals(conflict.extra.recovery_file, `.bimri/recovery/${recoveries[0]}`);
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});

Deno.test("v5.0.2 upgrade refuses damaged core authority with nothing written", async () => {
  const root = await copyFixture(V502);
  Deno.writeTextFileSync(join(root, ".bimri/revisions/V000008.md"), "tampered\n");
  const before = hashTree(root);
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 2);
  assertMatch(result.stderr, /head_hash does not match/);
  const after = withoutPaths(hashTree(root), [".bimri/engine.lock"]);
  assertEquals(diffTrees(before, after), null);
});

Deno.test("v5.0.2 upgrade with a damaged governance record commits, then fails validation", async () => {
  const root = await copyFixture(V502);
  const oldState = Deno.readFileSync(join(root, ".bimri/state.json"));
  Deno.writeTextFileSync(join(root, ".bimri/conflicts/C000001.json"), "{broken");
  const result = await bimri(root, ["migrate"]);
  // As the reference: the upgrade stands, the command reports the failed audit (exit 2).
  assertEquals(result.code, 2);
  assertMatch(result.stderr, /^BIMRI ERROR: migration validation failed: .*C000001/);
  assertEquals(JSON.parse(read(root, ".bimri/state.json")).bimri_version, "5.1.0");
  assertEquals(Deno.readFileSync(join(root, upgradeBackup(oldState))), oldState);
  assertEquals(read(root, ".bimri/conflicts/C000001.json"), "{broken");
  assert(!pathExists(join(root, ".bimri-update-backups")), "no .bimri-update-backups");
});

Deno.test("a v5.0.2 upgrade interrupted after its backup reruns idempotently", async () => {
  const root = await copyFixture(V502);
  const oldState = Deno.readFileSync(join(root, ".bimri/state.json"));
  const backup = upgradeBackup(oldState);
  const crashed = await bimri(root, ["migrate"], { env: { BIMRI_FAULT: "upgrade-after-backup" } });
  assertEquals(crashed.code, 86, crashed.stdout + crashed.stderr);
  assertEquals(Deno.readFileSync(join(root, ".bimri/state.json")), oldState);
  assertEquals(Deno.readFileSync(join(root, backup)), oldState);
  const resumed = await bimri(root, ["migrate"]);
  assertEquals(resumed.code, 0, resumed.stdout + resumed.stderr);
  assertMatch(
    resumed.stdout,
    new RegExp(`^State backup: ${backup.replaceAll(".", "\\.")}\\.$`, "m"),
  );
  assertEquals(
    [...Deno.readDirSync(join(root, ".bimri/backups"))].map((e) => e.name).sort(),
    ["fixture-evidence.txt", backup.slice(".bimri/backups/".length)],
    "the backup is reused, not duplicated",
  );
  assertEquals(JSON.parse(read(root, ".bimri/state.json")).bimri_version, "5.1.0");
  assert(!pathExists(join(root, ".bimri-update-backups")), "no .bimri-update-backups");
});

Deno.test("a v5.0.2 upgrade interrupted before its view sync loses no edit: the next migrate preserves it", async () => {
  const root = await copyFixture(V502);
  const head = read(root, ".bimri/revisions/V000008.md");
  const edited = read(root, "bimri.md") + "junk line\n";
  Deno.writeTextFileSync(join(root, "bimri.md"), edited);
  const crashed = await bimri(root, ["migrate"], {
    env: { BIMRI_FAULT: "upgrade-before-view-sync" },
  });
  assertEquals(crashed.code, 86, crashed.stdout + crashed.stderr);
  assertEquals(JSON.parse(read(root, ".bimri/state.json")).bimri_version, "5.1.0");
  assertEquals(read(root, "bimri.md"), edited);
  const next = await bimri(root, ["migrate"]);
  assertEquals(next.code, 0, next.stdout + next.stderr);
  assertEquals(read(root, "bimri.md"), head);
  const recoveries = manualEditRecoveries(root);
  assertEquals(recoveries.length, 1);
  assertEquals(read(root, `.bimri/recovery/${recoveries[0]}`), edited);
});

Deno.test("an installer activation interrupted after its backup is superseded by migrate's upgrade", async () => {
  const root = await copyFixture(V502);
  const crashed = await bimri(root, ["install", "--target", root, "--quiescent"], {
    noRoot: true,
    env: { BIMRI_FAULT: "activate-after-backup" },
  });
  assertEquals(crashed.code, 86, crashed.stdout + crashed.stderr);
  const [transaction] = [...Deno.readDirSync(join(root, ".bimri-update-backups"))];
  const receiptPath = `.bimri-update-backups/${transaction.name}/activation-receipt.json`;
  assertEquals(JSON.parse(read(root, receiptPath)).status, "prepared");
  // migrate upgrades the still-5.0.2 state its own way ...
  const upgraded = await bimri(root, ["migrate"]);
  assertEquals(upgraded.code, 0, upgraded.stdout + upgraded.stderr);
  assertMatch(upgraded.stdout, /^Memory: upgraded v5\.0\.2 to v5\.1\.0; /m);
  // ... and the abandoned transaction is retired, not left to fail every later migrate.
  const again = await bimri(root, ["migrate"]);
  assertEquals(again.code, 0, again.stdout + again.stderr);
  assertMatch(again.stdout, /^Memory: existing v5\.1\.0 verified; no migration performed\.$/m);
  const receipt = JSON.parse(read(root, receiptPath));
  assertEquals(receipt.status, "superseded");
  assertMatch(receipt.note, /\.bimri\/backups\/state-v5\.0\.2-[0-9a-f]{64}\.json/);
});

Deno.test("an installer activation interrupted after its state write is finished by the next migrate", async () => {
  const root = await copyFixture(V502);
  const keep = (tree: Map<string, string>) =>
    withoutPaths(
      new Map([...tree].filter(([p]) => p === "bimri.md" || p.startsWith(".bimri/"))),
      [".bimri/state.json", ".bimri/engine.lock", ".bimri/install-backups", ".bimri/hooks."],
    );
  const before = keep(hashTree(root));
  const crashed = await bimri(root, ["install", "--target", root, "--quiescent"], {
    noRoot: true,
    env: { BIMRI_FAULT: "activate-after-state" },
  });
  assertEquals(crashed.code, 86, crashed.stdout + crashed.stderr);
  const resumed = await bimri(root, ["migrate"]);
  assertEquals(resumed.code, 0, resumed.stdout + resumed.stderr);
  assertMatch(resumed.stdout, /Authority store activated from v5\.0\.2/);
  const transactions = [...Deno.readDirSync(join(root, ".bimri-update-backups"))];
  assertEquals(transactions.length, 1);
  const receipt = JSON.parse(
    read(root, `.bimri-update-backups/${transactions[0].name}/activation-receipt.json`),
  );
  assertEquals(receipt.status, "activated");
  assertEquals(diffTrees(before, keep(hashTree(root))), null);
});

Deno.test("a caught installer activation failure restores the old state; migrate then upgrades it", async () => {
  const root = await copyFixture(V502);
  const oldState = Deno.readFileSync(join(root, ".bimri/state.json"));
  const failed = await bimri(root, ["install", "--target", root, "--quiescent"], {
    noRoot: true,
    env: { BIMRI_FAULT: "activate-error-after-state" },
  });
  assertEquals(failed.code, 2);
  assertMatch(failed.stderr, /old state was restored/);
  assertEquals(Deno.readFileSync(join(root, ".bimri/state.json")), oldState);
  const [first] = [...Deno.readDirSync(join(root, ".bimri-update-backups"))];
  const receipt = JSON.parse(
    read(root, `.bimri-update-backups/${first.name}/activation-receipt.json`),
  );
  assertEquals(receipt.status, "rolled-back");
  const retry = await bimri(root, ["migrate"]);
  assertEquals(retry.code, 0, retry.stdout + retry.stderr);
  assertMatch(retry.stdout, /^Memory: upgraded v5\.0\.2 to v5\.1\.0; /m);
  assertEquals(Deno.readFileSync(join(root, upgradeBackup(oldState))), oldState);
  assertEquals(JSON.parse(read(root, ".bimri/state.json")).bimri_version, "5.1.0");
});

Deno.test("v5.0 stock profile expands; metadata-only revision; exact state backup", async () => {
  const root = await copyFixture("v5.0-stock");
  const oldState = Deno.readFileSync(join(root, ".bimri/state.json"));
  const oldHead = read(root, ".bimri/revisions/V000002.md");
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertMatch(
    result.stdout,
    /^Memory: upgraded v5\.0 to v5\.1\.0; stock limits expanded \(T1\/T2\/T3 20\/40\/12, entry 500 chars, 49,152 bytes\)\.\nPrevious limits: T1\/T2\/T3 12\/20\/8, entry 500 chars, 16,384 bytes\.\nState backup: \.bimri\/backups\/state-v5\.0-[0-9a-f]{64}\.json\.$/m,
  );
  assertMatch(result.stdout, /^Memory metadata normalized in immutable revision V000003\.md\.$/m);
  const state = JSON.parse(read(root, ".bimri/state.json"));
  assertEquals(
    [state.tier1_max, state.tier2_max, state.tier3_max, state.hot_max_bytes],
    [20, 40, 12, 49152],
  );
  assertEquals(state.head_revision, 3);
  assertEquals(state.last_revision_reason, "v5.1.0 metadata normalization");
  assertEquals(read(root, ".bimri/revisions/V000002.md"), oldHead);
  const next = read(root, ".bimri/revisions/V000003.md");
  assertEquals(next, read(root, "bimri.md"));
  assertMatch(next, /<!-- BIMRI v5\.0\.2 \| Generated view\. Do not edit directly\. -->/);
  assertMatch(next, /Capacity: state\.json\./);
  const entries = (t: string) => t.split("\n").filter((l) => l.startsWith("["));
  assertEquals(entries(next), entries(oldHead));
  const backups = [...Deno.readDirSync(join(root, ".bimri/backups"))].map((e) => e.name);
  assertEquals(backups.length, 1);
  assertMatch(backups[0], /^state-v5\.0-[0-9a-f]{64}\.json$/);
  assertEquals(Deno.readFileSync(join(root, ".bimri/backups", backups[0])), oldState);
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});

Deno.test("v5.0.1 custom profile is kept; interrupted upgrade reruns idempotently", async () => {
  const root = await copyFixture("v5.0.1-custom");
  const crashed = await bimri(root, ["migrate"], {
    env: { BIMRI_FAULT: "upgrade-after-revision" },
  });
  assertEquals(crashed.code, 86);
  assertEquals(JSON.parse(read(root, ".bimri/state.json")).bimri_version, "5.0.1");
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertMatch(
    result.stdout,
    /^Memory: upgraded v5\.0\.1 to v5\.1\.0; limits preserved \(T1\/T2\/T3 15\/30\/10, entry 400 chars, 20,000 bytes\)\.$/m,
  );
  const state = JSON.parse(read(root, ".bimri/state.json"));
  assertEquals([state.tier1_max, state.entry_max_chars, state.hot_max_bytes], [15, 400, 20000]);
  assertEquals(state.head_revision, 3);
  assertEquals([...Deno.readDirSync(join(root, ".bimri/revisions"))].length, 4);
  assertEquals([...Deno.readDirSync(join(root, ".bimri/backups"))].length, 1);
});

Deno.test("v5.0 upgrade preserves an edited bimri.md through manual-edit recovery", async () => {
  const root = await copyFixture("v5.0-stock");
  const edited = read(root, "bimri.md") + "owner note\n";
  Deno.writeTextFileSync(join(root, "bimri.md"), edited);
  const result = await bimri(root, ["migrate"]);
  assertEquals(read(root, "bimri.md"), read(root, ".bimri/revisions/V000003.md"));
  const recovery = [...Deno.readDirSync(join(root, ".bimri/recovery"))].map((e) => e.name);
  assert(recovery.some((n) => n.startsWith("manual-hot-")), result.stdout + result.stderr);
});

Deno.test("migrate refuses a store folder linked out of the project before writing anything", async () => {
  for (const folder of [".bimri/backups", ".bimri/revisions"]) {
    const root = await copyFixture("v5.0.1-custom");
    const outside = await tempStore("bimri-outside-");
    const path = join(root, folder);
    if (pathExists(path)) {
      for (const entry of Deno.readDirSync(path)) {
        Deno.copyFileSync(join(path, entry.name), join(outside, entry.name));
      }
      Deno.removeSync(path, { recursive: true });
    }
    Deno.symlinkSync(outside, path, { type: "dir" });
    const before = hashTree(root);
    const outsideBefore = hashTree(outside);
    const r = await bimri(root, ["migrate"]);
    assertEquals(r.code, 2, `${folder}: ${r.stdout}`);
    assertMatch(
      r.stderr,
      new RegExp(`^BIMRI ERROR: ${folder.replace(".", "\\.")} cannot be a symbolic link`),
    );
    assertEquals(diffTrees(before, hashTree(root)), null, folder);
    assertEquals(
      diffTrees(outsideBefore, hashTree(outside)),
      null,
      `${folder}: wrote through the link`,
    );
  }
});
