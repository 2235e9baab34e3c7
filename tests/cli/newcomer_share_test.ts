/**
 * A share pull never announces a question it saw answered in the same pull
 * (issue 45), with real git clones.
 */
import { assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, must, tempStore } from "../helpers/cli.ts";
import {
  agentSets,
  cloneAs,
  fetchMemory,
  gitInit,
  gitOk,
  openConflicts,
  originAndClone,
  publish,
  pullTrusting,
  textOf,
} from "../helpers/share.ts";

Deno.test("a pull whose records carry the owner's answer does not print BIMRI CONFLICT for it", async () => {
  const { base, origin, first: a } = await originAndClone();
  await agentSets(a, "codex", { "api.timeout": "Timeout is 45 seconds." });
  await gitInit(a); // share init needs a git work tree
  await must(a, ["share", "init", "--yes"]);
  await publish(a, "share memory");
  const b = await cloneAs(base, origin, "b");
  await pullTrusting(b); // the owner trusts a's replica
  // Concurrent edits of one key in both clones.
  await agentSets(a, "codex", { "api.timeout": "Timeout is 30 seconds." });
  await agentSets(b, "claude", { "api.timeout": "Timeout is 60 seconds." });
  await publish(b, "b learned");
  const first = await fetchMemory(a);
  assertMatch(first, /^BIMRI CONFLICT C\d{6}: /m);
  const [conflict] = await openConflicts(a);
  await must(a, ["resolve", conflict, "--choose", "current", "--human-approved"]);
  await publish(a, "a answered");
  // b sees the conflict and its answer in one pull.
  const second = await fetchMemory(b);
  assertMatch(second, /answered elsewhere [1-9]/);
  assertNotMatch(second, /BIMRI CONFLICT/);
  assertEquals(await openConflicts(b), []);
});

Deno.test("install --target . adopts a store share pull built in a fresh clone, without --quiescent or repair warning", async () => {
  const { base, origin, first: a } = await originAndClone();
  await must(a, ["install", "--target", a]);
  await agentSets(a, "codex", { "k.one": "One." });
  await gitInit(a); // share init needs a git work tree
  await must(a, ["share", "init", "--yes"]);
  await gitOk(a, ["add", "-A"]);
  await gitOk(a, ["commit", "-q", "-m", "bimri"]);
  await gitOk(a, ["push", "-q", "origin", "HEAD:main"]);
  const b = await cloneAs(base, origin, "b");
  // The everyday routine first: it builds the store (the owner trusts a's replica).
  await pullTrusting(b);
  const installed = await bimri(b, ["install", "--target", "."]);
  assertEquals(installed.code, 0, installed.stderr + installed.stdout);
  assertMatch(installed.stdout, /^BIMRI 5\.1\.2 installed\.$/m);
  assertMatch(installed.stdout, /^Store adopted without --quiescent: share pull built it/m);
  assertNotMatch(installed.stdout + installed.stderr, /Repair warning|index is missing/);
  assertMatch(await must(b, ["doctor"]), /PASSED/);
  assertEquals(await textOf(b, "k.one"), "One.");
  // A store that was installed before still needs the attestation.
  const again = await bimri(b, ["install", "--target", "."]);
  assertEquals(again.code, 2, again.stdout);
  assertMatch(again.stderr, /--quiescent/);
});

Deno.test("share pull where there is nothing to pull creates no store", async () => {
  const root = await tempStore();
  const r = await bimri(root, ["share", "pull"]);
  assertEquals(r.code, 2, r.stdout);
  assertMatch(r.stderr, /^BIMRI ERROR: .*no \.bimri-share\/ folder and no memory store/m);
  assertEquals([...Deno.readDirSync(root)].length, 0);
});
