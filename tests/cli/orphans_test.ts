import { assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, startRun, tempStore } from "../helpers/cli.ts";

const PAST = { BIMRI_NOW: "2026-11-01T08:00:00Z" };

Deno.test("start lists runs idle over 24 hours as orphan candidates, bounded to the five newest", async () => {
  const root = await tempStore();
  for (let i = 0; i < 2; i++) await bimri(root, ["start", "--actor", "old"], { env: PAST });
  const fresh = await bimri(root, ["start", "--actor", "codex"]);
  assertMatch(fresh.stdout, /^ORPHAN CANDIDATES \(never auto-closed\): R000001, R000002$/m);
  for (let i = 0; i < 5; i++) await bimri(root, ["start", "--actor", "old"], { env: PAST });
  const many = await bimri(root, ["start", "--actor", "codex"]);
  assertMatch(
    many.stdout,
    /^ORPHAN CANDIDATES \(never auto-closed\): 7 runs inactive over 24h; newest R000004, R000005, R000006, R000007, R000008; full list: status$/m,
  );
  // Orphans are never closed automatically.
  const state = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  assertEquals(Object.keys(state.active_runs).length, 9);
});

Deno.test("a resumed run is never its own orphan candidate; the brief keeps the reference's line order", async () => {
  const root = await tempStore();
  await bimri(root, ["start", "--actor", "old"], { env: PAST });
  await bimri(root, ["start", "--actor", "hook", "--session", "s1"], { env: PAST });
  // Damaged authority adds the recovery block, which comes before the orphan line.
  Deno.writeTextFileSync(`${root}/.bimri/proposals/R000001-Q001.json`, "{ broken");
  Deno.writeTextFileSync(
    `${root}/.bimri/log/R000001.md`,
    Deno.readTextFileSync(`${root}/.bimri/log/R000001.md`) +
      "[PROPOSE:R000001-Q001] set a.b\n",
  );
  const resumed = await bimri(root, ["start", "--actor", "hook", "--session", "s1"]);
  const lines = resumed.stdout.split("\n");
  assertEquals(lines[0], `=== BIMRI BRIEF R000002 | ${lines[0].split(" | ")[1]} | hook ===`);
  assertMatch(lines[1], /^Memory revision V000000 /);
  assertEquals(lines[2], "Resumed existing run handle for this harness session.");
  const recovery = lines.findIndex((l) => l.startsWith("AUTHORITY RECOVERY NEEDED"));
  const orphans = lines.indexOf("ORPHAN CANDIDATES (never auto-closed): R000001");
  assertEquals(recovery > 2 && orphans > recovery, true, resumed.stdout);
  assertMatch(lines[lines.length - 3], /^Run handle: R000002\./);
});

Deno.test("journal activity keeps a run out of the orphan list; recover-run closes it as partial", async () => {
  const root = await tempStore();
  const old = (await bimri(root, ["start", "--actor", "old"], { env: PAST })).stdout;
  assertMatch(old, /BIMRI RUN HANDLE: R000001/);
  await bimri(root, ["journal", "--run", "R000001", "--text", "still working"]);
  const brief = await bimri(root, ["start", "--actor", "codex"]);
  assertNotMatch(brief.stdout, /ORPHAN CANDIDATES/);
  const missing = await bimri(root, ["recover-run", "--run", "R000001"]);
  assertEquals(missing.code, 2);
  const recovered = await bimri(root, [
    "recover-run",
    "--run",
    "R000001",
    "--summary",
    "Owner confirmed.",
  ]);
  assertEquals(recovered.code, 0, recovered.stderr);
  const log = Deno.readTextFileSync(`${root}/.bimri/log/R000001.md`);
  assertMatch(log, /^\[OUTCOME:partial\] Owner confirmed\.$/m);
  assertMatch(log, /^\[CLOSED:R000001 /m);
});

Deno.test("run_dates stays bounded while keeping active runs", async () => {
  const root = await tempStore();
  const first = await startRun(root, "keeper");
  const state = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  // Simulate a long history of closed runs without spending minutes on real starts.
  state.run_count = 600;
  for (let n = 2; n <= 600; n++) state.run_dates[`R${String(n).padStart(6, "0")}`] = "2026-01-01";
  Deno.writeTextFileSync(`${root}/.bimri/state.json`, JSON.stringify(state, null, 2) + "\n");
  await startRun(root, "codex");
  const after = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  const runs = Object.keys(after.run_dates);
  assertEquals(runs.includes(first), true);
  assertEquals(runs.includes("R000601"), true);
  assertEquals(runs.includes("R000050"), false);
  assertEquals(runs.length, 501);
});

Deno.test("a hand-edited active run without timestamps still loads, is an orphan candidate, and closes", async () => {
  const root = await tempStore();
  await bimri(root, ["start", "--actor", "old", "--session", "s9"]);
  await bimri(root, ["start", "--actor", "other"]);
  const path = `${root}/.bimri/state.json`;
  const state = JSON.parse(Deno.readTextFileSync(path));
  delete state.active_runs.R000001.started_at;
  delete state.active_runs.R000001.last_activity_at;
  state.active_runs.R000002.last_activity_at = "yesterday-ish";
  state.active_runs.R000002.note = "kept as found";
  state.last_closed_at = "not a timestamp";
  Deno.writeTextFileSync(path, JSON.stringify(state, null, 2) + "\n");
  // R000002's unreadable last_activity_at falls back to its fresh started_at.
  const brief = await bimri(root, ["start", "--actor", "codex"]);
  assertEquals(brief.code, 0, brief.stderr);
  assertMatch(brief.stdout, /^ORPHAN CANDIDATES \(never auto-closed\): R000001$/m);
  const journal = await bimri(root, ["journal", "--run", "R000002", "--text", "still here"]);
  assertEquals(journal.code, 0, journal.stderr);
  const kept = JSON.parse(Deno.readTextFileSync(path)).active_runs.R000002;
  assertEquals(kept.note, "kept as found");
  assertMatch(kept.last_activity_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const closed = await bimri(root, [
    "close",
    "--actor",
    "old",
    "--session",
    "s9",
    "--summary",
    "done",
  ]);
  assertEquals(closed.code, 0, closed.stderr);
  const after = JSON.parse(Deno.readTextFileSync(path));
  assertEquals(Object.keys(after.active_runs).sort(), ["R000002", "R000003"]);
  assertEquals(after.session_runs, {});
  const doctor = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(doctor.code, 0, doctor.stdout + doctor.stderr);
});
