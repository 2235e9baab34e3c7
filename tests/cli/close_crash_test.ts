/**
 * Crash safety of close: a close killed after its closure markers are
 * durable but before state frees the handle leaves a run that state still
 * lists as active while its log says it is closed. Nothing may be staged in
 * that run, and repeating the close finishes it.
 */
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, expectRefused, must, newSubject, startRun, tempStore } from "../helpers/cli.ts";

Deno.test("a close killed after its closure markers refuses new proposals in that run until the close is repeated", async () => {
  const root = await tempStore();
  const run = await startRun(root, "codex", ["--session", "s1"]);
  await must(root, newSubject(run, "a.one", "A one."));
  await must(root, ["sync", "--run", run]);
  const other = await startRun(root, "claude");

  const crashed = await bimri(root, ["close", "--run", run, "--outcome", "success"], {
    env: { BIMRI_FAULT: "close-after-closure" },
  });
  assertEquals(crashed.code, 86, "the fault point must stop the close");
  const log = () => Deno.readTextFileSync(`${root}/.bimri/log/${run}.md`);
  assertMatch(log(), /^\[CLOSED:R000001 /m);
  const state = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  assertEquals(Object.keys(state.active_runs).sort(), [run, other], "state still lists the run");

  // The harness resumes the session's run (a SessionEnd hook killed by its timeout, then a resume).
  assertMatch(
    await must(root, ["start", "--actor", "codex", "--session", "s1"]),
    /^Resumed existing run handle for this harness session\.\nRun handle: R000001\./m,
  );
  await expectRefused(
    root,
    newSubject(run, "a.two", "A two."),
    /R000001 is already closed in its log.*close --run R000001/,
  );

  // Shared writes are not paused for anyone.
  await must(root, newSubject(other, "b.one", "B one."));
  assertMatch(await must(root, ["sync", "--run", other]), /applied 1,/);

  // Repeating the close finishes it once.
  await must(root, ["close", "--run", run, "--outcome", "success"]);
  assertEquals(log().split("\n").filter((l) => l.startsWith("[OUTCOME:")).length, 1);
  assertEquals(log().split("\n").filter((l) => l.startsWith("[CLOSED:")).length, 1);
  const after = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  assertEquals(Object.keys(after.active_runs), [other]);
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout + doctor.stderr);
});
