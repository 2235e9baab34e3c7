/**
 * A pusher commits junk under a trusted replica's next record number. Its
 * author's next export (`share status`, as the pre-commit hook runs it; close
 * leaves its change for it) refuses the file, passes over that number and
 * says so, signed, in its next record (`passed`): every other clone imports
 * the author's later records (an owner's answer included) without waiting
 * for a record that was never written, before and after the junk is removed,
 * and no gap is left.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, must, tempStore } from "../helpers/cli.ts";
import { lstatOrNull } from "../../engine/store/files.ts";
import { changeRecord, handReplica, shareEntry } from "../helpers/share_records.ts";
import { mintReplicaId, recordName } from "../../engine/share/ids.ts";
import { recordText, type ShareRecord } from "../../engine/share/record.ts";
import {
  agentSets,
  cloneAs,
  gitOk,
  openConflicts,
  publish,
  pullTrusting,
  sharedClones,
  textOf,
} from "../helpers/share.ts";

const replicaOf = (clone: string) =>
  JSON.parse(Deno.readTextFileSync(join(clone, ".bimri", "replica.local.json"))).replica as string;

/** `git pull` then `bimri share pull`; returns the pull (exit 0, or 2 naming refused files). */
async function gitAndSharePull(clone: string): Promise<{ code: number; all: string }> {
  await gitOk(clone, ["pull", "-q", "--no-edit", "origin", "main"]);
  const r = await bimri(clone, ["share", "pull"]);
  assert(r.code === 0 || r.code === 2, `share pull: ${r.code} ${r.stderr}`);
  return { code: r.code, all: r.stdout + r.stderr };
}

Deno.test("junk at a trusted replica's next seq: the author's export passes over it, signed, and every clone imports its later records (an answer included) with no gap left", async () => {
  const { base, origin, clones: [a, b, c] } = await sharedClones(
    { "team.key": "Team value one." },
    ["b", "c"],
  );
  // B's first change reaches A and C, whose owners trust B.
  await agentSets(b, "claude", { "team.key": "Team value from b." });
  await publish(b, "b learned");
  for (const clone of [a, c]) {
    await gitOk(clone, ["pull", "-q", "--no-edit", "origin", "main"]);
    await pullTrusting(clone);
  }
  await agentSets(a, "codex", { "team.key": "Team value from a." }); // concurrent with B's next
  await publish(a, "a learned");
  const B = replicaOf(b);

  // A pusher commits garbage as B's record 2.
  const pusher = await cloneAs(base, origin, "pusher");
  const junk = join(".bimri-share", B, "00000002.json");
  Deno.writeTextFileSync(join(pusher, junk), "garbage\n");
  await gitOk(pusher, ["add", junk]);
  await gitOk(pusher, ["commit", "-q", "-m", "junk"]);
  await gitOk(pusher, ["push", "-q", "origin", "HEAD:main"]);

  // B's export refuses the file, passes over seq 2 and goes on at 3 and 4.
  await gitOk(b, ["pull", "-q", "--no-edit", "origin", "main"]);
  const run = /BIMRI RUN HANDLE: (R[0-9]{6})/.exec(
    await must(b, ["start", "--actor", "claude"]),
  )![1];
  await must(b, ["propose", "--run", run, "--key", "team.key", "--text", "Team value b two."]);
  const closed = await bimri(b, ["close", "--run", run, "--outcome", "success"]);
  assertEquals(closed.code, 0, closed.stderr);
  // close leaves its change for the next export: nothing is written past the junk yet.
  assertEquals(lstatOrNull(join(b, ".bimri-share", B, "00000003.json")), null);
  const exported = await bimri(b, ["share", "status"]);
  assertEquals(exported.code, 0, exported.stderr);
  assertMatch(
    exported.stderr,
    new RegExp(`BIMRI ERROR: \\.bimri-share/${B}/00000002\\.json lies`),
  );
  await agentSets(b, "claude", { "other.key": "Other from b." });
  const three = JSON.parse(Deno.readTextFileSync(join(b, ".bimri-share", B, "00000003.json")));
  assertEquals(three.passed, 1);
  assertEquals(typeof three.signature, "string");
  // B's pull raises A's concurrent edit; B's owner answers it (record 5, a resolution).
  await gitAndSharePull(b);
  const [conflict] = await openConflicts(b);
  assert(conflict !== undefined, "b has no conflict to answer");
  await must(b, ["resolve", conflict, "--choose", "current", "--human-approved"]);
  const five = JSON.parse(Deno.readTextFileSync(join(b, ".bimri-share", B, "00000005.json")));
  assertEquals(five.kind, "resolution");
  await publish(b, "b answered");

  // A, with the junk still in git: refused by name, and records 3-5 all apply.
  const pulled = await gitAndSharePull(a);
  assertMatch(
    pulled.all,
    new RegExp(`BIMRI ERROR: share record \\.bimri-share/${B}/00000002\\.json`),
  );
  assertEquals(await textOf(a, "team.key"), "Team value b two.");
  assertEquals(await textOf(a, "other.key"), "Other from b.");
  assertEquals(await openConflicts(a), []);

  // B's owner removes the junk; C pulls only now (seq 2 missing, not refused).
  await gitOk(b, ["rm", "-q", junk]);
  await gitOk(b, ["commit", "-q", "-m", "remove junk"]);
  await publish(b, "b removed junk");
  for (const clone of [a, c]) {
    const again = await gitAndSharePull(clone);
    assertEquals(again.code, 0, again.all);
    assert(!/BIMRI SHARE GAP/.test(again.all), again.all);
    const status = await must(clone, ["share", "status"]);
    assert(!/BIMRI SHARE GAP/.test(status), status);
    assertMatch(status, /Records waiting to be pulled: 0\./);
  }
  for (const clone of [a, b, c]) {
    assertEquals(await textOf(clone, "team.key"), "Team value b two.", clone);
    assertEquals(await textOf(clone, "other.key"), "Other from b.", clone);
    const doctor = await bimri(clone, ["doctor"]);
    assert(!/BIMRI SHARE GAP|00000002\.json/.test(doctor.stdout + doctor.stderr), doctor.stdout);
  }
});

Deno.test("a pusher cannot make a clone skip a real record: `passed` counts only as its replica signed it", async () => {
  const clone = await tempStore();
  const share = join(clone, ".bimri-share");
  const r = mintReplicaId();
  const hand = handReplica(share, r);
  const write = (record: ShareRecord) =>
    Deno.writeTextFileSync(join(share, r, recordName(record.seq)), recordText(record));
  write(hand.sign(changeRecord(r, 1, "k.one", shareEntry("One."), null, {})));
  // Record 2 (withheld by the pusher) changed k.one, and record 3 replaced it.
  const three = hand.sign(changeRecord(r, 3, "k.one", shareEntry("Three."), `${r}:2`, {}));
  await bimri(clone, ["share", "pull"]);
  await must(clone, ["share", "trust", r, "--human-approved"]);
  // The pusher adds `passed: 1` to record 3 and keeps its signature: forged.
  write({ ...three, passed: 1 });
  const forged = await bimri(clone, ["share", "pull"]);
  assertEquals(forged.code, 2, forged.stderr);
  assertMatch(forged.stderr, /00000003\.json has a signature that does not verify/);
  // Or drops the signature: a record without one may not pass over anything.
  const { signature: _dropped, ...bare } = three;
  write({ ...bare, passed: 1 });
  const unsigned = await bimri(clone, ["share", "pull"]);
  assertMatch(unsigned.stderr, /00000003\.json field passed is allowed only in a signed record/);
  // The genuine record 3 still waits for record 2, which the gap names.
  write(three);
  await bimri(clone, ["share", "pull"]);
  assertEquals(await textOf(clone, "k.one"), "One.");
  const status = await must(clone, ["share", "status"]);
  assertMatch(status, new RegExp(`^BIMRI SHARE GAP: replica ${r} is missing record 2 `, "m"));
});
