/**
 * A proposal file its run log never names (a propose killed between the file
 * and its `[PROPOSE:]` line) is harmless while its run is open: the run's next
 * sync or close decides it. Once the run has synced past it or closed without
 * a decision, that decision is missing authority, as for a logged proposal:
 * doctor fails, canonical writes refuse and write nothing, and the owner can
 * quarantine the missing decision.
 */
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  copyStore,
  expectRefused,
  must,
  newSubject,
  readStoreJson,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

const MISSING = /decision R000002-Q001 is missing after its proposal was durably processed/;

/** A store whose run R000002 crashed after writing proposal R000002-Q001, before its log line. */
async function crashedProposalStore(): Promise<{ root: string; seed: string; crashed: string }> {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  await must(root, newSubject(seed, "anchor.key", "Anchor value."));
  await must(root, ["sync", "--run", seed]);
  const crashed = await startRun(root, "crashed");
  const cut = await bimri(root, newSubject(crashed, "pending.key", "Pending value."), {
    env: { BIMRI_FAULT: "after-proposal-file" },
  });
  assertEquals(cut.code, 86, cut.stderr);
  const log = Deno.readTextFileSync(`${root}/.bimri/log/${crashed}.md`);
  assert(!log.includes("[PROPOSE:"), "the crash left the proposal without its marker");
  return { root, seed, crashed };
}

function editState(root: string, edit: (state: Record<string, unknown>) => void): void {
  const state = readStoreJson(root, "state.json");
  edit(state);
  Deno.writeTextFileSync(`${root}/.bimri/state.json`, JSON.stringify(state, null, 2) + "\n");
}

function activeRuns(state: Record<string, unknown>): Record<string, { base_revision: number }> {
  return state.active_runs as Record<string, { base_revision: number }>;
}

Deno.test("an unlogged proposal of an open run is a benign crash window that its run's close decides", async () => {
  const { root, seed, crashed } = await crashedProposalStore();
  const doctor = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(doctor.code, 0, doctor.stdout);
  await must(root, ["sync", "--run", seed]);
  await must(root, ["close", "--run", crashed, "--outcome", "success"]);
  assertEquals(readStoreJson(root, "decisions/R000002-Q001.json").outcome, "accepted");
  assertEquals((await bimri(root, ["doctor"])).code, 0);
});

Deno.test("an unlogged proposal whose run base moved past it without a decision stops writes", async () => {
  const { root, seed, crashed } = await crashedProposalStore();
  // Another run advances the head; the crashed run's base then claims it, as
  // if a sync had processed the proposal and lost its decision.
  const writer = await startRun(root, "writer");
  await must(root, newSubject(writer, "other.key", "Other value."));
  await must(root, ["sync", "--run", writer]);
  editState(root, (state) => {
    activeRuns(state)[crashed].base_revision = state.head_revision as number;
  });
  const doctor = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(doctor.code, 1, doctor.stdout);
  assertMatch(doctor.stdout, MISSING);
  await expectRefused(root, ["sync", "--run", crashed], MISSING);
  await expectRefused(root, ["sync", "--run", seed], MISSING);
  assertEquals((await bimri(root, ["get", "--key", "pending.key"])).code, 1, "never applied");
});

Deno.test("an unlogged proposal of a run closed without its decision stops writes until the owner quarantines it", async () => {
  const { root, seed, crashed } = await crashedProposalStore();
  // Closed by hand: the closing line, and the handle freed.
  Deno.writeTextFileSync(
    `${root}/.bimri/log/${crashed}.md`,
    `[CLOSED:${crashed} 2026-12-04T00:00:00Z]\n`,
    { append: true },
  );
  editState(root, (state) => delete activeRuns(state)[crashed]);
  const doctor = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(doctor.code, 1, doctor.stdout);
  assertMatch(doctor.stdout, MISSING);
  await expectRefused(root, ["sync", "--run", seed], MISSING);
  await expectRefused(
    root,
    ["close", "--run", seed, "--outcome", "success"],
    MISSING,
  );
  // The summary cache must not hide it either: a second copy starts cold.
  const cold = await copyStore(root);
  await Deno.remove(`${cold}/.bimri/audit-integrity-summary.json`).catch(() => {});
  await expectRefused(cold, ["sync", "--run", seed], MISSING);
  // The missing decision is anchored, so the owner's recovery path is open.
  const quarantined = await bimri(root, [
    "quarantine-authority",
    "--kind",
    "decision",
    "--id",
    "R000002-Q001",
    "--human-approved",
  ]);
  assertEquals(quarantined.code, 0, quarantined.stderr);
  const after = await bimri(root, ["doctor", "--read-only"]);
  assertMatch(after.stdout, /decision R000002-Q001 .*is quarantined/);
});
