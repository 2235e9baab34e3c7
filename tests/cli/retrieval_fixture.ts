/**
 * Shared setup for the retrieval CLI tests (not a test file itself): a store
 * seeded through the real CLI with every kind of retrievable record, and a
 * wrapper that proves a retrieval command left every store file byte-identical.
 */
import { join } from "node:path";
import {
  bimri,
  type CliResult,
  diffTrees,
  hashTree,
  must,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

export { must };
import { assert, assertEquals } from "../helpers/assert.ts";
import { canonicalJson } from "../../engine/store/canonical_json.ts";
import type { JsonValue } from "../../engine/model/json.ts";

/** Runs a retrieval command and asserts that no file under `root` changed, appeared or vanished. */
export async function retrieve(root: string, args: string[]): Promise<CliResult> {
  const before = hashTree(root);
  const result = await bimri(root, args);
  const difference = diffTrees(before, hashTree(root));
  assert(difference === null, `${args.join(" ")} changed the store: ${difference}`);
  return result;
}

/** The store the retrieval tests share, and its two run handles. */
export type SeededStore = { root: string; seed: string; run: string };

/**
 * Seeds the store the reference's retrieval scenario uses: Tier 1, 2 and 3
 * subjects from a closed run, then an update (history: replaced), a close
 * (history: closed) and an unclassified set (held candidate) from a second,
 * still active run.
 */
export async function seedStore(): Promise<SeededStore> {
  const root = await tempStore("bimri-retrieval-");
  const seed = await startRun(root, "seed");
  await must(root, [
    "journal",
    "--run",
    seed,
    "--text",
    "Checkout retries doubled during the sale.",
  ]);
  const propose = (run: string, args: string[]) => must(root, ["propose", "--run", run, ...args]);
  await propose(seed, [
    "--tier",
    "1",
    "--new-subject",
    "--key",
    "project.goal",
    "--kind",
    "decision",
    "--source",
    "user",
    "--trust",
    "confirmed",
    "--tags",
    "strategy",
    "--text",
    "Ship a reliable checkout before the holidays.",
  ]);
  await propose(seed, [
    "--tier",
    "2",
    "--new-subject",
    "--key",
    "checkout.next-step",
    "--importance",
    "4",
    "--tags",
    "checkout,retries",
    "--text",
    "Verify checkout retries under concurrent requests.",
  ]);
  await propose(seed, [
    "--tier",
    "2",
    "--new-subject",
    "--key",
    "search.index",
    "--text",
    "Rebuild the product search index nightly.",
  ]);
  await propose(seed, [
    "--tier",
    "3",
    "--new-subject",
    "--key",
    "ops.checkout-spikes",
    "--evidence",
    `${seed}-E001`,
    "--falsifier",
    "A sale passes without a retry spike.",
    "--text",
    "Checkout retry spikes follow promotional emails.",
  ]);
  await must(root, ["close", "--run", seed, "--outcome", "success", "--summary", "Seeded."]);
  const run = await startRun(root, "codex");
  await propose(run, [
    "--key",
    "checkout.next-step",
    "--text",
    "Checkout retries verified; monitor the next sale.",
  ]);
  await propose(run, ["--operation", "close", "--key", "search.index"]);
  await propose(run, [
    "--tier",
    "2",
    "--key",
    "checkout.retry-budget",
    "--text",
    "Cap checkout retries at three.",
  ]);
  await must(root, ["sync", "--run", run]);
  return { root, seed, run };
}

/** Rewrites fields of `.bimri/state.json` (canonical JSON), e.g. a tiny `hot_max_bytes`. */
export function patchState(root: string, fields: Record<string, JsonValue>): void {
  const path = join(root, ".bimri", "state.json");
  const state = JSON.parse(Deno.readTextFileSync(path)) as Record<string, JsonValue>;
  Deno.writeTextFileSync(path, canonicalJson({ ...state, ...fields }));
}

/** A JSON retrieval document parsed, checking that no match carries a `score` (only --rank adds it). */
export function withoutScores(stdout: string): Record<string, unknown> {
  const doc = JSON.parse(stdout) as { matches: Record<string, unknown>[] };
  for (const match of doc.matches) {
    assertEquals("score" in match, false, "an unranked --json match has no score field");
  }
  return doc;
}
