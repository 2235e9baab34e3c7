/**
 * A share pull never announces a question it saw answered in the same pull
 * (issue 45), with real git clones.
 */
import { assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { must } from "../helpers/cli.ts";
import {
  agentSets,
  cloneAs,
  fetchMemory,
  openConflicts,
  originAndClone,
  publish,
} from "../helpers/share.ts";

Deno.test("a pull whose records carry the owner's answer does not print BIMRI CONFLICT for it", async () => {
  const { base, origin, first: a } = await originAndClone();
  await agentSets(a, "codex", { "api.timeout": "Timeout is 45 seconds." });
  await must(a, ["share", "init", "--yes"]);
  await publish(a, "share memory");
  const b = await cloneAs(base, origin, "b");
  await must(b, ["share", "pull"]);
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
