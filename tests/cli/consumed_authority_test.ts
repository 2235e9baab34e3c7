/**
 * Records a command consumes are proven where it consumes them, and damaged
 * authority is reported in the words scripts written against the reference
 * look for:
 * - a terminal decision a sync would take as a proposal's outcome must hold
 *   its effect in the revision it names; an answer not finalized yet must
 *   hold the chosen effect (sync, close and status refuse, doctor fails);
 * - a sync refused for damaged authority still reports the direct edit of
 *   bimri.md it preserved first;
 * - propose never reads an older base revision through a link.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  diffTrees,
  expectOk,
  hashTree,
  must,
  newSubject,
  readStoreJson,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

const PAUSED = /authority recovery is required: shared-memory writes are paused/;

function writeJson(root: string, rel: string, value: unknown): void {
  Deno.writeTextFileSync(join(root, ".bimri", rel), JSON.stringify(value, null, 2) + "\n");
}

/** A store with one contested candidate (run `candidate`, proposal `candidateId`) in conflict C000001. */
async function contestedStore(prefix: string) {
  const root = await tempStore(prefix);
  const candidate = await startRun(root, "candidate");
  const writer = await startRun(root, "writer");
  const candidateId = (await must(root, [
    ...newSubject(candidate, "shared.value", "The candidate value."),
  ])).trim();
  await must(root, newSubject(writer, "shared.value", "The writer value."));
  await must(root, ["sync", "--run", writer]);
  await must(root, ["sync", "--run", candidate]);
  assertEquals(readStoreJson(root, `decisions/${candidateId}.json`).outcome, "contested");
  return { root, candidate, candidateId };
}

for (const outcome of ["accepted", "noop"]) {
  Deno.test(`a forged ${outcome} decision of an unsynced proposal is refused by sync and close, and doctor fails`, async () => {
    const root = await tempStore("bimri-forged-terminal-");
    const run = await startRun(root, "agent");
    const id = (await must(root, newSubject(run, "forged.effect", "Never decided."))).trim();
    const forged: Record<string, unknown> = {
      bimri_version: "5.0",
      proposal_id: id,
      outcome,
      recorded_at: "2026-07-27T00:00:00Z",
      revision: 0,
    };
    if (outcome === "noop") forged.reason = "current memory already matches";
    writeJson(root, `decisions/${id}.json`, forged);
    const before = hashTree(root);
    for (const args of [["sync", "--run", run], ["close", "--run", run]]) {
      const r = await bimri(root, args);
      assertEquals(r.code, 2, `${args[0]}: ${r.stderr}`);
      assertMatch(
        r.stderr,
        /decision R000001-Q001 names revision V000000, which does not contain the proposal's recorded effect/,
      );
      assertMatch(r.stderr, PAUSED);
    }
    const filter = (t: Map<string, string>) =>
      new Map([...t].filter(([k]) => !k.startsWith(".bimri/audit-")));
    assertEquals(diffTrees(filter(before), filter(hashTree(root))), null);
    assertEquals(readStoreJson(root, "state.json").head_revision, 0);
    const doctor = await bimri(root, ["doctor"]);
    assertEquals(doctor.code, 1);
    assertMatch(doctor.stdout, /does not contain the proposal's recorded effect/);
  });
}

Deno.test("a genuine terminal decision a crash left before the state step still syncs", async () => {
  const root = await tempStore("bimri-genuine-terminal-");
  const run = await startRun(root, "agent");
  await must(root, newSubject(run, "genuine.effect", "Decided for real."));
  await must(root, ["sync", "--run", run]);
  // The run's base as a crash after the decision, before the state step, leaves it.
  const state = readStoreJson(root, "state.json");
  (state.active_runs as Record<string, { base_revision: number }>)[run].base_revision = 0;
  writeJson(root, "state.json", state);
  const r = await bimri(root, ["sync", "--run", run]);
  assertEquals(r.code, 0, r.stderr);
  assertEquals(readStoreJson(root, "state.json").head_revision, 1);
});

Deno.test("an answer not finalized yet must hold the chosen effect: sync, close and status refuse, doctor fails", async () => {
  const { root, candidate, candidateId } = await contestedStore("bimri-forged-answer-");
  const conflict = readStoreJson(root, "conflicts/C000001.json");
  writeJson(root, "resolutions/C000001.json", {
    bimri_version: "5.0",
    conflict_id: "C000001",
    choice: candidateId,
    status: "resolved",
    started_at: "2026-07-27T00:00:00Z",
    resolved_at: "2026-07-27T00:00:01Z",
    by: "user",
    proposal_ids: conflict.proposal_ids,
    revision_before: 1,
    revision_after: 1,
  });
  const effect = /does not contain the chosen proposal's effect/;
  for (const args of [["sync", "--run", candidate], ["close", "--run", candidate]]) {
    const r = await bimri(root, args);
    assertEquals(r.code, 2, args[0]);
    assertMatch(r.stderr, effect);
  }
  const status = await bimri(root, ["status"]);
  assertEquals(status.code, 1);
  assertMatch(status.stdout, /AUTHORITY RECOVERY NEEDED/);
  assertMatch(status.stdout, effect);
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 1);
  assertMatch(doctor.stdout, effect);
  assertMatch(Deno.readTextFileSync(join(root, "bimri.md")), /The writer value\./);
  assertEquals(readStoreJson(root, "state.json").head_revision, 1);
});

Deno.test("a sync refused for damaged authority still reports the direct edit of bimri.md it preserved", async () => {
  const { root, candidate } = await contestedStore("bimri-refused-heal-");
  Deno.writeTextFileSync(join(root, ".bimri", "conflicts", "C000001.json"), "{broken");
  const canonical = Deno.readTextFileSync(join(root, "bimri.md"));
  Deno.writeTextFileSync(join(root, "bimri.md"), "a direct edit\n");
  const r = await bimri(root, ["sync", "--run", candidate]);
  assertEquals(r.code, 2);
  assertMatch(
    r.stderr,
    /BIMRI NOTICE: a direct edit to bimri\.md was preserved at \.bimri\/recovery\/manual-hot-/,
  );
  assertMatch(r.stderr, /BIMRI ERROR: AUTHORITY RECOVERY NEEDED: conflict C000001/);
  assert(r.stderr.indexOf("BIMRI NOTICE") < r.stderr.indexOf("BIMRI ERROR"), r.stderr);
  assertEquals(Deno.readTextFileSync(join(root, "bimri.md")), canonical);
});

Deno.test("propose refuses an older base revision that is a symbolic link, staging nothing", async () => {
  const root = await tempStore("bimri-base-link-");
  const stale = await startRun(root, "stale");
  const writer = await startRun(root, "writer");
  await must(root, newSubject(writer, "advance.head", "Advance the head."));
  await must(root, ["sync", "--run", writer]);
  const base = join(root, ".bimri", "revisions", "V000000.md");
  const outside = join(root, "outside-base.md");
  Deno.copyFileSync(base, outside);
  Deno.removeSync(base);
  Deno.symlinkSync(outside, base, { type: "file" });
  const before = hashTree(root);
  const r = await bimri(root, newSubject(stale, "linked.base", "Must not stage."));
  assertEquals(r.code, 2);
  assertMatch(r.stderr, /base revision V000000 is missing or unsafe/);
  assertEquals(diffTrees(before, hashTree(root)), null);
  const status = await bimri(root, ["status"]);
  assertEquals(status.code, 1);
  assertMatch(status.stdout, /missing or unsafe revision V000000/);
});

Deno.test("damaged authority is named in the reference's words", async () => {
  const root = await tempStore("bimri-reference-words-");
  const run = await startRun(root, "agent");
  const first = (await must(root, newSubject(run, "words.first", "First."))).trim();
  Deno.removeSync(join(root, ".bimri", "proposals", `${first}.json`));
  const missing = await bimri(root, ["status"]);
  assertEquals(missing.code, 1);
  assertMatch(missing.stdout, /proposal R000001-Q001 is missing despite its durable reference/);
  const sync = await bimri(root, ["sync", "--run", run]);
  assertEquals(sync.code, 2);
  assertMatch(sync.stderr, PAUSED);

  const refused = await bimri(root, [
    "quarantine-authority",
    "--kind",
    "conflict",
    "--id",
    "C000999",
    "--human-approved",
  ]);
  assertEquals(refused.code, 2);
  assertMatch(refused.stderr, /conflict C000999 has no durable BIMRI reference/);

  const { root: contested, candidateId } = await contestedStore("bimri-reference-words-c-");
  Deno.removeSync(join(contested, ".bimri", "decisions", `${candidateId}.json`));
  const decision = await bimri(contested, ["status"]);
  assertEquals(decision.code, 1);
  assertMatch(
    decision.stdout,
    /decision R000001-Q001 is missing after its proposal was durably processed/,
  );
  assertMatch(decision.stdout, /candidate R000001-Q001 has no safe decision record/);
  writeJson(contested, "resolutions/C000001.json", {});
  const version = await bimri(contested, ["status"]);
  assertMatch(version.stdout, /unsupported resolution BIMRI version null/);

  const proposals = await tempStore("bimri-reference-words-p-");
  const p = await startRun(proposals, "agent");
  const id = (await must(proposals, newSubject(p, "words.base", "Base."))).trim();
  const record = readStoreJson(proposals, `proposals/${id}.json`);
  record.base_hash = "0".repeat(64);
  record.base_revision = 7;
  writeJson(proposals, `proposals/${id}.json`, record);
  const receipt = await bimri(proposals, ["status"]);
  assertMatch(receipt.stdout, /proposal preflight revision does not match proposal base revision/);
  assertMatch(receipt.stdout, /proposal preflight key hash does not match proposal base hash/);

  const junk = await tempStore("bimri-reference-words-j-");
  await startRun(junk, "agent");
  Deno.writeTextFileSync(join(junk, ".bimri", "conflicts", "Cjunk.json"), "{not a record");
  const doctor = expectOk(await bimri(junk, ["doctor"]), "doctor");
  assertMatch(
    doctor.stdout,
    /ignored non-authority JSON filename in conflict directory: Cjunk\.json\./,
  );
});
