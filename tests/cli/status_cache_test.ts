/**
 * Issue 11: status and review take the per-file facts cache
 * (`.bimri/audit-integrity-cache.json`) instead of reading every record, so
 * it must stay derived data: its answers equal a cache-less read, a deleted,
 * corrupt or foreign cache changes nothing, and in-place damage made after
 * the cache was written (same size, closed logs included) is still caught.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, copyStore, newSubject, startRun, tempStore } from "../helpers/cli.ts";
import { overwriteInPlace } from "../helpers/portable.ts";

const FACTS = ".bimri/audit-integrity-cache.json";
const SUMMARY = ".bimri/audit-integrity-summary.json";

/** Two closed runs with accepted memory, then a status that leaves a warm cache. */
async function warmStore(): Promise<{ root: string; first: string; second: string }> {
  const root = await tempStore();
  const first = await startRun(root, "seed");
  const p = (run: string, args: string[]) => bimri(root, ["propose", "--run", run, ...args]);
  const staged = await bimri(
    root,
    newSubject(first, "ops.retry", "Keep the retry path idempotent."),
  );
  assertEquals(staged.code, 0, staged.stderr);
  const closed = await bimri(root, [
    "close",
    "--run",
    first,
    "--outcome",
    "success",
    "--summary",
    "Seeded.",
  ]);
  assertEquals(closed.code, 0, closed.stderr);
  const second = await startRun(root, "agent");
  await p(second, ["--key", "ops.retry", "--text", "Keep the retry path idempotent; log it."]);
  assertEquals((await bimri(root, ["close", "--run", second])).code, 0);
  const status = await bimri(root, ["status"]);
  assertEquals(status.code, 0, status.stdout + status.stderr);
  const cache = JSON.parse(Deno.readTextFileSync(join(root, FACTS)));
  // The cache knows every record and log, each log with its outcome.
  assert(Object.keys(cache.records).length >= 4, JSON.stringify(cache.records));
  assertEquals(cache.logs[first].outcome, "success");
  return { root, first, second };
}

/** The answers of the full checks that use the cache, plus doctor's for reference. */
async function answers(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const args of [["status"], ["review", "--all"], ["doctor", "--read-only"]]) {
    const r = await bimri(root, args);
    out.push(`${args.join(" ")} -> ${r.code}\n${r.stdout}${r.stderr}`);
  }
  return out;
}

/** The answers without any cache (a copy with every derived audit file removed). */
async function answersWithoutCache(root: string): Promise<string[]> {
  const bare = await copyStore(root);
  for (const name of [FACTS, SUMMARY]) {
    // status drops the summary itself once it has seen damage.
    try {
      Deno.removeSync(join(bare, name));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return answers(bare);
}

Deno.test("status and review answers with a warm, deleted, corrupt or foreign cache are identical", async () => {
  const { root } = await warmStore();
  const warm = await answers(root);
  assertMatch(warm[0], /Outcomes: partial=1, success=1/);
  assertEquals(await answersWithoutCache(root), warm);
  const corrupt = await copyStore(root);
  Deno.writeTextFileSync(join(corrupt, FACTS), "not json");
  assertEquals(await answers(corrupt), warm);
  const foreign = await copyStore(root);
  // An older cache schema (no log outcomes) is ignored, not trusted.
  const doc = JSON.parse(Deno.readTextFileSync(join(root, FACTS)));
  Deno.writeTextFileSync(join(foreign, FACTS), JSON.stringify({ ...doc, schema: 1 }));
  assertEquals(await answers(foreign), warm);
});

Deno.test("same-size in-place damage after the cache was written is caught by status and review", async () => {
  const { root, first } = await warmStore();
  // An old proposal: its first byte replaced ("{" -> "X"), size and inode unchanged.
  const proposal = await copyStore(root);
  overwriteInPlace(join(proposal, `.bimri/proposals/${first}-Q001.json`), 0, "X");
  const damaged = await answers(proposal);
  assertEquals(damaged[0].split("\n")[0], "status -> 1");
  assertMatch(damaged[0], new RegExp(`proposal ${first}-Q001 .*is not valid JSON`));
  assertEquals(damaged[1].split("\n")[0], "review --all -> 1");
  assertMatch(damaged[1], new RegExp(`proposal ${first}-Q001`));
  assertEquals(await answersWithoutCache(proposal), damaged);

  // A closed log's outcome changed in place (same length): status counts the new one.
  const outcome = await copyStore(root);
  const logPath = join(outcome, `.bimri/log/${first}.md`);
  const log = Deno.readTextFileSync(logPath);
  overwriteInPlace(
    logPath,
    new TextEncoder().encode(log.slice(0, log.indexOf("[OUTCOME:"))).length,
    "[OUTCOME:partial]",
  );
  const recounted = await answers(outcome);
  assertMatch(recounted[0], /Outcomes: partial=2\n/);
  assertEquals(await answersWithoutCache(outcome), recounted);
});

Deno.test("a closed log that gains a marker in place is caught by status and review", async () => {
  const { root, first } = await warmStore();
  const copy = await copyStore(root);
  // A closed log is never re-read by the everyday check; the full checks must see this.
  const logPath = join(copy, `.bimri/log/${first}.md`);
  Deno.writeTextFileSync(logPath, `[PROPOSE:${first}-Q009] stray\n`, { append: true });
  const found = await answers(copy);
  assertEquals(found[0].split("\n")[0], "status -> 1");
  assertMatch(
    found[0],
    new RegExp(
      `proposal ${first}-Q009 is missing despite its durable reference in the log of ${first}`,
    ),
  );
  assertEquals(found[1].split("\n")[0], "review --all -> 1");
  assertEquals(await answersWithoutCache(copy), found);
  // status refreshed the cache; the damage stays reported on the next, warm, call.
  assertEquals(await answers(copy), found);
});
