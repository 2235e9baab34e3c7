/**
 * Team memory through real git: a bare origin and three clones, agents
 * working in each, `git commit`, `git pull` (merge) and `git push`. No git
 * merge ever conflicts; after every clone pulls, every clone answers the same
 * text for every key; a key edited concurrently in two clones becomes one
 * conflict per clone, and the owner's answer in one clone closes it in every
 * clone after the next pull.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, must } from "../helpers/cli.ts";
import {
  agentSets,
  cloneAs,
  fetchMemory,
  gitInit,
  openConflicts,
  originAndClone,
  publish,
  pullTrusting,
  textOf,
} from "../helpers/share.ts";

async function sameEverywhere(clones: string[], keys: string[]): Promise<void> {
  for (const key of keys) {
    const texts = await Promise.all(clones.map((c) => textOf(c, key)));
    assert(texts[0] !== null, `${key} missing in the first clone`);
    assertEquals(new Set(texts).size, 1, `${key} differs: ${JSON.stringify(texts)}`);
  }
}

Deno.test("three git clones share one memory without git conflicts; concurrent edits become one conflict per clone and one answer closes them all", async () => {
  const { base, origin, first: a } = await originAndClone();
  await agentSets(a, "codex", { "task.alpha": "Alpha v1.", "task.beta": "Beta v1." });
  await gitInit(a); // share init needs a git work tree
  const init = await must(a, ["share", "init", "--yes"]);
  assertMatch(init, /exported 2 seed records/);
  const ignore = Deno.readTextFileSync(join(a, ".gitignore"));
  assertMatch(ignore, /^bimri\.md$/m);
  assertMatch(ignore, /^\.bimri\/$/m);
  await publish(a, "share memory");
  // git carries only the records: the local store stays out of the repository.
  const tracked = (await new Deno.Command("git", { args: ["ls-files"], cwd: a, stdout: "piped" })
    .output()).stdout;
  const files = new TextDecoder().decode(tracked).split("\n");
  assert(!files.some((f) => f.startsWith(".bimri/") || f === "bimri.md"), files.join(","));
  assert(files.some((f) => f.startsWith(".bimri-share/")), files.join(","));

  // Fresh clones build their store from the records.
  const b = await cloneAs(base, origin, "b");
  const c = await cloneAs(base, origin, "c");
  for (const clone of [b, c]) {
    const pulled = await pullTrusting(clone);
    assertMatch(pulled, /imported 2 records; applied 2/);
  }
  await sameEverywhere([a, b, c], ["task.alpha", "task.beta"]);

  // Agents work in every clone, each publishing through git.
  await agentSets(b, "claude", { "task.gamma": "Gamma from b.", "task.beta": "Beta v2 from b." });
  await publish(b, "b learned");
  await agentSets(c, "codex", { "task.delta": "Delta from c." });
  await publish(c, "c learned");
  await fetchMemory(a);
  await agentSets(a, "codex", { "task.alpha": "Alpha v2 from a." });
  await publish(a, "a learned");
  for (const clone of [a, b, c]) await fetchMemory(clone);
  const keys = ["task.alpha", "task.beta", "task.gamma", "task.delta"];
  await sameEverywhere([a, b, c], keys);
  assertEquals(await textOf(c, "task.beta"), "Beta v2 from b.");
  assertEquals(await textOf(b, "task.alpha"), "Alpha v2 from a.");

  // A concurrent edit of one key in two clones.
  await agentSets(a, "codex", { "task.alpha": "Alpha edited in a." });
  await agentSets(b, "claude", { "task.alpha": "Alpha edited in b." });
  await publish(a, "a edits alpha");
  await publish(b, "b edits alpha");
  for (const clone of [a, b, c]) await fetchMemory(clone);
  const conflicts = await Promise.all([a, b, c].map(openConflicts));
  for (const [i, ids] of conflicts.entries()) {
    assertEquals(ids.length, 1, `clone ${i}: ${ids.join(",")}`);
  }
  // The owner answers in clone c, keeping b's text.
  const review = await must(c, ["review", conflicts[2][0]]);
  const choice = /^Choice (R[0-9]{6}-Q[0-9]{3})$/m.exec(review);
  const live = await textOf(c, "task.alpha");
  const choose = live === "Alpha edited in b." ? "current" : choice![1];
  await must(c, ["resolve", conflicts[2][0], "--choose", choose, "--human-approved"]);
  assertEquals(await textOf(c, "task.alpha"), "Alpha edited in b.");
  await publish(c, "owner answered");
  for (const clone of [a, b, c]) await fetchMemory(clone);
  for (const clone of [a, b, c]) assertEquals(await openConflicts(clone), []);
  await sameEverywhere([a, b, c], keys);
  assertEquals(await textOf(a, "task.alpha"), "Alpha edited in b.");
  // Nothing is waiting, every store passes doctor, and the brief says so.
  for (const clone of [a, b, c]) {
    const status = await must(clone, ["share", "status"]);
    assertMatch(status, /Records waiting to be pulled: 0\./);
    const doctor = await bimri(clone, ["doctor"]);
    assertEquals(doctor.code, 0, doctor.stdout + doctor.stderr);
  }
  // Another answer on a later pull is not asked again.
  assertEquals(await openConflicts(a), []);
});
