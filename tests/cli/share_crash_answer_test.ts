/**
 * A `share pull` killed while raising a conflict, or while applying an owner's
 * answer given in another clone, never makes the owner answer again: the next
 * pull completes what the killed one started, each effect once. The clones'
 * changes reach each other as git would carry them: exported first (`share
 * status`, as the pre-commit hook does), since close leaves them for the next
 * export.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { bimri, must, tempStore } from "../helpers/cli.ts";
import {
  agentSets,
  copyShare,
  entryOf,
  exportNow,
  gitInit,
  openConflicts,
  pullTrusting,
  trustEveryReplica,
} from "../helpers/share.ts";

async function entry(root: string, key: string): Promise<Record<string, unknown> | null> {
  return await entryOf(root, key);
}

/** Three replicas a, b, c of one memory, and a concurrent edit of k.one in a and b. */
async function concurrentEdit(): Promise<{ a: string; b: string; c: string }> {
  const a = await tempStore();
  await agentSets(a, "codex", { "k.one": "One." });
  await gitInit(a); // share init needs a git work tree
  await must(a, ["share", "init", "--yes"]);
  const b = await tempStore();
  const c = await tempStore();
  for (const clone of [b, c]) {
    copyShare(a, clone);
    await pullTrusting(clone); // the owner trusts a's replica
  }
  await agentSets(a, "codex", { "k.one": "One from a." });
  await agentSets(b, "claude", { "k.one": "One from b." });
  for (const clone of [a, b]) await exportNow(clone); // as the pre-commit hook does
  return { a, b, c };
}

async function answerInA(a: string, b: string): Promise<void> {
  copyShare(b, a);
  await pullTrusting(a); // the owner trusts b's replica
  const [conflict] = await openConflicts(a);
  const review = await must(a, ["review", conflict]);
  const candidate = /^Choice (R[0-9]{6}-Q[0-9]{3})$/m.exec(review)![1];
  await must(a, ["resolve", conflict, "--choose", candidate, "--human-approved"]);
  strictEqual((await entry(a, "k.one"))?.trust, "confirmed");
}

Deno.test("a pull killed right after raising a conflict raises it once; the owner's answer elsewhere still closes it", async () => {
  const { a, b } = await concurrentEdit();
  copyShare(a, b);
  const killed = await bimri(b, ["share", "pull"], { env: { BIMRI_FAULT: "share-after-raise" } });
  strictEqual(killed.code, 86, killed.stderr);
  await must(b, ["share", "pull"]);
  const open = await openConflicts(b);
  strictEqual(open.length, 1);
  const review = await must(b, ["review", open[0]]);
  strictEqual([...review.matchAll(/^Choice R[0-9]{6}-Q[0-9]{3}$/gm)].length, 1, review);
  await answerInA(a, b);
  copyShare(a, b);
  await must(b, ["share", "pull"]);
  deepStrictEqual(await openConflicts(b), []);
  deepStrictEqual(await entry(b, "k.one"), await entry(a, "k.one"));
  strictEqual((await bimri(b, ["doctor", "--read-only"])).code, 0);
});

Deno.test("a pull killed while applying another clone's answer finishes it without asking the owner", async () => {
  for (const point of ["share-after-answer", "share-before-answer"]) {
    const { a, b, c } = await concurrentEdit();
    copyShare(a, b);
    await must(b, ["share", "pull"]);
    strictEqual((await openConflicts(b)).length, 1);
    await answerInA(a, b);
    // b holds the question (closed by the answer); c never saw it (the answer is confirmed there).
    for (const clone of [b, c]) {
      copyShare(a, clone);
      if (clone !== b) copyShare(b, clone);
      // The owner trusts every replica first, so the killed pull is the one that applies.
      await trustEveryReplica(clone);
      const killed = await bimri(clone, ["share", "pull"], { env: { BIMRI_FAULT: point } });
      await must(clone, ["share", "pull"]);
      await must(clone, ["share", "pull"]);
      deepStrictEqual(await openConflicts(clone), [], `${point} (exit ${killed.code})`);
      deepStrictEqual(await entry(clone, "k.one"), await entry(a, "k.one"), point);
      strictEqual((await bimri(clone, ["doctor", "--read-only"])).code, 0);
    }
  }
});
