import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, startRun, tempStore } from "../helpers/cli.ts";
import { createHash } from "node:crypto";

function key(session: string): string {
  return "claude-code:" + createHash("sha256").update(session).digest("hex").slice(0, 20);
}

function state(root: string) {
  return JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
}

Deno.test("hook-start without a session identity creates nothing at all", async () => {
  const root = await tempStore("bimri-hooks-identity-");
  for (
    const [stdin, why] of [
      ["", "stdin was empty"],
      // As the reference reads stdin: a byte-order mark is not JSON, and the bytes must be UTF-8.
      ['\ufeff{"session_id": "s1"}', "stdin was not valid JSON"],
      [new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]), "stdin could not be read (it is not UTF-8)"],
      ["{}", "the payload carries no session_id or transcript_path"],
      ["not json", "stdin was not valid JSON"],
      ["[1]", "stdin JSON was not an object"],
      ['{"session_id": "   ", "transcript_path": false}', "the payload carries no session_id"],
    ]
  ) {
    const r = await bimri(root, ["hook-start"], { stdin });
    assertEquals(r.code, 2, String(stdin));
    assertEquals(r.stdout, "");
    assert(r.stderr.startsWith(`BIMRI ERROR: hook-start opened no run: ${why}`), r.stderr);
    assert(r.stderr.trimEnd().endsWith("[hook-identity-missing]"), r.stderr);
  }
  assertEquals([...Deno.readDirSync(root)], []);
});

Deno.test("hook-close in a folder without a store closes nothing and leaves an empty store", async () => {
  for (
    const stdin of [
      "",
      "not json",
      "[1, 2]",
      '{"foo": "bar"}',
      '{"session_id": true}',
      '{"session_id": "s"}',
    ]
  ) {
    const root = await tempStore("bimri-hooks-close-new-");
    const c = await bimri(root, ["hook-close"], { stdin });
    assertEquals([c.code, c.stdout, c.stderr], [0, "", ""], stdin);
    // As the reference: the store is initialized first, and no run is opened or closed in it.
    assertEquals([state(root).active_runs, state(root).run_count], [{}, 0], stdin);
    const again = hashTree(root);
    assertEquals((await bimri(root, ["hook-close"], { stdin })).code, 0);
    assertEquals(diffTrees(again, hashTree(root)), null, `${stdin}: a second hook-close wrote`);
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("hook sessions: session_id wins, resume, transcript_path, isolation and bounded reasons", async () => {
  const root = await tempStore("bimri-hooks-map-");
  const codex = await startRun(root, "codex");
  const both = await bimri(root, ["hook-start"], {
    stdin: JSON.stringify({ session_id: "sid-1", transcript_path: "/t/one.jsonl" }),
  });
  assertMatch(both.stdout, /^BIMRI RUN HANDLE: R000002$/m);
  assertEquals(state(root).session_runs[key("sid-1")], "R000002");
  assertEquals(state(root).active_runs.R000002.actor, "claude-code");
  // Resuming writes nothing and prints no handle line.
  const before = hashTree(root);
  const again = await bimri(root, ["hook-start"], { stdin: '{"session_id": "sid-1"}' });
  assertEquals(again.code, 0);
  assert(!again.stdout.includes("BIMRI RUN HANDLE"));
  assertMatch(again.stdout, /^Resumed existing run handle for this harness session\.$/m);
  assertEquals(diffTrees(before, hashTree(root)), null);
  const transcript = await bimri(root, ["hook-start"], {
    stdin: '{"transcript_path": "/t/two.jsonl"}',
  });
  assertMatch(transcript.stdout, /^BIMRI RUN HANDLE: R000003$/m);
  assertEquals(state(root).session_runs[key("/t/two.jsonl")], "R000003");

  // Unknown session: silent success, memory untouched.
  const quiet = hashTree(root);
  const unknown = await bimri(root, ["hook-close"], { stdin: '{"session_id": "nobody"}' });
  assertEquals([unknown.code, unknown.stdout, unknown.stderr], [0, "", ""]);
  assertEquals(diffTrees(quiet, hashTree(root)), null);

  // Closing sid-1 closes only its own run; the reason is one bounded line.
  const reason = "first line\nsecond\tline  " + "x".repeat(400);
  const closed = await bimri(root, ["hook-close"], {
    stdin: JSON.stringify({ session_id: "sid-1", reason }),
  });
  assertEquals(closed.code, 0, closed.stderr);
  assertEquals(closed.stdout, "BIMRI: run R000002 closed.\n");
  const log = Deno.readTextFileSync(`${root}/.bimri/log/R000002.md`);
  const outcome = /^\[OUTCOME:partial\] (.*)$/m.exec(log);
  assert(outcome, log);
  assertEquals(
    outcome[1],
    "Claude Code SessionEnd: first line second line " + "x".repeat(197 - 23) + "...",
  );
  const after = state(root);
  assertEquals(Object.keys(after.active_runs).sort(), [codex, "R000003"]);
  assertEquals(after.session_runs, { [key("/t/two.jsonl")]: "R000003" });
  // A reason that is not text never fails the close.
  const odd = await bimri(root, ["hook-close"], {
    stdin: JSON.stringify({ transcript_path: "/t/two.jsonl", reason: { nested: ["\u2028"] } }),
  });
  assertEquals(odd.stdout, "BIMRI: run R000003 closed.\n");
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout);
});

Deno.test("hook-close refuses a session id the engine cannot key, and changes nothing", async () => {
  const root = await tempStore();
  await startRun(root, "codex");
  const before = hashTree(root);
  for (const session of ["x".repeat(501), "two\nlines", "tab\there"]) {
    const r = await bimri(root, ["hook-close"], { stdin: JSON.stringify({ session_id: session }) });
    assertEquals(r.code, 2, JSON.stringify(session));
    assertMatch(r.stderr, /^BIMRI ERROR: .*session/m);
    assertEquals(diffTrees(before, hashTree(root)), null);
  }
  const unknown = await bimri(root, ["hook-close"], { stdin: '{"session_id": "never-seen"}' });
  assertEquals(unknown.code, 0, unknown.stderr);
});

Deno.test("hook payload numbers read as the reference decodes them: a float is no identity", async () => {
  const root = await tempStore("bimri-hooks-numbers-");
  // json.loads makes 2.0 a float, which is no session identity: the transcript path keys the run.
  const opened = await bimri(root, ["hook-start"], {
    stdin: '{"session_id": 2.0, "transcript_path": "/t/float.jsonl"}',
  });
  assertMatch(opened.stdout, /^BIMRI RUN HANDLE: R000001$/m);
  assertEquals(state(root).session_runs, { [key("/t/float.jsonl")]: "R000001" });
  // An integer keeps every digit (no rounding to a double).
  const big = await bimri(root, ["hook-start"], { stdin: '{"session_id": 12345678901234567891}' });
  assertMatch(big.stdout, /^BIMRI RUN HANDLE: R000002$/m);
  assertEquals(state(root).session_runs[key("12345678901234567891")], "R000002");
  // json.loads also takes NaN and Infinity, so such a payload still opens its run.
  const nan = await bimri(root, ["hook-start"], { stdin: '{"session_id": "s-nan", "cost": NaN}' });
  assertMatch(nan.stdout, /^BIMRI RUN HANDLE: R000003$/m);
  // A reason that is not a string is written as Python's str() prints it.
  const closed = await bimri(root, ["hook-close"], {
    stdin: '{"transcript_path": "/t/float.jsonl", "reason": {"why": true, "n": 1e20}}',
  });
  assertEquals(closed.code, 0, closed.stderr);
  const log = Deno.readTextFileSync(`${root}/.bimri/log/R000001.md`);
  assertMatch(log, /^\[OUTCOME:partial\] Claude Code SessionEnd: \{'why': True, 'n': 1e\+20\}$/m);
});
