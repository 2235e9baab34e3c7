/**
 * Issue 33: status and review prove closed runs' history from
 * `.bimri/audit-integrity-settled.json` (fingerprints of every settled record
 * and log, plus what the rest of the store can contradict) instead of loading
 * every record's facts. It must stay derived: a healthy store's answers equal
 * a cache-less read, and damage made after the record vouched for history
 * (in place, added files, removed revisions, a conflict that no longer holds
 * a settled decision) is still reported exactly as a full read reports it.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, copyStore, newSubject, startRun, tempStore } from "../helpers/cli.ts";
import { overwriteInPlace } from "../helpers/portable.ts";

const SETTLED = ".bimri/audit-integrity-settled.json";
const FACTS = ".bimri/audit-integrity-cache.json";

type Settled = {
  through: number;
  open: string[];
  count: number;
  sum1: number;
  links: unknown[];
};

function settled(root: string): Settled {
  return JSON.parse(Deno.readTextFileSync(join(root, SETTLED)));
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A seed run, two runs that edit the same subject (the second contested), all closed. */
async function historyStore(): Promise<{ root: string; seed: string; b: string; c: string }> {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  for (const key of ["s.one", "s.two"]) {
    const r = await bimri(root, newSubject(seed, key, `${key} v1.`));
    assertEquals(r.code, 0, r.stderr);
  }
  assertEquals((await bimri(root, ["close", "--run", seed])).code, 0);
  const b = await startRun(root, "bob");
  const c = await startRun(root, "carol");
  await bimri(root, ["propose", "--run", b, "--key", "s.one", "--text", "From bob."]);
  await bimri(root, ["propose", "--run", c, "--key", "s.one", "--text", "From carol."]);
  assertEquals((await bimri(root, ["close", "--run", b])).code, 0);
  const closed = await bimri(root, ["close", "--run", c]);
  assertEquals(closed.code, 0, closed.stderr);
  assertMatch(closed.stdout, /MEMORY CONFLICT C000001/);
  return { root, seed, b, c };
}

/** status (text and --json), review --all and doctor --read-only, with exit codes. */
async function answers(root: string): Promise<string[]> {
  const out: string[] = [];
  for (
    const args of [["status"], ["--json", "status"], ["review", "--all"], ["doctor", "--read-only"]]
  ) {
    const r = await bimri(root, args);
    out.push(`${args.join(" ")} -> ${r.code}\n${r.stdout}${r.stderr}`);
  }
  return out;
}

/** The answers of a copy without any derived audit file (new inodes: nothing vouches). */
async function answersWithoutCaches(root: string): Promise<string[]> {
  const bare = await copyStore(root);
  for (const entry of Deno.readDirSync(join(bare, ".bimri"))) {
    if (entry.name.startsWith("audit-integrity-")) {
      Deno.removeSync(join(bare, ".bimri", entry.name));
    }
  }
  return answers(bare);
}

/** A copy whose settled record status has just written (the copy's own fingerprints). */
async function warmCopy(root: string): Promise<string> {
  const copy = await copyStore(root);
  const status = await bimri(copy, ["status"]);
  assertEquals(status.code, 0, status.stdout + status.stderr);
  assertEquals(settled(copy).through, 3);
  return copy;
}

Deno.test("status proves settled history without re-reading it and extends it as runs close", async () => {
  const { root } = await historyStore();
  const first = await answers(root);
  assertEquals(first[0].split("\n")[0], "status -> 0");
  const doc = settled(root);
  assertEquals([doc.through, doc.open], [3, []]);
  // Two proposals and two decisions of the seed, one each of bob and carol, three logs.
  assertEquals(doc.count, 11);
  assertEquals(doc.links.length, 1, "carol's contested decision names its conflict");
  assertEquals(await answersWithoutCaches(root), first);

  // With the record fresh, neither status nor review reads every record again:
  // the per-file facts cache they would otherwise rebuild stays absent.
  Deno.removeSync(join(root, FACTS));
  assertEquals(await answers(root), first);
  assert(!exists(join(root, FACTS)), "a settled proof must not rebuild the facts cache");

  // An active run stays open; its files are read on every check.
  const d = await startRun(root, "dave");
  assertEquals((await bimri(root, newSubject(d, "s.three", "s.three v1."))).code, 0);
  const active = await answers(root);
  assertMatch(active[0], /active 1/);
  assertEquals([settled(root).through, settled(root).open], [4, [d]]);
  assert(!exists(join(root, FACTS)));
  assertEquals(await answersWithoutCaches(root), active);

  assertEquals((await bimri(root, ["close", "--run", d])).code, 0);
  const closed = await answers(root);
  assertEquals([settled(root).through, settled(root).open, settled(root).count], [4, [], 14]);
  assert(!exists(join(root, FACTS)));
  assertEquals(await answersWithoutCaches(root), closed);
});

Deno.test("damage to settled history after the record vouched for it is reported as by a full read", async () => {
  const { root, seed, c } = await historyStore();

  // An old proposal edited in place (same size, same inode).
  const proposal = await warmCopy(root);
  overwriteInPlace(join(proposal, `.bimri/proposals/${seed}-Q001.json`), 0, "X");
  const invalid = await answers(proposal);
  assertEquals(invalid[0].split("\n")[0], "status -> 1");
  assertMatch(invalid[0], new RegExp(`proposal ${seed}-Q001 .*is not valid JSON`));
  assertEquals(invalid[2].split("\n")[0], "review --all -> 1");
  assertEquals(await answersWithoutCaches(proposal), invalid);

  // A closed log that gains a marker.
  const log = await warmCopy(root);
  Deno.writeTextFileSync(join(log, `.bimri/log/${seed}.md`), `[PROPOSE:${seed}-Q009] stray\n`, {
    append: true,
  });
  const marked = await answers(log);
  assertMatch(marked[0], new RegExp(`proposal ${seed}-Q009 .*in the log of ${seed}`));
  assertEquals(await answersWithoutCaches(log), marked);

  // A record added to a settled run.
  const added = await warmCopy(root);
  Deno.copyFileSync(
    join(added, `.bimri/decisions/${seed}-Q001.json`),
    join(added, `.bimri/decisions/${seed}-Q009.json`),
  );
  const extra = await answers(added);
  assertEquals(extra[0].split("\n")[0], "status -> 1");
  assertMatch(extra[0], new RegExp(`decision ${seed}-Q009`));
  assertEquals(await answersWithoutCaches(added), extra);

  // A revision that a settled decision names, removed.
  const revision = await warmCopy(root);
  Deno.removeSync(join(revision, ".bimri/revisions/V000001.md"));
  const missing = await answers(revision);
  assertEquals(missing[0].split("\n")[0], "status -> 1");
  assertMatch(missing[0], /names revision V000001, which is missing/);
  assertEquals(await answersWithoutCaches(revision), missing);

  // The conflict a settled decision names no longer holds it (another valid candidate instead).
  const conflict = await warmCopy(root);
  const conflictPath = join(conflict, ".bimri/conflicts/C000001.json");
  const record = JSON.parse(Deno.readTextFileSync(conflictPath));
  const carol = `${c}-Q001`;
  assert(record.proposal_ids.includes(carol), JSON.stringify(record.proposal_ids));
  const other = `${seed}-Q002`;
  const otherBytes = Deno.readFileSync(join(conflict, `.bimri/proposals/${other}.json`));
  record.proposal_ids = record.proposal_ids.map((id: string) => id === carol ? other : id);
  const hashes: Record<string, string> = {};
  for (const [id, hash] of Object.entries(record.proposal_hashes as Record<string, string>)) {
    hashes[id === carol ? other : id] = id === carol
      ? createHash("sha256").update(otherBytes).digest("hex")
      : hash;
  }
  record.proposal_hashes = hashes;
  Deno.writeTextFileSync(conflictPath, JSON.stringify(record, null, 2) + "\n");
  const unlinked = await answers(conflict);
  assertEquals(unlinked[0].split("\n")[0], "status -> 1");
  assertMatch(
    unlinked[0],
    new RegExp(`decision ${carol} .*is not a candidate of conflict C000001`),
  );
  assertEquals(await answersWithoutCaches(conflict), unlinked);
});

Deno.test("a deleted, corrupt or foreign settled record changes no answer", async () => {
  const { root } = await historyStore();
  const warm = await answers(root);
  for (const text of [null, "not json", JSON.stringify({ ...settled(root), schema: 0 })]) {
    const copy = await warmCopy(root);
    if (text === null) Deno.removeSync(join(copy, SETTLED));
    else Deno.writeTextFileSync(join(copy, SETTLED), text);
    assertEquals(await answers(copy), warm);
  }
  // A record whose digest no longer matches (as after any unexplained change) is not trusted.
  const forged = await warmCopy(root);
  const doc = settled(forged);
  Deno.writeTextFileSync(join(forged, SETTLED), JSON.stringify({ ...doc, sum1: doc.sum1 ^ 1 }));
  Deno.removeSync(join(forged, FACTS));
  assertEquals(await answers(forged), warm);
  // The full check ran (and rebuilt the facts cache) instead of the proof.
  assert(exists(join(forged, FACTS)));
});
