/**
 * What a user types is normalized and refused as the reference engine does
 * it: keys and actors are trimmed and lowercased, an empty tag or a blank
 * summary is refused, an empty summary or session counts as not given, and
 * each kind of bad character has its own message. A refusal writes nothing.
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  diffTrees,
  expectOk,
  hashTree,
  newSubject,
  readStoreJson,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

Deno.test("keys and actors are trimmed and lowercased; the stored forms are the lowercase ones", async () => {
  const root = await tempStore();
  const started = expectOk(await bimri(root, ["start", "--actor", " Codex "]), "start");
  const run = /BIMRI RUN HANDLE: (R\d{6})/.exec(started.stdout)![1];
  const state = readStoreJson(root, "state.json") as {
    active_runs: Record<string, { actor: string }>;
  };
  assertEquals(state.active_runs[run].actor, "codex");
  // As in the reference, an actor not given is `agent`.
  const bare = expectOk(await bimri(root, ["start"]), "start without --actor");
  assertMatch(bare.stdout, /^=== BIMRI BRIEF R000002 \| \S+ \| agent ===$/m);

  const proposed = await bimri(
    root,
    newSubject(run, "Launch.Price", "Launch at 49 EUR.", ["--tags", "Pricing, Q3"]),
  );
  assertEquals(proposed.code, 0, proposed.stderr);
  const proposal = readStoreJson(root, `proposals/${run}-Q001.json`);
  assertEquals(proposal.key, "launch.price");
  assertEquals(proposal.tags, ["pricing", "q3"]);
  expectOk(await bimri(root, ["sync", "--run", run]), "sync");
  assertMatch(
    expectOk(await bimri(root, ["get", "--key", "LAUNCH.PRICE"]), "get").stdout,
    /^HOT\tlaunch\.price\t/m,
  );
  assertMatch(Deno.readTextFileSync(join(root, "bimri.md")), /\[K:launch\.price\].*\[pricing,q3\]/);
});

Deno.test("bad characters, empty tags and blank summaries are refused with the reference's words", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  const before = hashTree(root);
  const refusals: [string[], RegExp][] = [
    [["journal", "--run", run, "--text", "a\u0001b"], /journal text contains control characters\./],
    [
      ["journal", "--run", run, "--text", "a\u2028b"],
      /journal text must not contain Unicode line separators\./,
    ],
    [["journal", "--run", run, "--text", "a\tb"], /journal text must be one line without tabs\./],
    [
      newSubject(run, "a.b", "T.", ["--tags", "x,,y"]),
      /tag cannot be empty\./,
    ],
    [
      newSubject(run, "a\u001fb", "T."),
      /key contains control characters\./,
    ],
    // A Tier 2 record with no observation would fail every later audit and pause all writes.
    [
      newSubject(run, "a.c", "T.", ["--observations", "0"]),
      /proposal observations must be a positive integer\./,
    ],
    [["close", "--run", run, "--summary", "   "], /outcome summary cannot be empty\./],
    [
      ["start", "--actor", "codex", "--session", "s".repeat(501)],
      /session exceeds 500 characters\./,
    ],
    [["recover-run", "--run", run, "--summary", " "], /recovery summary cannot be empty\./],
  ];
  for (const [args, message] of refusals) {
    const result = await bimri(root, args);
    assertEquals(result.code, 2, `${args.join(" ")}: ${result.stdout}`);
    assertMatch(result.stderr, new RegExp(`^BIMRI ERROR: ${message.source}\\n$`));
  }
  assertEquals(diffTrees(before, hashTree(root)), null, "refusals write nothing");

  // A trailing line separator is one line to the reference, trimmed away.
  expectOk(await bimri(root, ["journal", "--run", run, "--text", "Kept.\u2029"]), "journal");
  assertMatch(Deno.readTextFileSync(join(root, ".bimri/log", `${run}.md`)), / Kept\.\n/);

  // An empty summary is no summary: the run closes with the default text.
  expectOk(await bimri(root, ["close", "--run", run, "--summary", ""]), "close");
  assertMatch(
    Deno.readTextFileSync(join(root, ".bimri/log", `${run}.md`)),
    /session ended without a detailed outcome/,
  );
});

Deno.test("an empty --session maps nothing and an empty --run lets close pick the only active run", async () => {
  const root = await tempStore();
  const started = expectOk(
    await bimri(root, ["start", "--actor", "codex", "--session", ""]),
    "start",
  );
  const run = /BIMRI RUN HANDLE: (R\d{6})/.exec(started.stdout)![1];
  assertEquals(readStoreJson(root, "state.json").session_runs, {});
  assertMatch(
    expectOk(await bimri(root, ["close", "--run", ""]), "close").stdout,
    new RegExp(`BIMRI: run ${run} closed\\.`),
  );
});
