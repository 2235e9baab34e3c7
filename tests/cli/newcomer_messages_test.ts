/**
 * Messages a newcomer can act on (issue 45): propose names the missing flag,
 * held proposals are named with their key, and review prints the exact
 * command of every choice. Black-box through the CLI.
 */
import { assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, must, newSubject, proposeTier2, startRun, tempStore } from "../helpers/cli.ts";

Deno.test("propose of a new key without --tier names the missing flag", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  const r = await bimri(root, [
    "propose",
    "--run",
    run,
    "--new-subject",
    "--key",
    "a.b",
    "--text",
    "X.",
  ]);
  assertEquals(r.code, 2, r.stdout);
  assertMatch(r.stderr, /^BIMRI ERROR: .*a\.b is a new key, so --tier is required/m);
});

Deno.test("a new key without --new-subject: propose and sync name the proposal and the key", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  const p = await bimri(root, proposeTier2(run, "new.key", "X."));
  assertEquals(p.code, 0, p.stderr);
  assertEquals(p.stdout, `${run}-Q001\n`);
  assertMatch(
    p.stderr,
    new RegExp(`^BIMRI: ${run}-Q001 \\[new\\.key\\] will be held at sync: .*--new-subject`, "m"),
  );
  const s = await bimri(root, ["sync", "--run", run]);
  assertEquals(s.code, 0, s.stderr);
  // The reference's stdout lines stay as they are.
  assertMatch(s.stdout, /^BIMRI HELD: No exact current key matched\./m);
  assertMatch(s.stdout, /^BIMRI: synced .*held candidates 1,/m);
  assertMatch(
    s.stderr,
    new RegExp(`^BIMRI: held ${run}-Q001 \\[new\\.key\\]: .*--new-subject`, "m"),
  );
  const review = await bimri(root, ["review"]);
  assertEquals(review.code, 0, review.stderr);
  assertNotMatch(review.stdout, /Q001/);
  assertMatch(
    review.stderr,
    new RegExp(
      `^BIMRI: held ${run}-Q001 \\[new\\.key\\] \\(not a conflict\\): .*bimri propose --run <run> --key new\\.key --new-subject --tier 2 --importance 3 --text 'X\\.'`,
      "m",
    ),
  );
});

async function conflictStore(): Promise<{ root: string; candidate: string }> {
  const root = await tempStore();
  const seed = await startRun(root, "alpha");
  await must(root, newSubject(seed, "api.timeout", "Timeout is 45 seconds."));
  await must(root, ["close", "--run", seed, "--outcome", "success", "--summary", "Seeded."]);
  const a = await startRun(root, "alpha");
  const b = await startRun(root, "beta");
  await must(root, [
    "propose",
    "--run",
    a,
    "--key",
    "api.timeout",
    "--text",
    "Timeout is 30 seconds.",
  ]);
  const candidate = (await must(root, [
    "propose",
    "--run",
    b,
    "--key",
    "api.timeout",
    "--text",
    "Timeout is 60 seconds.",
  ])).trim();
  await must(root, ["sync", "--run", a]);
  await must(root, ["sync", "--run", b]);
  return { root, candidate };
}

Deno.test("review prints the exact command of every choice: keep live, each candidate, dismiss", async () => {
  const { root, candidate } = await conflictStore();
  const review = await must(root, ["review"]);
  assertMatch(review, /^MEMORY CONFLICT C000001 /m);
  assertMatch(review, /^Keep live: "Timeout is 30 seconds\." remains unchanged\.$/m);
  assertMatch(review, /^ {2}keep live: bimri resolve C000001 --choose current --human-approved$/m);
  assertMatch(
    review,
    new RegExp(
      `^  choose ${candidate}: bimri resolve C000001 --choose ${candidate} --human-approved$`,
      "m",
    ),
  );
  assertMatch(
    review,
    /^ {2}dismiss the question: bimri resolve C000001 --choose dismiss --human-approved$/m,
  );
  // The printed command runs as printed.
  const line = /^ {2}dismiss the question: bimri (.*)$/m.exec(review)![1];
  const done = await bimri(root, line.split(" "));
  assertEquals(done.code, 0, done.stderr);
  assertMatch(await must(root, ["review"]), /total 0 \| displayed 0-0/);
});
