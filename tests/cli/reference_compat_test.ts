/**
 * Format facts the reference engine (v5.1.2) checks when it meets a store that
 * bimri wrote. Each was found by running the reference against bimri stores:
 * its installer re-validates every `.bimri-update-backups/<stamp>` receipt,
 * and its quarantine accepts any record its full validation rejects.
 */
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, newSubject, startRun, tempStore } from "../helpers/cli.ts";

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

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("a code-only update receipt carries the fields the reference installer validates", async () => {
  const root = await tempStore("bimri-compat-receipt-");
  await startRun(root);
  const r = await bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true });
  assertEquals(r.code, 0, r.stderr + r.stdout);
  const receipt = /^Receipt: (\S+)$/m.exec(r.stdout);
  assert(receipt, r.stdout);
  const manifest = JSON.parse(Deno.readTextFileSync(`${root}/${receipt[1]}`));
  assertEquals([manifest.engine_release, manifest.memory_format], ["5.1.2", "5.1.0"]);
  assertEquals(Object.keys(manifest.records).sort(), [...REFERENCE_RECEIPT_TARGETS].sort());
  for (const [name, record] of Object.entries(manifest.records)) {
    const { existed, backup, sha256: hash } = record as Record<string, unknown>;
    if (existed) assertEquals(backup, `files/${name}`);
    else assertEquals([backup, hash], [null, null]);
  }
  assertEquals(Object.keys(manifest.directories).sort(), ["legacy", "legacy/v1", "legacy/v3"]);
  const snapshot = manifest.protected_manifest_before;
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
  assertEquals(manifest.before_tree_digest, snapshot.tree_digest);
  assertEquals(manifest.after_tree_digest, snapshot.tree_digest);
  assertEquals(manifest.protected_write_attempts, 0);
  assertEquals(manifest.status, "installed");
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
