/**
 * Flag syntax the reference's argparse accepts: unambiguous long-flag
 * prefixes (allow_abbrev) and `type=int` values read like Python's int(),
 * negative numbers included, which then meet each verb's own range check.
 */
import {
  bimri,
  diffTrees,
  expectRefused,
  hashTree,
  must,
  newSubject,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { assertEquals, assertMatch } from "../helpers/assert.ts";

/** Runs each refused command and asserts exit 2, its message, and that the store did not change. */
async function refused(root: string, cases: [string[], RegExp][]): Promise<void> {
  for (const [args, message] of cases) await expectRefused(root, args, message);
}

Deno.test("long flags may be shortened to any unambiguous prefix, on every verb", async () => {
  const root = await tempStore();
  assertMatch(
    await must(root, ["start", "--act", "codex"]),
    /^=== BIMRI BRIEF R000001 \| .* \| codex ===$/m,
  );
  const run = await startRun(root, "claude");
  // `--r` is --run: the reference's subparsers have no --root to compete with.
  assertMatch(
    await must(root, ["journal", "--r", run, "--te", "Prefixed.", "--imp", "4"]),
    /^R000002-E\d{3}\n$/,
  );
  await must(root, [
    "propose",
    "--ru",
    run,
    "--new",
    "--ti",
    "2",
    "--ke",
    "prefix.one",
    "--te=Prefixed memory.",
  ]);
  await must(root, ["sync", "--r", run]);
  assertMatch(await must(root, ["get", "--k", "prefix.one"]), /\tPrefixed memory\.$/m);
  assertMatch(
    await must(root, ["recall", "--key", "prefix.one", "--hist"]),
    /\tPrefixed memory\.$/m,
  );
  const found = JSON.parse(
    await must(root, ["search", "--query", "prefixed", "--lim", "1", "--js"]),
  );
  assertEquals(found.matches.length, 1);
  assertMatch(await must(root, ["review", "--al"]), /^Legacy review records: 0$/m);
  const closed = JSON.parse(
    await must(root, ["close", "--run", run, "--out", "success", "--sum", "hi", "--json"]),
  );
  assertEquals([closed.run, closed.outcome], [run, "success"]);
});

Deno.test("a prefix of several flags is refused as ambiguous, and nothing is written", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  await refused(root, [
    [
      ["close", "--run", run, "--s", "done"],
      /^BIMRI ERROR: close: Option '--s' is ambiguous: it could be --session, --summary\. Write more of the name\. See `bimri close --help`\.$/m,
    ],
    [
      ["propose", "--run", run, "--k", "a.b", "--text", "T."],
      /Option '--k' is ambiguous: it could be --key, --kind\./,
    ],
    [
      ["recall", "--key", "a.b", "--h"],
      /Option '--h' is ambiguous: it could be --help, --history\./,
    ],
  ]);
});

Deno.test("an abbreviated --help prints the verb's help and runs nothing", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  const before = hashTree(root);
  const help = await bimri(root, ["close", "--run", run, "--he"]);
  assertEquals(help.code, 0, help.stderr);
  assertMatch(help.stdout, /^usage: bimri close /);
  assertEquals(diffTrees(before, hashTree(root)), null);
  // Before the verb, --root may be shortened too.
  const status = await bimri(root, ["--ro", root, "status"], { noRoot: true });
  assertEquals(status.code, 0, status.stderr);
  assertMatch(status.stdout, /\| runs 1 \| active 1$/m);
});

let seeded: Promise<string> | undefined;

/** A store holding eleven subjects that all match the word `needle`. */
function needleStore(): Promise<string> {
  seeded ??= (async () => {
    const root = await tempStore();
    const run = await startRun(root);
    for (let n = 1; n <= 11; n++) {
      const key = `needle.n${String(n).padStart(2, "0")}`;
      await must(root, newSubject(run, key, `Needle ${n}.`));
    }
    await must(root, ["close", "--run", run, "--outcome", "success", "--summary", "Seeded."]);
    return root;
  })();
  return seeded;
}

async function shown(root: string, args: string[]): Promise<number> {
  const data = JSON.parse(await must(root, [...args, "--json"]));
  return "matches" in data ? data.matches.length : data.limit;
}

Deno.test("--limit 1_0 is ten, as int('1_0') is", async () => {
  const root = await needleStore();
  assertEquals(await shown(root, ["search", "--query", "needle", "--limit", "1_0"]), 10);
  assertEquals(await shown(root, ["review", "--limit", "1_0"]), 10);
});

Deno.test("--limit +5 is five", async () => {
  const root = await needleStore();
  assertEquals(await shown(root, ["recall", "--query", "needle", "--limit", "+5"]), 5);
  assertEquals(await shown(root, ["review", "--limit", "+5"]), 5);
});

Deno.test("integer flags allow the whitespace int() strips around them", async () => {
  const root = await needleStore();
  assertEquals(await shown(root, ["search", "--query", "needle", "--limit", " 5 "]), 5);
  assertEquals(await shown(root, ["get", "--key", "needle.n01", "--limit", " 5 "]), 1);
  // U+0085 and U+3000 are whitespace to Python, not to String.prototype.trim.
  assertEquals(await shown(root, ["review", "--limit", "\u3000 5\x85"]), 5);
  const run = await startRun(root);
  const id = (await must(root, [
    "propose",
    "--run",
    run,
    "--tier",
    " 2 ",
    "--importance",
    "\t+4\n",
    "--key",
    "needle.n01",
    "--text",
    "Needle again.",
  ])).trim();
  assertMatch(id, /^R\d{6}-Q\d{3}$/);
  assertMatch(
    await must(root, ["journal", "--run", run, "--text", "Spaced.", "--importance", " 0_5 "]),
    /-E\d{3}\n$/,
  );
  await must(root, ["close", "--run", run, "--summary", "Done."]);
  const [entry] = JSON.parse(await must(root, ["get", "--key", "needle.n01", "--json"])).matches;
  assertEquals([entry.text, entry.tier, entry.importance], ["Needle again.", 2, 4]);
});

Deno.test("what int() refuses is refused before the verb runs", async () => {
  const root = await needleStore();
  const run = await startRun(root);
  const whole = /needs a whole number/;
  await refused(root, [
    [
      ["search", "--query", "needle", "--limit", "1__0"],
      /^BIMRI ERROR: search: Option '--limit' needs a whole number \(got "1__0"\)\. See `bimri search --help`\.$/m,
    ],
    [["recall", "--query", "needle", "--limit=_1"], whole],
    [["get", "--key", "needle.n01", "--limit", "1_"], whole],
    [["review", "--offset", "1.0"], whole],
    [["journal", "--run", run, "--text", "T.", "--importance", "\x1c3"], whole],
    [
      ["propose", "--run", run, "--key", "needle.n02", "--text", "T.", "--observations", "two"],
      whole,
    ],
  ]);
  await must(root, ["close", "--run", run, "--summary", "Done."]);
});

Deno.test("a negative value reaches the verb's own range check", async () => {
  const root = await needleStore();
  await refused(root, [
    [["review", "--offset", "-1"], /^BIMRI ERROR: review offset must be zero or greater\.$/m],
    [["review", "--limit", "-1"], /^BIMRI ERROR: review limit must be at least one\.$/m],
    [["search", "--query", "needle", "--limit", "-1"], /--limit must be a positive integer/],
  ]);
});

Deno.test("a value outside a flag's choices is refused in argparse's words", async () => {
  const root = await needleStore();
  const run = await startRun(root);
  const propose = ["propose", "--run", run, "--key", "needle.n09", "--text", "T.", "--new-subject"];
  await refused(root, [
    [
      [...propose, "--tier", "2", "--trust", "contested"],
      /^BIMRI ERROR: propose: argument --trust: invalid choice: 'contested' \(choose from 'confirmed', 'working'\)\. See `bimri propose --help`\.$/m,
    ],
    [
      [...propose, "--tier", "4"],
      /argument --tier: invalid choice: '4' \(choose from '1', '2', '3'\)/,
    ],
    [[...propose, "--tier", "2", "--source", "it's"], /invalid choice: "it's" \(choose from /],
  ]);
  await must(root, ["close", "--run", run, "--summary", "Done."]);
});
