/**
 * Format facts the reference engine (v5.1.2) checks when it meets a store that
 * bimri wrote. Each was found by running the reference against bimri stores:
 * its installer re-validates every `.bimri-update-backups/<stamp>` receipt,
 * and its quarantine accepts any record its full validation rejects.
 */
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  diffTrees,
  hashTree,
  newSubject,
  pathExists,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { copyFixture } from "../fixtures/fixtures.ts";

/** The program paths a reference update receipt must name, exactly. */
const REFERENCE_RECEIPT_TARGETS = [
  "bimri-engine.py",
  "BIMRI-PROTOCOL.md",
  "BIMRI-MEMORY.template.md",
  "BIMRI-STATE.template.json",
  "BIMRI-AGENT-BLOCK.md",
  "INSTALL.md",
  "MIGRATION.md",
  "hooks-example.json",
  "legacy/README.md",
  "legacy/v1/BIMRI-global-instructions.md",
  "legacy/v3/BIMRI-global-instructions.md",
  "legacy/v3/BIMRI-global-instructions-v3.md",
  "legacy/v3/README.md",
  "BIMRI-LICENSE",
  "AGENTS.md",
  "CLAUDE.md",
  ".bimri/runtime.local.json",
  ".bimri/hooks.claude.local.json",
];

/** Python `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)`. */
function pythonCompactJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v !== null && typeof v === "object") {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(Object.keys(o).sort().map((k) => [k, sort(o[k])]));
    }
    return v;
  };
  return JSON.stringify(sort(value)).replace(
    /[\u0080-\uffff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function sha256(text: string): Promise<string> {
  return sha256Bytes(new TextEncoder().encode(text));
}

async function sha256Bytes(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Keys the reference requires of every completed update receipt. */
const REFERENCE_PREPARED_FIELDS = [
  "engine_release",
  "memory_format",
  "mode",
  "created_at",
  "target",
  "status",
  "records",
  "directories",
  "protected_path_count",
  "before_tree_digest",
  "before_bimri_md_sha256",
  "before_state_sha256",
  "accepted_head_revision_before",
  "accepted_head_hash_before",
  "protected_manifest_before",
];

/**
 * The checks the reference installer (5.1.2) applies to a completed receipt
 * when it re-validates `.bimri-update-backups/<transaction>/install-manifest.json`
 * before its next update; any failure there stops that install with exit 2.
 */
async function assertReferenceAcceptsInstalledReceipt(root: string, transaction: string) {
  const m = await assertReferenceAcceptsReceipt(root, transaction);
  assertEquals(m.status, "installed");
  return m;
}

/** As above, for any completed receipt: installed, or restored before a retry. */
async function assertReferenceAcceptsReceipt(root: string, transaction: string) {
  const dir = `${root}/.bimri-update-backups/${transaction}`;
  const m = JSON.parse(Deno.readTextFileSync(`${dir}/install-manifest.json`));
  for (const field of REFERENCE_PREPARED_FIELDS) assert(field in m, `${transaction}: ${field}`);
  assertMatch(m.target, /^\//);
  assertEquals([m.engine_release, m.memory_format], ["5.1.2", "5.1.0"]);
  assert(["code-only-update", "lossless-authority-activation"].includes(m.mode), m.mode);
  assertMatch(m.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  assertEquals(Object.keys(m.records).sort(), [...REFERENCE_RECEIPT_TARGETS].sort());
  for (const [name, record] of Object.entries(m.records)) {
    const r = record as Record<string, unknown>;
    assertEquals(Object.keys(r).sort(), ["backup", "existed", "sha256"]);
    if (r.existed) {
      assertEquals(r.backup, `files/${name}`);
      assertEquals(await sha256Bytes(Deno.readFileSync(`${dir}/files/${name}`)), r.sha256);
    } else assertEquals([r.backup, r.sha256], [null, null]);
  }
  assertEquals(Object.keys(m.directories).sort(), ["legacy", "legacy/v1", "legacy/v3"]);
  const snapshot = m.protected_manifest_before;
  assertEquals(Object.keys(snapshot).sort(), [
    "accepted_head_hash",
    "accepted_head_revision",
    "bimri_md_sha256",
    "protected_path_count",
    "records",
    "state_sha256",
    "tree_digest",
  ]);
  assertEquals(snapshot.protected_path_count, Object.keys(snapshot.records).length);
  assertEquals(snapshot.tree_digest, await sha256(pythonCompactJson(snapshot.records)));
  assertEquals(
    [
      m.protected_path_count,
      m.before_tree_digest,
      m.before_bimri_md_sha256,
      m.before_state_sha256,
      m.accepted_head_revision_before,
      m.accepted_head_hash_before,
    ],
    [
      snapshot.protected_path_count,
      snapshot.tree_digest,
      snapshot.bimri_md_sha256,
      snapshot.state_sha256,
      snapshot.accepted_head_revision,
      snapshot.accepted_head_hash,
    ],
  );
  if (m.status === "restored-before-retry") {
    assertMatch(m.restored_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    return m;
  }
  assertEquals(m.status, "installed");
  assertMatch(m.completed_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  assertEquals([m.preservation, m.protected_write_attempts], ["passed", 0]);
  assertEquals(m.after_bimri_md_sha256, m.before_bimri_md_sha256);
  assertEquals(m.accepted_head_revision_after, m.accepted_head_revision_before);
  assertEquals(m.accepted_head_hash_after, m.accepted_head_hash_before);
  if (m.mode === "code-only-update") {
    assertEquals(m.after_tree_digest, m.before_tree_digest);
    assertEquals(m.after_state_sha256, m.before_state_sha256);
  }
  assertEquals([m.read_only_audit, m.read_only_audit_errors], ["passed", []]);
  // Written by the reference, read by nobody: the exact old state it names.
  assertEquals(
    await sha256Bytes(Deno.readFileSync(`${dir}/${m.state_backup}`)),
    m.state_backup_sha256,
  );
  return m;
}

/** A folder the reference installer skips: an update still being prepared. */
const PREPARING = /^\.preparing-\d{8}-\d{6}-[0-9a-f]{8}$/;

/**
 * The transaction folders the reference installer re-validates before its
 * next update, as it walks them: every entry is a real folder, and every
 * folder but a preparing one must hold an `install-manifest.json`.
 */
function updateTransactions(root: string): string[] {
  const names: string[] = [];
  for (const e of Deno.readDirSync(`${root}/.bimri-update-backups`)) {
    assert(e.isDirectory && !e.isSymlink, `${e.name} is a folder`);
    if (PREPARING.test(e.name)) continue;
    assert(pathExists(`${root}/.bimri-update-backups/${e.name}/install-manifest.json`), e.name);
    names.push(e.name);
  }
  return names.sort();
}

Deno.test("a code-only update receipt carries the fields the reference installer validates", async () => {
  const root = await tempStore("bimri-compat-receipt-");
  await startRun(root);
  const r = await bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true });
  assertEquals(r.code, 0, r.stderr + r.stdout);
  const receipt = /^Receipt: \.bimri-update-backups\/(\S+)\/install-manifest\.json$/m.exec(
    r.stdout,
  );
  assert(receipt, r.stdout);
  assertEquals(updateTransactions(root), [receipt[1]]);
  const manifest = await assertReferenceAcceptsInstalledReceipt(root, receipt[1]);
  assertEquals(manifest.mode, "code-only-update");
  assertEquals([manifest.source_memory_format, manifest.state_activated], ["5.1.0", false]);
});

Deno.test("an install into a v5.0.2 store leaves one update transaction, with a receipt the reference accepts", async () => {
  const root = await copyFixture("reference-v5.0.2-populated");
  const oldState = Deno.readFileSync(`${root}/.bimri/state.json`);
  const first = await bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true });
  assertEquals(first.code, 0, first.stderr + first.stdout);
  assertMatch(first.stdout, /^Authority store activated from v5\.0\.2 to v5\.1\.0/m);
  const [activation] = updateTransactions(root);
  assertEquals(updateTransactions(root).length, 1);
  const activated = await assertReferenceAcceptsInstalledReceipt(root, activation);
  assertEquals(activated.mode, "lossless-authority-activation");
  assertEquals([activated.source_memory_format, activated.state_activated], ["5.0.2", true]);
  assertEquals(activated.before_state_sha256, await sha256Bytes(oldState));
  assertEquals(activated.state_backup, "state-v5.0.2-exact.json");
  // The activation's own receipt stays beside it (the reference ignores it),
  // naming the folder by its final name.
  const own = JSON.parse(
    Deno.readTextFileSync(`${root}/.bimri-update-backups/${activation}/activation-receipt.json`),
  );
  assertEquals([own.status, own.transaction], ["activated", activation]);
  assertEquals(own.state_backup, `.bimri-update-backups/${activation}/state-v5.0.2-exact.json`);
  assert(!first.stdout.includes(".preparing-"), first.stdout);
  const second = await bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true });
  assertEquals(second.code, 0, second.stderr + second.stdout);
  const both = updateTransactions(root);
  assertEquals(both.length, 2);
  const [update] = both.filter((name) => name !== activation);
  const updated = await assertReferenceAcceptsInstalledReceipt(root, update);
  assertEquals(updated.mode, "code-only-update");
  assertEquals([updated.source_memory_format, updated.state_activated], ["5.1.0", false]);
  assertEquals(updated.before_state_sha256, activated.after_state_sha256);
});

Deno.test("an interrupted v5.0.2 activation leaves only a folder the reference skips; the next install finishes it", async () => {
  for (const fault of ["activate-after-backup", "activate-after-state"]) {
    const root = await copyFixture("reference-v5.0.2-populated");
    const crashed = await bimri(root, ["install", "--target", root, "--quiescent"], {
      noRoot: true,
      env: { BIMRI_FAULT: fault },
    });
    assertEquals(crashed.code, 86, crashed.stderr + crashed.stdout);
    const left = [...Deno.readDirSync(`${root}/.bimri-update-backups`)].map((e) => e.name);
    assertEquals(left.length, 1, fault);
    assertMatch(left[0], PREPARING);
    assertEquals(updateTransactions(root), [], fault);
    const next = await bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true });
    assertEquals(next.code, 0, next.stderr + next.stdout);
    assert(!next.stdout.includes(".preparing-"), next.stdout);
    const finished = updateTransactions(root);
    assertEquals(finished.length, 1, fault);
    const m = await assertReferenceAcceptsInstalledReceipt(root, finished[0]);
    if (fault === "activate-after-backup") {
      // The state was still v5.0.2: the install resumed the activation and
      // finished the update in its folder, now under its final name.
      assertEquals(finished, [left[0].slice(".preparing-".length)]);
      assertEquals([m.mode, m.source_memory_format, m.state_activated], [
        "lossless-authority-activation",
        "5.0.2",
        true,
      ]);
    } else {
      // The state was already v5.1.0: a code-only update; the activation
      // folder keeps its preparing name until migrate finishes it.
      assertEquals([m.mode, m.source_memory_format, m.state_activated], [
        "code-only-update",
        "5.1.0",
        false,
      ]);
      assert(pathExists(`${root}/.bimri-update-backups/${left[0]}`), left[0]);
    }
  }
});

Deno.test("a failed v5.0.2 activation, then migrate, leaves no folder the reference refuses", async () => {
  const root = await copyFixture("reference-v5.0.2-populated");
  const failed = await bimri(root, ["install", "--target", root, "--quiescent"], {
    noRoot: true,
    env: { BIMRI_FAULT: "activate-error-after-state" },
  });
  assertEquals(failed.code, 2, failed.stderr + failed.stdout);
  assertEquals((await bimri(root, ["migrate"])).code, 0);
  assertEquals(updateTransactions(root), []);
  const [left] = [...Deno.readDirSync(`${root}/.bimri-update-backups`)].map((e) => e.name);
  assertMatch(left, PREPARING);
});

Deno.test("an update cut short is restored by the next install; an edit made since is kept", async () => {
  const root = await tempStore("bimri-compat-cut-");
  await startRun(root);
  const install = (env: Record<string, string> = {}) =>
    bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true, env });
  const cut = await install({ BIMRI_FAULT: "update-after-program-files" });
  assertEquals(cut.code, 86, cut.stderr + cut.stdout);
  const [first] = updateTransactions(root);
  const receipt = `${root}/.bimri-update-backups/${first}/install-manifest.json`;
  assertEquals(JSON.parse(Deno.readTextFileSync(receipt)).status, "prepared");
  Deno.writeTextFileSync(`${root}/AGENTS.md`, "An owner's edit after the cut.\n", { append: true });
  const edited = Deno.readTextFileSync(`${root}/AGENTS.md`);
  const next = await install();
  assertEquals(next.code, 0, next.stderr + next.stdout);
  assertMatch(next.stdout, /Restored the program files of the interrupted update in /);
  const both = updateTransactions(root);
  assertEquals(both.length, 2);
  const restored = await assertReferenceAcceptsReceipt(root, first);
  assertEquals(restored.status, "restored-before-retry");
  await assertReferenceAcceptsInstalledReceipt(root, both.find((n) => n !== first)!);
  assertEquals(
    Deno.readTextFileSync(`${root}/.bimri-update-backups/${first}/displaced/AGENTS.md`),
    edited,
  );
  assertEquals((await bimri(root, ["doctor"])).code, 0);
});

Deno.test("install refuses, changing nothing, an earlier receipt the reference installer would refuse", async () => {
  const root = await tempStore("bimri-compat-refuse-");
  await startRun(root);
  const install = () => bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true });
  assertEquals((await install()).code, 0);
  const [tx] = updateTransactions(root);
  const receiptPath = `${root}/.bimri-update-backups/${tx}/install-manifest.json`;
  const receipt = JSON.parse(Deno.readTextFileSync(receiptPath));
  // An earlier patch release of the reference wrote this one: accepted.
  Deno.writeTextFileSync(receiptPath, JSON.stringify({ ...receipt, engine_release: "5.1.1" }));
  assertEquals((await install()).code, 0);
  const stray = `${root}/.bimri-update-backups/notes.txt`;
  const bare = `${root}/.bimri-update-backups/20260101-000000-0123abcd`;
  const cases: [string, () => void, RegExp, () => void][] = [
    [
      "unknown release",
      () => {
        Deno.writeTextFileSync(
          receiptPath,
          JSON.stringify({ ...receipt, engine_release: "9.9.9" }),
        );
      },
      /unsupported release identity/,
      () => {
        Deno.writeTextFileSync(receiptPath, JSON.stringify(receipt));
      },
    ],
    [
      "stray file",
      () => Deno.writeTextFileSync(stray, "mine\n"),
      /contains an unsafe entry: \.bimri-update-backups\/notes\.txt/,
      () => Deno.removeSync(stray),
    ],
    [
      "folder without a receipt",
      () => Deno.mkdirSync(bare),
      /missing a safe manifest: \.bimri-update-backups\/20260101-000000-0123abcd/,
      () => Deno.removeSync(bare),
    ],
  ];
  for (const [what, damage, message, undo] of cases) {
    damage();
    const before = hashTree(root);
    const r = await install();
    assertEquals(r.code, 2, `${what}: ${r.stdout}`);
    assertMatch(r.stderr, /^BIMRI ERROR: /, what);
    assertMatch(r.stderr, message, what);
    assertMatch(r.stderr, /Nothing was changed\./, what);
    assertEquals(diffTrees(before, hashTree(root)), null, what);
    undo();
  }
  // A folder still being prepared is passed over, as the reference does.
  Deno.mkdirSync(`${root}/.bimri-update-backups/.preparing-20260101-000000-0123abcd`);
  assertEquals((await install()).code, 0);
});

Deno.test("quarantine accepts a well-formed decision naming a revision beyond the head; restore clears the reference latch", async () => {
  const root = await tempStore("bimri-compat-quarantine-");
  const run = await startRun(root);
  await bimri(root, newSubject(run, "work.q", "Quarantine target."));
  await bimri(root, ["close", "--run", run, "--outcome", "success", "--summary", "Done."]);
  const path = `${root}/.bimri/decisions/${run}-Q001.json`;
  const good = Deno.readTextFileSync(path);
  const decision = JSON.parse(good);
  decision.revision = 99;
  Deno.writeTextFileSync(path, JSON.stringify(decision, null, 2) + "\n");
  const q = await bimri(root, [
    "quarantine-authority",
    "--kind",
    "decision",
    "--id",
    `${run}-Q001`,
    "--human-approved",
  ]);
  assertEquals(q.code, 0, q.stderr);
  assertMatch(q.stdout, /quarantined decision R\d{6}-Q001/);
  // A reference engine that quarantined first leaves this write latch behind.
  Deno.writeTextFileSync(`${root}/.bimri/audit-blocked.json`, "{}\n");
  const replacement = `${root}/../${run}-good.json`;
  Deno.writeTextFileSync(replacement, good);
  const restore = await bimri(root, [
    "restore-authority",
    "--kind",
    "decision",
    "--id",
    `${run}-Q001`,
    "--from",
    replacement,
    "--human-approved",
  ]);
  assertEquals(restore.code, 0, restore.stderr);
  let latched = true;
  try {
    Deno.statSync(`${root}/.bimri/audit-blocked.json`);
  } catch {
    latched = false;
  }
  assert(!latched, "a validated restore clears the reference's audit-blocked.json latch");
  assertEquals((await bimri(root, ["doctor"])).code, 0);
});

Deno.test("run lifecycle writes drop the reference's audit checkpoint, so it re-proves the store instead of recording drift", async () => {
  const root = await tempStore();
  const witness = `${root}/.bimri/audit-witness.json`;
  const plant = () => Deno.writeTextFileSync(witness, "{}\n");
  const present = () => {
    try {
      return Deno.lstatSync(witness).isFile;
    } catch {
      return false;
    }
  };
  const run = await startRun(root, "first", ["--session", "s1"]);
  plant();
  assertEquals((await bimri(root, ["journal", "--run", run, "--text", "Note."])).code, 0);
  assertEquals((await bimri(root, ["start", "--actor", "first", "--session", "s1"])).code, 0);
  assert(present(), "a journal entry or a resumed start changes no checkpointed state");
  await startRun(root, "second");
  assert(!present(), "a new run changes the checkpointed run lifecycle");
  plant();
  assertEquals((await bimri(root, ["close", "--run", run])).code, 0);
  assert(!present(), "closing a run changes it too");
  plant();
  const recovered = await bimri(root, ["recover-run", "--run", "R000002", "--summary", "Gone."]);
  assertEquals(recovered.code, 0, recovered.stderr);
  assert(!present(), "so does recover-run");
});
