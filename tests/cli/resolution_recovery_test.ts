import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  must,
  newSubject,
  pathExists,
  readStoreJson,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

const WORKING = ["--source", "agent", "--trust", "working"];
const CONFIRMED = ["--source", "user", "--trust", "confirmed"];

function writeJson(root: string, rel: string, value: unknown): void {
  Deno.writeTextFileSync(join(root, ".bimri", rel), JSON.stringify(value, null, 2) + "\n");
}

/** Two runs staged on the same base; the first lands, the second is contested. */
async function contested(
  root: string,
  key: string,
  candidateFlags: string[],
): Promise<{ candidate: string; conflict: string; candidateRun: string }> {
  const writerRun = await startRun(root, "writer");
  const candidateRun = await startRun(root, "candidate");
  await must(root, newSubject(writerRun, key, "The live value.", WORKING));
  const candidate =
    (await must(root, newSubject(candidateRun, key, "The chosen value.", candidateFlags)))
      .trim();
  await must(root, ["sync", "--run", writerRun]);
  await must(root, ["sync", "--run", candidateRun]);
  const decision = readStoreJson(root, `decisions/${candidate}.json`);
  assertEquals(decision.outcome, "contested");
  return { candidate, conflict: decision.conflict_id as string, candidateRun };
}

Deno.test("choosing a candidate another run already made current writes no revision and passes doctor", async () => {
  const root = await tempStore();
  const { candidate, conflict } = await contested(root, "reflected.key", CONFIRMED);
  const later = await startRun(root, "later");
  await must(root, [
    "propose",
    "--run",
    later,
    "--tier",
    "2",
    "--key",
    "reflected.key",
    "--text",
    "The chosen value.",
    ...CONFIRMED,
  ]);
  await must(root, ["sync", "--run", later]);
  const head = readStoreJson(root, "state.json").head_revision;
  const resolved = await bimri(root, [
    "resolve",
    conflict,
    "--choose",
    candidate,
    "--human-approved",
  ]);
  assertEquals(resolved.code, 0, resolved.stderr);
  assertMatch(resolved.stdout, new RegExp(`resolved with ${candidate}`));
  assertEquals(readStoreJson(root, "state.json").head_revision, head);
  assertEquals(readStoreJson(root, `resolutions/${conflict}.json`).revision_after, head);
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout);
  assertMatch(doctor.stdout, /BIMRI doctor: PASSED/);
});

Deno.test("a finalization cut short (answer applying, decision still contested) is finished by resolving again", async () => {
  const root = await tempStore();
  const { candidate, conflict } = await contested(root, "interrupted.key", WORKING);
  await must(root, ["resolve", conflict, "--choose", candidate, "--human-approved"]);
  const head = readStoreJson(root, "state.json").head_revision;
  const answer = readStoreJson(root, `resolutions/${conflict}.json`);
  const applying: Record<string, unknown> = { ...answer, status: "applying" };
  delete applying.resolved_at;
  delete applying.revision_after;
  writeJson(root, `resolutions/${conflict}.json`, applying);
  const decision = readStoreJson(root, `decisions/${candidate}.json`);
  decision.outcome = "contested";
  decision.revision = applying.revision_before;
  delete decision.resolution_id;
  delete decision.resolution_choice;
  delete decision.resolved_at;
  assertEquals(decision.initial_outcome, "contested");
  writeJson(root, `decisions/${candidate}.json`, decision);
  const retried = await bimri(root, [
    "resolve",
    conflict,
    "--choose",
    candidate,
    "--human-approved",
  ]);
  assertEquals(retried.code, 0, retried.stderr);
  assertEquals(readStoreJson(root, "state.json").head_revision, head);
  assertEquals(readStoreJson(root, `resolutions/${conflict}.json`).status, "resolved");
  assertEquals(readStoreJson(root, `resolutions/${conflict}.json`).revision_after, head);
  const finished = readStoreJson(root, `decisions/${candidate}.json`);
  assertEquals([finished.outcome, finished.resolution_id], ["accepted", conflict]);
});

Deno.test("a stale proposal without a preflight receipt blocks only its own sync and raises no conflict", async () => {
  const root = await tempStore();
  const writerRun = await startRun(root, "writer");
  const pendingRun = await startRun(root, "pending");
  const written = (await must(root, newSubject(writerRun, "receiptless.key", "Accepted.", WORKING)))
    .trim();
  const pending =
    (await must(root, newSubject(pendingRun, "receiptless.key", "Unreceipted.", WORKING)))
      .trim();
  const proposal = readStoreJson(root, `proposals/${pending}.json`);
  delete proposal.preflight_receipt;
  writeJson(root, `proposals/${pending}.json`, proposal);
  await must(root, ["sync", "--run", writerRun]);
  assertEquals(readStoreJson(root, `decisions/${written}.json`).outcome, "accepted");
  const blocked = await bimri(root, ["sync", "--run", pendingRun]);
  assertEquals(blocked.code, 2, blocked.stdout);
  assertMatch(blocked.stderr, /no validated versioned preflight receipt/);
  assert(!pathExists(join(root, ".bimri/decisions", `${pending}.json`)));
  assertEquals(readStoreJson(root, "state.json").conflict_count, 0);
});

Deno.test("replaying a close whose archive row names a different line stops: authority recovery is required", async () => {
  const root = await tempStore();
  const run = await startRun(root, "archiver");
  await must(root, newSubject(run, "archived.key", "The exact archived line.", WORKING));
  await must(root, ["sync", "--run", run]);
  const close = (await must(root, [
    "propose",
    "--run",
    run,
    "--operation",
    "close",
    "--key",
    "archived.key",
    ...WORKING,
  ])).trim();
  await must(root, ["sync", "--run", run]);
  const folder = join(root, ".bimri/archive");
  const month = [...Deno.readDirSync(folder)].map((e) => e.name).find((n) => n.endsWith(".md"));
  assert(month !== undefined);
  const archive = Deno.readTextFileSync(join(folder, month));
  const row = archive.split("\n").find((l) => l.includes(`[BY:${close}] [closed] `));
  assert(row !== undefined, archive);
  Deno.writeTextFileSync(
    join(folder, month),
    archive.replace(row, `${row.slice(0, row.indexOf("[closed] "))}[closed] another line`),
  );
  const proposal = readStoreJson(root, `proposals/${close}.json`);
  writeJson(root, `decisions/${close}.json`, {
    bimri_version: "5.0",
    proposal_id: close,
    outcome: "applying",
    recorded_at: readStoreJson(root, `decisions/${close}.json`).recorded_at,
    base_hash: proposal.base_hash,
    revision_before: proposal.base_revision,
  });
  const replay = await bimri(root, ["sync", "--run", run]);
  assertEquals(replay.code, 2, replay.stdout);
  assertMatch(replay.stderr, /authority recovery is required/);
  assertMatch(replay.stderr, /close target is absent without exact archive provenance/);
});
