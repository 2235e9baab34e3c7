/**
 * The per-file facts cache must not vouch for the records sync and close act
 * on next. Deno reports ctime in whole seconds, so an active run's proposal
 * edited in the second it was cached, same size and mtime put back, keeps its
 * fingerprint; such records are always read again, and a forged one stops
 * the write instead of being applied.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  copyStore,
  must,
  newSubject,
  pathExists,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

/** Waits for the start of the next wall-clock second. */
function nextSecond(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1020 - (Date.now() % 1000)));
}

/** Rewrites `path` in place with `edit`, same size, mtime put back; true when ctime kept its second. */
function sameSecondEdit(path: string, edit: (text: string) => string): boolean {
  const before = Deno.statSync(path);
  const text = Deno.readTextFileSync(path);
  const forged = edit(text);
  assert(forged !== text && forged.length === text.length, "a same-size edit");
  Deno.writeTextFileSync(path, forged);
  Deno.utimeSync(path, before.atime!, before.mtime!);
  const after = Deno.statSync(path);
  return after.ctime?.getTime() === before.ctime?.getTime() &&
    after.mtime?.getTime() === before.mtime?.getTime();
}

Deno.test("an active run's proposal forged in the second it was cached is not applied", async () => {
  // A slow machine can miss the one-second window; the forgery must land in it once.
  let landed = false;
  for (let attempt = 0; attempt < 3 && !landed; attempt++) {
    const root = await tempStore();
    const run = await startRun(root);
    await nextSecond();
    const id = (await must(root, newSubject(run, "k.a", "Hello"))).trim();
    await must(root, ["status"]); // caches the facts of the new proposal
    const proposal = join(root, ".bimri/proposals", `${id}.json`);
    landed = sameSecondEdit(proposal, (t) => t.replace('"tier": 2', '"tier": 7'));
    const sync = await bimri(root, ["sync", "--run", run]);
    assertEquals(sync.code, 2, sync.stdout);
    assertMatch(sync.stderr, /proposal R000001-Q001 .*invalid tier/);
    assert(!pathExists(join(root, ".bimri/decisions", `${id}.json`)), "nothing decided");
  }
  assert(landed, "the forgery never fell in the second the proposal was cached");
});

Deno.test("an applied proposal of an active run forged in the cached second stops another run's close", async () => {
  let landed = false;
  for (let attempt = 0; attempt < 3 && !landed; attempt++) {
    const root = await tempStore();
    const first = await startRun(root, "a");
    const id = (await must(root, newSubject(first, "k.a", "Hello"))).trim();
    await must(root, ["sync", "--run", first]);
    const other = await startRun(root, "b");
    await nextSecond();
    // A copy of the store gets new inodes and ctimes; its first command caches them.
    const copy = await copyStore(root);
    await must(copy, ["sync", "--run", first]);
    const proposal = join(copy, ".bimri/proposals", `${id}.json`);
    landed = sameSecondEdit(proposal, (t) => t.replace('"tier": 2', '"tier": 7'));
    const close = await bimri(copy, ["close", "--run", other, "--outcome", "success"]);
    assertEquals(close.code, 2, close.stdout);
    assertMatch(close.stderr, /proposal R000001-Q001 .*invalid tier/);
  }
  assert(landed, "the forgery never fell in the second the records were cached");
});
