/**
 * `status`: the reference's lines (held candidates with their explanation,
 * outcomes counted once per run), every active run on one line (orphan
 * candidates only in --json, as the brief's line points there), and exit 1 with
 * the complete recovery list when an authority record is damaged.
 */
import { join } from "node:path";
import { assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, newSubject, proposeTier2, startRun, tempStore } from "../helpers/cli.ts";
import { must } from "./retrieval_fixture.ts";

Deno.test("status lists held candidates with their meaning and counts outcomes once per run", async () => {
  const root = await tempStore("bimri-status-");
  const run = await startRun(root, "codex");
  const other = await startRun(root, "claude");
  await must(root, proposeTier2(run, "deploy.windows", "Windows deploys need a reboot."));
  await must(root, ["sync", "--run", run]);
  await must(root, ["close", "--run", run, "--outcome", "success", "--summary", "Done."]);
  // A second outcome line in the same log still counts as one run's outcome.
  Deno.writeTextFileSync(join(root, ".bimri", "log", `${run}.md`), "[OUTCOME:fail] again\n", {
    append: true,
  });
  const status = await bimri(root, ["status"]);
  assertEquals(status.code, 0, status.stderr);
  assertMatch(
    status.stdout,
    /^BIMRI engine v5\.1\.2 \| memory format v5\.1\.0 \| revision V000000 \| runs 2 \| active 1$/m,
  );
  assertMatch(status.stdout, new RegExp(`^Active runs: ${other} \\(claude\\)$`, "m"));
  assertMatch(status.stdout, /^Cold current: 0 \| Held candidates: 1$/m);
  assertMatch(
    status.stdout,
    /^ {2}held R000001-Q001 \[deploy\.windows\] No exact current key matched\. Search and reuse the intended key, or resubmit with --new-subject if this is genuinely new\.$/m,
  );
  assertMatch(status.stdout, /^Open conflicts: 0 \| proposals: 1 \| revisions: 1$/m);
  assertMatch(status.stdout, /^Outcomes: success=1$/m);
  assertNotMatch(status.stdout, /^Orphan candidates/m);
  await Deno.remove(root, { recursive: true });
});

Deno.test("status carries every active run; idle ones are orphan candidates only in --json", async () => {
  const root = await tempStore("bimri-status-orphans-");
  const past = { env: { BIMRI_NOW: "2026-01-01T00:00:00Z" } };
  for (let i = 0; i < 7; i++) {
    const r = await bimri(root, ["start", "--actor", `agent${i}`], past);
    assertEquals(r.code, 0, r.stderr);
  }
  const later = { env: { BIMRI_NOW: "2026-01-05T00:00:00Z" } };
  const status = await bimri(root, ["status"], later);
  assertEquals(status.code, 0, status.stderr);
  assertMatch(
    status.stdout,
    /^Active runs: R000001 \(agent0\), R000002 \(agent1\), R000003 \(agent2\), R000004 \(agent3\), R000005 \(agent4\), R000006 \(agent5\), R000007 \(agent6\)\nHot: /m,
  );
  assertNotMatch(status.stdout, /orphan/i);
  const json = await bimri(root, ["status", "--json"], later);
  assertEquals(JSON.parse(json.stdout).orphan_candidates.length, 7);
  await Deno.remove(root, { recursive: true });
});

Deno.test("a bare bimri (global flags only) is status, as in the reference; --help stays help", async () => {
  const root = await tempStore("bimri-status-bare-");
  await startRun(root, "codex");
  const bare = await bimri(root, []);
  const status = await bimri(root, ["status"]);
  assertEquals(bare.code, 0, bare.stderr);
  assertEquals(bare.stdout, status.stdout);
  const json = await bimri(root, ["--json"]);
  assertEquals(JSON.parse(json.stdout).active_runs.length, 1);
  const help = await bimri(root, ["--help"]);
  assertEquals(help.code, 0);
  assertMatch(help.stdout, /^usage: bimri /);
  await Deno.remove(root, { recursive: true });
});

Deno.test("status exits 1 and lists damaged authority in full", async () => {
  const root = await tempStore("bimri-status-damaged-");
  const run = await startRun(root, "codex");
  await must(root, newSubject(run, "a.b", "Alpha."));
  await must(root, ["sync", "--run", run]);
  Deno.writeTextFileSync(join(root, ".bimri", "decisions", `${run}-Q001.json`), '{"broken": tru');
  const status = await bimri(root, ["status"]);
  assertEquals(status.code, 1);
  assertMatch(
    status.stdout,
    /^BIMRI engine v5\.1\.2 \| memory format v5\.1\.0 \| revision V000001/,
  );
  assertMatch(status.stdout, /^AUTHORITY RECOVERY NEEDED/m);
  assertMatch(status.stdout, /R000001-Q001/);
  await Deno.remove(root, { recursive: true });
});
