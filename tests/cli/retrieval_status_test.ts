/**
 * `status`: the reference's lines (held candidates with their explanation,
 * outcomes counted once per run), orphan candidates in full, and exit 1 with
 * the complete recovery list when an authority record is damaged.
 */
import { join } from "node:path";
import { assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, newSubject, startRun, tempStore } from "../helpers/cli.ts";
import { must } from "./retrieval_fixture.ts";

Deno.test("status lists held candidates with their meaning and counts outcomes once per run", async () => {
  const root = await tempStore("bimri-status-");
  const run = await startRun(root, "codex");
  const other = await startRun(root, "claude");
  await must(root, [
    "propose",
    "--run",
    run,
    "--tier",
    "2",
    "--key",
    "deploy.windows",
    "--text",
    "Windows deploys need a reboot.",
  ]);
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

Deno.test("status names every orphan candidate when more than five are idle", async () => {
  const root = await tempStore("bimri-status-orphans-");
  const past = { env: { BIMRI_NOW: "2026-01-01T00:00:00Z" } };
  for (let i = 0; i < 7; i++) {
    const r = await bimri(root, ["start", "--actor", `agent${i}`], past);
    assertEquals(r.code, 0, r.stderr);
  }
  const status = await bimri(root, ["status"], { env: { BIMRI_NOW: "2026-01-05T00:00:00Z" } });
  assertEquals(status.code, 0, status.stderr);
  assertMatch(
    status.stdout,
    /^Orphan candidates \(never auto-closed\): R000001, R000002, R000003, R000004, R000005, R000006, R000007$/m,
  );
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
