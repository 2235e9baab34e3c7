/**
 * Issue 11: the integrity caches are derived data. Deleting or corrupting
 * them gives identical answers; damage that changes a folder's entries is
 * refused by the next canonical write exactly as without them; in-place
 * damage of a record the write does not read is caught by the full checks
 * (status, doctor), and in-place damage of a record the write reads is
 * refused at once (the fast path's documented trade-off, authority.ts).
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  copyStore,
  diffTrees,
  hashTree,
  must,
  newSubject,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { fingerprint } from "../../engine/store/files.ts";

const SUMMARY = ".bimri/audit-integrity-summary.json";
const FACTS = ".bimri/audit-integrity-cache.json";

function dropCaches(root: string): void {
  for (const name of [SUMMARY, FACTS]) Deno.removeSync(join(root, name));
}

/** A small store: accepted, held (Tier 1 by an agent) and closed subjects; caches fresh. */
async function buildStore(): Promise<{ root: string; closed: string }> {
  const root = await tempStore();
  const first = await startRun(root, "seed");
  const p = (run: string, args: string[]) => bimri(root, ["propose", "--run", run, ...args]);
  await bimri(root, newSubject(first, "ops.retry", "Keep the retry path idempotent."));
  await p(first, [
    "--tier",
    "1",
    "--new-subject",
    "--key",
    "arch.db",
    "--kind",
    "decision",
    "--text",
    "Use SQLite for the backup ledger.",
  ]);
  assertEquals((await bimri(root, ["close", "--run", first])).code, 0);
  const second = await startRun(root, "agent");
  await p(second, ["--key", "ops.retry", "--text", "Keep the retry path idempotent; log it."]);
  assertEquals((await bimri(root, ["sync", "--run", second])).code, 0);
  return { root, closed: first };
}

/** Answers of the read commands whose speed the caches serve. */
async function answers(root: string): Promise<string[]> {
  const out: string[] = [];
  for (
    const args of [
      ["recall", "--query", "backup ledger"],
      ["get", "--key", "arch.db", "--history"],
      ["status"],
      ["review"],
      ["doctor", "--read-only"],
    ]
  ) {
    const r = await bimri(root, args);
    out.push(`${args.join(" ")} -> ${r.code}\n${r.stdout}${r.stderr}`);
  }
  return out;
}

Deno.test("caches are derived: deleted or corrupt caches give identical answers", async () => {
  const { root } = await buildStore();
  const summary = JSON.parse(Deno.readTextFileSync(join(root, SUMMARY)));
  // The engine's own writes recorded the held Tier 1 decision.
  assertEquals(summary.held.length, 1);
  const withCaches = await answers(root);
  assertMatch(withCaches[0], /HELD/);
  const deleted = await copyStore(root);
  dropCaches(deleted);
  assertEquals(await answers(deleted), withCaches);
  const corrupt = await copyStore(root);
  Deno.writeTextFileSync(join(corrupt, SUMMARY), '{"schema": 2, "folders": {}, "held": []}');
  Deno.writeTextFileSync(join(corrupt, FACTS), "not json");
  assertEquals(await answers(corrupt), withCaches);
  // A summary claiming no held decision is ignored once the decisions folder
  // differs from the one it describes (here: a copy has new inodes).
  const stale = await copyStore(root);
  Deno.writeTextFileSync(join(stale, SUMMARY), JSON.stringify({ ...summary, held: [] }));
  assertEquals(await answers(stale), withCaches);
});

Deno.test("a removed or swapped record is refused by the next sync exactly as without caches", async () => {
  for (
    const damage of [
      (r: string, closed: string) =>
        Deno.removeSync(join(r, `.bimri/decisions/${closed}-Q001.json`)),
      (r: string, closed: string) => {
        // Replaced by rename (a new inode), as an editor's atomic save does.
        const path = join(r, `.bimri/proposals/${closed}-Q002.json`);
        Deno.writeTextFileSync(`${path}.new`, '{"broken": tru');
        Deno.renameSync(`${path}.new`, path);
      },
    ]
  ) {
    const { root, closed } = await buildStore();
    const run = await startRun(root, "worker");
    assertEquals((await bimri(root, ["sync", "--run", run])).code, 0);
    // The engine's own writes left the summary describing the folders: the fast path is live.
    const summary = JSON.parse(Deno.readTextFileSync(join(root, SUMMARY)));
    for (const folder of ["proposals", "decisions", "log"]) {
      assertEquals(
        summary.folders[folder],
        fingerprint(Deno.lstatSync(join(root, ".bimri", folder)), undefined, false),
      );
    }
    const bare = await copyStore(root);
    dropCaches(bare);
    damage(root, closed);
    damage(bare, closed);
    const a = await bimri(root, ["sync", "--run", run]);
    const b = await bimri(bare, ["sync", "--run", run]);
    assertEquals(a.code, 2, a.stderr);
    assertMatch(a.stderr, /^BIMRI ERROR: AUTHORITY RECOVERY NEEDED/m);
    assertEquals(a.stderr, b.stderr);
    assertEquals(a.stdout, b.stdout);
  }
});

Deno.test("in-place damage: full checks catch an old record; a record the sync reads is refused", async () => {
  const { root, closed } = await buildStore();
  const run = await startRun(root, "worker");
  const staged = await bimri(root, newSubject(run, "ops.ledger", "Ledger rows are append-only."));
  assertEquals(staged.code, 0, staged.stderr);

  // An old decision truncated in place: status and doctor (full checks) report it.
  const old = await copyStore(root);
  // A healthy start proves the copy and writes a summary that vouches for it.
  assertEquals((await bimri(old, ["start", "--actor", "prover"])).code, 0);
  Deno.truncateSync(join(old, `.bimri/decisions/${closed}-Q001.json`), 14);
  const status = await bimri(old, ["status"]);
  assert(status.code !== 0, "status must fail");
  assertMatch(status.stdout, /AUTHORITY RECOVERY NEEDED/);
  assert(status.stdout.includes(`${closed}-Q001`), status.stdout);
  const doctor = await bimri(old, ["doctor", "--read-only"]);
  assertEquals(doctor.code, 1);
  assert(doctor.stdout.includes(`${closed}-Q001`), doctor.stdout);
  // Once a full check has seen the damage, the next sync is refused until it is repaired.
  const afterStatus = await bimri(old, ["sync", "--run", run]);
  assertEquals(afterStatus.code, 2, afterStatus.stdout);
  assertMatch(afterStatus.stderr, /^BIMRI ERROR: AUTHORITY RECOVERY NEEDED: decision /m);

  // The run's own staged proposal edited in place: the sync that reads it refuses.
  const own = await copyStore(root);
  const path = join(own, `.bimri/proposals/${run}-Q001.json`);
  const file = Deno.openSync(path, { write: true });
  file.writeSync(new TextEncoder().encode("X"));
  file.close();
  const refused = await bimri(own, ["sync", "--run", run]);
  assertEquals(refused.code, 2, refused.stdout);
  assertMatch(refused.stderr, /^BIMRI ERROR: AUTHORITY RECOVERY NEEDED: proposal R\d{6}-Q001/m);
});

Deno.test("damage that index, maintain or start found pauses the next sync, as status's does", async () => {
  for (const finder of [["index"], ["maintain"], ["start", "--actor", "finder"]]) {
    const { root, closed } = await buildStore();
    const run = await startRun(root, "worker");
    const staged = await bimri(root, newSubject(run, "ops.ledger", "Ledger rows are append-only."));
    assertEquals(staged.code, 0, staged.stderr);
    // A healthy start proves the store: the summary now vouches for every folder.
    assertEquals((await bimri(root, ["start", "--actor", "prover"])).code, 0);
    // An old decision edited in place: its folder does not change.
    const path = join(root, `.bimri/decisions/${closed}-Q001.json`);
    const file = Deno.openSync(path, { write: true });
    file.writeSync(new TextEncoder().encode("X"));
    file.close();
    if (finder[0] === "start") {
      // start reads every record only once the summary no longer vouches (here: a new log).
      Deno.writeTextFileSync(join(root, ".bimri/log/R000099.md"), "# Run R000099 | stray\n");
    }
    const found = await bimri(root, finder);
    const seen = `${found.stdout}${found.stderr}`;
    assert(seen.includes(`${closed}-Q001`), `${finder[0]} reports the damage: ${seen}`);
    if (finder[0] === "start") Deno.removeSync(join(root, ".bimri/log/R000099.md"));
    const refused = await bimri(root, ["sync", "--run", run]);
    assertEquals(refused.code, 2, `${finder[0]}: ${refused.stdout}`);
    assertMatch(refused.stderr, /^BIMRI ERROR: AUTHORITY RECOVERY NEEDED: decision /m);
  }
});

Deno.test("a log added before a start is not hidden by the start's own new log", async () => {
  const { root } = await buildStore();
  const run = await startRun(root, "worker");
  assertEquals((await bimri(root, ["sync", "--run", run])).code, 0);
  const bare = await copyStore(root);
  dropCaches(bare);
  // A log naming a proposal that does not exist: damage the next write must see.
  const stray =
    "# Run R000009 | 2026-12-03T00:00:00Z | actor:x | base:V000001\n[PROPOSE:R000009-Q001]\n";
  for (const r of [root, bare]) Deno.writeTextFileSync(join(r, ".bimri/log/R000009.md"), stray);
  // Both starts change the log folder; only their own new log is explained.
  const a = await bimri(root, ["start", "--actor", "next"]);
  const b = await bimri(bare, ["start", "--actor", "next"]);
  assertMatch(a.stdout, /AUTHORITY RECOVERY NEEDED[^]*R000009-Q001/);
  assertEquals(a.stdout.replace(/R00000\d \|/, ""), b.stdout.replace(/R00000\d \|/, ""));
  const syncA = await bimri(root, ["sync", "--run", run]);
  const syncB = await bimri(bare, ["sync", "--run", run]);
  assertEquals(syncA.code, 2, syncA.stdout);
  assertEquals(syncA.stderr, syncB.stderr);
});

Deno.test("a conflict_count raised by hand past the conflicts on disk pauses the next sync although the summary vouched for every folder", async () => {
  const root = await tempStore();
  const run = await startRun(root, "a");
  await must(root, newSubject(run, "count.one", "One."));
  await must(root, ["sync", "--run", run]);
  await must(root, newSubject(run, "count.two", "Two."));
  const path = `${root}/.bimri/state.json`;
  const state = JSON.parse(Deno.readTextFileSync(path));
  Deno.writeTextFileSync(path, JSON.stringify({ ...state, conflict_count: 1 }, null, 2) + "\n");
  const before = hashTree(root);
  const r = await bimri(root, ["sync", "--run", run]);
  assertEquals(r.code, 2, r.stdout);
  assertMatch(
    r.stderr,
    /AUTHORITY RECOVERY NEEDED: conflict C000001 .*is missing although conflict_count is 1/,
  );
  assertEquals(diffTrees(before, hashTree(root)), null);
});
