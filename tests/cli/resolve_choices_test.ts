/**
 * `resolve`: every choice (a candidate, current, dismiss), the record
 * lifecycle and decision finalization, the --human-approved refusal, unknown
 * conflicts and choices, idempotent repeats, a Concurrent removal resolved by
 * its close candidate (refused: the reference cannot verify it), and a
 * Recovery review.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  diffTrees,
  expectOk as ok,
  hashTree,
  newSubject,
  readStoreJson as json,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

function handle(stdout: string): string {
  const m = /^BIMRI RUN HANDLE: (R\d{6})$/m.exec(stdout);
  if (!m) throw new Error(`no run handle in ${stdout}`);
  return m[1];
}

type Conflicted = { root: string; winner: string; losers: string[]; conflict: string };

/**
 * Seeds `key`, then a winner and `losers` other runs change it from the same
 * base; the winner syncs first, the losers after (one conflict).
 */
async function conflicted(
  key: string,
  loserArgs: string[][],
  winnerArgs: string[] = ["--text", "Winner value."],
  seedArgs: string[] = ["--tier", "2"],
): Promise<Conflicted> {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  ok(
    await bimri(root, [
      "propose",
      "--run",
      seed,
      ...seedArgs,
      "--new-subject",
      "--key",
      key,
      "--text",
      "Seed value.",
    ]),
    "seed propose",
  );
  ok(await bimri(root, ["close", "--run", seed]), "seed close");
  const w = await startRun(root, "winner");
  const runs = [];
  for (let i = 0; i < loserArgs.length; i++) runs.push(await startRun(root, `loser-${i}`));
  const winner = ok(await bimri(root, ["propose", "--run", w, "--key", key, ...winnerArgs]), "w")
    .stdout.trim();
  const losers = [];
  for (let i = 0; i < runs.length; i++) {
    const r = await bimri(root, ["propose", "--run", runs[i], "--key", key, ...loserArgs[i]]);
    losers.push(ok(r, "loser propose").stdout.trim());
  }
  ok(await bimri(root, ["sync", "--run", w]), "winner sync");
  for (const run of runs) ok(await bimri(root, ["sync", "--run", run]), "loser sync");
  const conflict = json(root, `decisions/${losers[0]}.json`).conflict_id as string;
  return { root, winner, losers, conflict };
}

/** Writes a resolution record by hand, as another engine (or a forger) would. */
function plantResolution(root: string, conflict: string, record: Record<string, unknown>): void {
  Deno.writeTextFileSync(
    join(root, ".bimri", "resolutions", `${conflict}.json`),
    JSON.stringify(record, null, 2) + "\n",
  );
}

function unchangedExceptLock(root: string, action: () => Promise<void>): Promise<void> {
  const before = hashTree(root);
  return action().then(() => {
    const after = hashTree(root);
    for (const tree of [before, after]) {
      for (const k of [...tree.keys()]) {
        if (k.includes("audit-") || k.endsWith("engine.lock")) tree.delete(k);
      }
    }
    const diff = diffTrees(before, after);
    assert(diff === null, `a refused resolve wrote something: ${diff}`);
  });
}

Deno.test("choosing a candidate commits it confirmed with its source kept, finalizes decisions, and repeats idempotently", async () => {
  const c = await conflicted("api.timeout", [["--text", "Loser A."], ["--text", "Loser B."]]);
  try {
    const { root, losers, conflict } = c;
    // Without the attestation nothing is written.
    await unchangedExceptLock(root, async () => {
      const r = await bimri(root, ["resolve", conflict, "--choose", losers[1]]);
      assertEquals(r.code, 2);
      assertMatch(r.stderr, /^BIMRI ERROR: resolve requires --human-approved/m);
    });
    await unchangedExceptLock(root, async () => {
      const r = await bimri(root, [
        "resolve",
        conflict,
        "--choose",
        "R000009-Q001",
        "--human-approved",
      ]);
      assertEquals(r.code, 2);
      assertEquals(
        r.stderr,
        `BIMRI ERROR: choose current, dismiss, or one of: ${losers.join(", ")}\n`,
      );
    });
    await unchangedExceptLock(root, async () => {
      const r = await bimri(root, [
        "resolve",
        "C000042",
        "--choose",
        "current",
        "--human-approved",
      ]);
      assertEquals(r.code, 2);
      assertEquals(r.stderr, "BIMRI ERROR: unknown conflict: C000042\n");
    });

    const headBefore = json(root, "state.json").head_revision as number;
    const r = ok(
      await bimri(root, ["resolve", conflict, "--choose", losers[1], "--human-approved"]),
      "resolve",
    );
    assertEquals(r.stdout, `BIMRI: ${conflict} resolved with ${losers[1]}.\n`);
    const resolution = json(root, `resolutions/${conflict}.json`);
    assertEquals(resolution.status, "resolved");
    assertEquals(resolution.authority, "human-asserted");
    assertEquals(resolution.by, "user");
    assertEquals(resolution.revision_before, headBefore);
    assertEquals(resolution.intended_revision_after, headBefore + 1);
    assertEquals(resolution.revision_after, headBefore + 1);
    assertEquals(resolution.proposal_ids, losers);
    const state = json(root, "state.json");
    assertEquals(state.head_revision, headBefore + 1);
    assertEquals(state.last_revision_reason, `accepted ${losers[1]}`);
    const view = Deno.readTextFileSync(join(root, "bimri.md"));
    assertMatch(
      view,
      /\[K:api\.timeout\] \[I:3\] \[active\] \[T:confirmed\] \[SRC:agent\] .* Loser B\./,
    );

    const chosen = json(root, `decisions/${losers[1]}.json`);
    const other = json(root, `decisions/${losers[0]}.json`);
    for (const [d, outcome] of [[chosen, "accepted"], [other, "noop"]] as const) {
      assertEquals(d.outcome, outcome);
      assertEquals(d.initial_outcome, "contested");
      assertEquals(d.conflict_id, conflict);
      assertEquals(d.resolution_id, conflict);
      assertEquals(d.resolution_choice, losers[1]);
      assertEquals(d.resolved_at, resolution.resolved_at);
      assertEquals(d.revision, headBefore + 1);
    }

    // Repeating (even with another choice, even without the flag) changes nothing.
    await unchangedExceptLock(root, async () => {
      const again = ok(
        await bimri(root, ["resolve", conflict, "--choose", "dismiss", "--human-approved"]),
        "repeat",
      );
      assertEquals(again.stdout, `BIMRI: ${conflict} already resolved as ${losers[1]}.\n`);
      const bare = ok(
        await bimri(root, ["resolve", conflict, "--choose", losers[1]]),
        "bare repeat",
      );
      assertMatch(bare.stdout, /already resolved as/);
    });
    const review = ok(await bimri(root, ["review"]), "review");
    assertMatch(review.stdout, /^Actionable concurrent conflicts: 0$/m);
    const doctor = await bimri(root, ["doctor"]);
    assertEquals(doctor.code, 0, doctor.stdout + doctor.stderr);
  } finally {
    await Deno.remove(c.root, { recursive: true });
  }
});

Deno.test("current keeps the live value and dismiss closes the question; both write no revision", async () => {
  for (const choice of ["current", "dismiss"]) {
    const c = await conflicted("cache.ttl", [["--text", "Loser."]]);
    try {
      const { root, losers, conflict } = c;
      const head = json(root, "state.json").head_revision as number;
      const view = Deno.readTextFileSync(join(root, "bimri.md"));
      const r = ok(
        await bimri(root, ["resolve", conflict, "--choose", choice, "--human-approved"]),
        choice,
      );
      assertEquals(r.stdout, `BIMRI: ${conflict} resolved with ${choice}.\n`);
      const resolution = json(root, `resolutions/${conflict}.json`);
      assertEquals(resolution.status, "resolved");
      assertEquals(resolution.intended_revision_after, head);
      assertEquals(resolution.revision_after, head);
      assertEquals(resolution.revision_before, head);
      assertEquals(json(root, "state.json").head_revision, head);
      assertEquals(Deno.readTextFileSync(join(root, "bimri.md")), view);
      const d = json(root, `decisions/${losers[0]}.json`);
      assertEquals(d.outcome, "noop");
      assertEquals(d.resolution_choice, choice);
      assertEquals(d.revision, head);
    } finally {
      await Deno.remove(c.root, { recursive: true });
    }
  }
});

/** A conflict on cache.ttl raised while it was hot, whose subject then cooled (line unchanged). */
async function cooledConflict(): Promise<Conflicted> {
  const c = await conflicted("cache.ttl", [["--text", "Loser."]]);
  const { root } = c;
  // A ceiling of the view's own size: the next new subject cools this one, line unchanged.
  const statePath = join(root, ".bimri", "state.json");
  const state = JSON.parse(Deno.readTextFileSync(statePath));
  state.hot_max_bytes = Deno.readFileSync(join(root, "bimri.md")).length;
  Deno.writeTextFileSync(statePath, JSON.stringify(state, null, 2) + "\n");
  const run = await startRun(root, "pressure");
  ok(
    await bimri(
      root,
      newSubject(run, "k.room", "A newer subject that needs the room.", ["--importance", "5"]),
    ),
    "propose",
  );
  ok(await bimri(root, ["sync", "--run", run]), "sync");
  const cold = json(root, "state.json").cold_current as Record<string, unknown>;
  assert(Object.hasOwn(cold, "cache.ttl"), "the conflicted subject cooled");
  return c;
}

Deno.test("a subject cooled after its conflict was raised: every answer is refused and nothing is written (neither engine could verify it)", async () => {
  const c = await cooledConflict();
  try {
    const { root, losers, conflict } = c;
    for (const choice of ["current", "dismiss", losers[0]]) {
      await unchangedExceptLock(root, async () => {
        const r = await bimri(root, ["resolve", conflict, "--choose", choice, "--human-approved"]);
        assertEquals(r.code, 2, choice);
        assertMatch(
          r.stderr,
          /^BIMRI ERROR: cache\.ttl moved between hot memory and cold-current after C\d{6} was raised .*Nothing was written/m,
        );
      });
    }
    assertEquals((await bimri(root, ["doctor"])).code, 0);
  } finally {
    await Deno.remove(c.root, { recursive: true });
  }
});

Deno.test("doctor fails an answer recorded after its subject cooled, as the reference does", async () => {
  const c = await cooledConflict();
  try {
    const { root, losers, conflict } = c;
    const head = json(root, "state.json").head_revision as number;
    // The record an earlier bimri wrote for `dismiss` here (at the head, where the subject is cold).
    plantResolution(root, conflict, {
      authority: "human-asserted",
      bimri_version: "5.1.0",
      by: "user",
      choice: "dismiss",
      conflict_id: conflict,
      intended_revision_after: head,
      proposal_ids: losers,
      resolved_at: "2026-12-03T12:00:01Z",
      revision_after: head,
      revision_before: head,
      started_at: "2026-12-03T12:00:00Z",
      status: "resolved",
    });
    // A finished answer is proven before its decisions are finalized: this one cannot be.
    const repeat = await bimri(root, [
      "resolve",
      conflict,
      "--choose",
      "dismiss",
      "--human-approved",
    ]);
    assertEquals(repeat.code, 2, repeat.stdout);
    assertMatch(repeat.stderr, /cache\.ttl moved between hot memory and cold-current/);
    assertEquals(json(root, `decisions/${losers[0]}.json`).outcome, "contested");
    const doctor = await bimri(root, ["doctor", "--read-only"]);
    assertEquals(doctor.code, 1);
    assertMatch(
      doctor.stdout,
      new RegExp(
        `^  - resolution ${conflict} names revision V0*${head}, where the hot snapshot of cache\\.ttl that conflict ${conflict} recorded is not in hot memory\\.$`,
        "m",
      ),
    );
  } finally {
    await Deno.remove(c.root, { recursive: true });
  }
});

Deno.test("a Concurrent removal's close candidate cannot be chosen (the reference could not verify it); current, then a fresh close, removes the key", async () => {
  const c = await conflicted("z.item", [["--operation", "close"]], ["--text", "Item v2 from a."]);
  try {
    const { root, losers, conflict } = c;
    const review = ok(await bimri(root, ["review", conflict]), "review");
    assertMatch(
      review.stdout,
      new RegExp(`^MEMORY CONFLICT ${conflict} — Concurrent removal$`, "m"),
    );
    assertMatch(review.stdout, /^Action: remove\/archive$/m);

    const before = hashTree(root);
    const refused = await bimri(root, [
      "resolve",
      conflict,
      "--choose",
      losers[0],
      "--human-approved",
    ]);
    assertEquals(refused.code, 2);
    assertMatch(
      refused.stderr,
      /^BIMRI ERROR: R\d{6}-Q001 closes z\.item from an older value, .*Choose current or dismiss instead; .*propose --run <run> --operation close --key z\.item$/m,
    );
    assertEquals(diffTrees(before, hashTree(root)), null, "a refused choice writes nothing");

    ok(
      await bimri(root, ["resolve", conflict, "--choose", "current", "--human-approved"]),
      "resolve current",
    );
    assertEquals(json(root, `decisions/${losers[0]}.json`).outcome, "noop");
    const owner = await startRun(root, "owner");
    ok(
      await bimri(root, ["propose", "--run", owner, "--operation", "close", "--key", "z.item"]),
      "fresh close",
    );
    ok(await bimri(root, ["close", "--run", owner]), "owner close");
    assert(!Deno.readTextFileSync(join(root, "bimri.md")).includes("[K:z.item]"), "key removed");
    assertEquals((await bimri(root, ["doctor"])).code, 0);
  } finally {
    await Deno.remove(c.root, { recursive: true });
  }
});

Deno.test("a change staged on the value an owner's answer then replaced is contested again instead of leaving its run unable to sync or close", async () => {
  const root = await tempStore();
  try {
    const a = await startRun(root, "a");
    const b = await startRun(root, "b");
    ok(await bimri(root, newSubject(a, "k.one", "From a.")), "a");
    const qb = ok(await bimri(root, newSubject(b, "k.one", "From b.")), "b").stdout.trim();
    ok(await bimri(root, ["sync", "--run", a]), "a sync");
    ok(await bimri(root, ["sync", "--run", b]), "b sync");
    const first = json(root, `decisions/${qb}.json`).conflict_id as string;
    // Run a stages another change on the live value the conflict recorded...
    const again = ok(
      await bimri(root, ["propose", "--run", a, "--key", "k.one", "--text", "A again."]),
      "a again",
    ).stdout.trim();
    // ...and the owner then answers with b's candidate, staged from an older base.
    ok(await bimri(root, ["resolve", first, "--choose", qb, "--human-approved"]), "answer");
    const sync = ok(await bimri(root, ["sync", "--run", a]), "sync a");
    assertMatch(sync.stdout, /new concurrent conflicts 1,/);
    const decision = json(root, `decisions/${again}.json`);
    assertEquals(decision.outcome, "contested");
    assert(decision.conflict_id !== first, "a new question for the owner");
    ok(await bimri(root, ["close", "--run", a]), "close a");
    ok(
      await bimri(root, [
        "resolve",
        decision.conflict_id as string,
        "--choose",
        again,
        "--human-approved",
      ]),
      "second answer",
    );
    assertMatch(Deno.readTextFileSync(join(root, "bimri.md")), /\[K:k\.one\] .* A again\./);
    assertEquals((await bimri(root, ["doctor"])).code, 0);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a Recovery review (manual edit of bimri.md) is dismissed", async () => {
  const root = await tempStore();
  try {
    ok(await bimri(root, ["start", "--actor", "a"]), "start");
    Deno.writeTextFileSync(join(root, "bimri.md"), "hand edit\n", { append: true });
    const second = ok(await bimri(root, ["start", "--actor", "b"]), "start b");
    handle(second.stdout);
    const review = ok(await bimri(root, ["review", "--all"]), "review");
    assertMatch(review.stdout, /^Recovery reviews: 1$/m);
    assertMatch(review.stdout, /^MEMORY RECOVERY C000001 — Recovery review$/m);
    const refused = await bimri(root, [
      "resolve",
      "C000001",
      "--choose",
      "R000001-Q001",
      "--human-approved",
    ]);
    assertEquals(refused.code, 2);
    assertEquals(refused.stderr, "BIMRI ERROR: choose current, dismiss, or one of: \n");
    const r = ok(
      await bimri(root, ["resolve", "C000001", "--choose", "dismiss", "--human-approved"]),
      "dismiss",
    );
    assertEquals(r.stdout, "BIMRI: C000001 resolved with dismiss.\n");
    const resolution = json(root, "resolutions/C000001.json");
    assertEquals(resolution.proposal_ids, []);
    assertEquals(resolution.choice, "dismiss");
    assertEquals(resolution.status, "resolved");
    const after = ok(await bimri(root, ["review", "--all"]), "review after");
    assertMatch(after.stdout, /^Recovery reviews: 0$/m);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a forged resolved record is proven before a repeated resolve finalizes anything", async () => {
  const forgeries: [string, (head: number) => Record<string, unknown>, RegExp][] = [
    [
      "a choice the revision does not hold",
      (head) => ({ revision_before: head, revision_after: head }),
      /resolution C\d{6} is not proven: .*does not contain the chosen proposal's effect/,
    ],
    [
      "an answer before a candidate's base",
      () => ({ revision_before: 0, revision_after: 0 }),
      /precedes a candidate proposal's base revision/,
    ],
  ];
  for (const [what, revisions, message] of forgeries) {
    const c = await conflicted("forged.answer", [["--text", "Loser value."]]);
    try {
      const { root, losers, conflict } = c;
      const head = json(root, "state.json").head_revision as number;
      plantResolution(root, conflict, {
        bimri_version: "5.0",
        by: "user",
        choice: losers[0],
        conflict_id: conflict,
        proposal_ids: losers,
        resolved_at: "2026-07-27T00:00:01Z",
        started_at: "2026-07-27T00:00:00Z",
        status: "resolved",
        ...revisions(head),
      });
      await unchangedExceptLock(root, async () => {
        const r = await bimri(root, [
          "resolve",
          conflict,
          "--choose",
          losers[0],
          "--human-approved",
        ]);
        assertEquals(r.code, 2, `${what}: ${r.stdout}`);
        // The answer before a base is a graph issue the gate refuses first; the other is proven here.
        assertMatch(r.stderr, /^BIMRI ERROR: /, what);
        assertMatch(r.stderr, message, what);
      });
      assertEquals(json(root, `decisions/${losers[0]}.json`).outcome, "contested", what);
    } finally {
      await Deno.remove(c.root, { recursive: true });
    }
  }
});

Deno.test("an answer recorded before a candidate's base is damaged authority: status fails and resolve writes nothing", async () => {
  const c = await conflicted("early.answer", [["--text", "Loser value."]]);
  try {
    const { root, losers, conflict } = c;
    const head = json(root, "state.json").head_revision as number;
    assert(json(root, `proposals/${losers[0]}.json`).base_revision as number > 0);
    plantResolution(root, conflict, {
      authority: "human-asserted",
      bimri_version: "5.1.0",
      by: "user",
      choice: losers[0],
      conflict_id: conflict,
      intended_revision_after: head + 1,
      proposal_ids: losers,
      revision_before: 0,
      started_at: "2026-12-03T12:00:00Z",
      status: "applying",
    });
    const status = await bimri(root, ["status"]);
    assertEquals(status.code, 1, status.stdout);
    assertMatch(
      status.stdout,
      /conflict hot snapshot is not present in its recorded revision: resolution revision_before precedes a candidate proposal.s base revision/,
    );
    await unchangedExceptLock(root, async () => {
      const r = await bimri(root, ["resolve", conflict, "--choose", losers[0], "--human-approved"]);
      assertEquals(r.code, 2, r.stdout);
      assertMatch(r.stderr, /precedes a candidate proposal's base revision/);
    });
    assertEquals(json(root, "state.json").head_revision, head);
  } finally {
    await Deno.remove(c.root, { recursive: true });
  }
});
