/**
 * `review`: the creation notices sync prints once, the default actionable
 * page, --offset/--limit with total, range and remainder always stated,
 * `review C######`, --all with recovery and satisfied-history groups, and
 * read-only behaviour.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import {
  bimri,
  diffTrees,
  expectOk as ok,
  hashTree,
  newSubject,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

const KEYS = ["page.a", "page.b", "page.c", "page.d"];

Deno.test("review pages through conflicts and states total, range and remainder", async () => {
  const root = await tempStore();
  try {
    const seed = await startRun(root, "seed");
    for (const key of KEYS) {
      ok(
        await bimri(root, newSubject(seed, key, `Seed ${key}.`)),
        "seed",
      );
    }
    ok(await bimri(root, ["close", "--run", seed]), "seed close");
    const w = await startRun(root, "w");
    const l = await startRun(root, "l");
    for (const key of KEYS) {
      ok(await bimri(root, ["propose", "--run", w, "--key", key, "--text", `W ${key}.`]), "w");
    }
    for (const key of KEYS.slice(0, 3)) {
      ok(await bimri(root, ["propose", "--run", l, "--key", key, "--text", `L ${key}.`]), "l");
    }
    // The last candidate is an owner statement; a later owner statement makes it history.
    ok(
      await bimri(root, [
        "propose",
        "--run",
        l,
        "--key",
        "page.d",
        "--text",
        "Owner d.",
        "--source",
        "user",
        "--trust",
        "confirmed",
      ]),
      "l owner",
    );
    ok(await bimri(root, ["sync", "--run", w]), "sync w");
    const sync = ok(await bimri(root, ["sync", "--run", l]), "sync l");
    // One notice per new candidate, each numbered against the total.
    for (let i = 1; i <= 4; i++) {
      assertMatch(
        sync.stdout,
        new RegExp(
          `^New conflict notices: total 4 \\| displayed ${i}-${i} \\| remaining ${4 - i}$`,
          "m",
        ),
      );
      assertMatch(sync.stdout, new RegExp(`^MEMORY CONFLICT C00000${i} — Concurrent edit$`, "m"));
    }
    assertMatch(sync.stdout, /new concurrent conflicts 4\b/);
    const replay = ok(await bimri(root, ["sync", "--run", l]), "replay");
    assertNotMatch(replay.stdout, /MEMORY CONFLICT|New conflict notices/);

    const before = hashTree(root);
    const page1 = ok(await bimri(root, ["review", "--limit", "2"]), "page 1");
    assertMatch(page1.stdout, /^BIMRI REVIEW\nActionable concurrent conflicts: 4\n/);
    assertMatch(page1.stdout, /^Review records: total 4 \| displayed 1-2 \| remaining 2$/m);
    assertMatch(page1.stdout, /^MEMORY CONFLICT C000002 — /m);
    assertNotMatch(page1.stdout, /^MEMORY CONFLICT C000003 — /m);
    const page2 = ok(await bimri(root, ["review", "--offset", "2", "--limit", "2"]), "page 2");
    assertMatch(page2.stdout, /^Review records: total 4 \| displayed 3-4 \| remaining 0$/m);
    assertMatch(page2.stdout, /^MEMORY CONFLICT C000003 — /m);
    assertNotMatch(page2.stdout, /^MEMORY CONFLICT C000002 — /m);
    const beyond = ok(await bimri(root, ["review", "--offset", "10"]), "beyond");
    assertMatch(beyond.stdout, /^Review records: total 4 \| displayed 0-0 \| remaining 0$/m);
    const one = ok(await bimri(root, ["review", "C000003"]), "one");
    assertMatch(one.stdout, /^Review records: total 1 \| displayed 1-1 \| remaining 0$/m);
    assertMatch(one.stdout, /^Subject: page\.c$/m);
    const data = JSON.parse(
      ok(await bimri(root, ["--json", "review", "--limit", "3"]), "json").stdout,
    );
    assertEquals([data.total, data.displayed_first, data.displayed_last, data.remaining], [
      4,
      1,
      3,
      1,
    ]);
    assertEquals(data.records.map((r: { conflict_id: string }) => r.conflict_id), [
      "C000001",
      "C000002",
      "C000003",
    ]);

    for (
      const [args, pattern] of [
        [["review", "--limit", "0"], /review limit must be at least one/],
        [["review", "--limit", "101"], /review limit cannot exceed 100/],
        [["review", "--offset=-1"], /review offset must be zero or greater/],
        [
          ["review", "C000099"],
          /^BIMRI ERROR: C000099 has no open or historical satisfied review\.$/m,
        ],
      ] as const
    ) {
      const r = await bimri(root, [...args]);
      assertEquals(r.code, 2, args.join(" "));
      assertMatch(r.stderr, pattern);
    }
    assertEquals(diffTrees(before, hashTree(root)), null, "review wrote nothing");

    // The owner states page.d exactly as candidate C000004 proposed: it becomes satisfied history.
    const owner = await startRun(root, "owner");
    ok(
      await bimri(root, [
        "propose",
        "--run",
        owner,
        "--key",
        "page.d",
        "--text",
        "Owner d.",
        "--source",
        "user",
        "--trust",
        "confirmed",
      ]),
      "owner propose",
    );
    ok(await bimri(root, ["sync", "--run", owner]), "owner sync");
    // A manual edit adds a recovery review.
    Deno.writeTextFileSync(join(root, "bimri.md"), "edit\n", { append: true });
    ok(await bimri(root, ["start", "--actor", "late"]), "start after edit");

    const actionable = ok(await bimri(root, ["review"]), "default");
    assertMatch(actionable.stdout, /^Actionable concurrent conflicts: 3$/m);
    assertMatch(actionable.stdout, /^Recovery reviews: 1$/m);
    assertMatch(actionable.stdout, /^Satisfied historical candidates: 1$/m);
    assertMatch(actionable.stdout, /^Review records: total 3 \| displayed 1-3 \| remaining 0$/m);
    assertNotMatch(actionable.stdout, /RECOVERY REVIEW|SATISFIED HISTORICAL CANDIDATE/);

    const all = ok(await bimri(root, ["review", "--all"]), "all");
    assertMatch(all.stdout, /^Review records: total 5 \| displayed 1-5 \| remaining 0$/m);
    const headings = all.stdout.split("\n").filter((line) =>
      /^(ACTIONABLE CONCURRENT CONFLICT|RECOVERY REVIEW|SATISFIED HISTORICAL CANDIDATE|LEGACY REVIEW RECORD)$/
        .test(line)
    );
    assertEquals(headings, [
      "ACTIONABLE CONCURRENT CONFLICT",
      "ACTIONABLE CONCURRENT CONFLICT",
      "ACTIONABLE CONCURRENT CONFLICT",
      "RECOVERY REVIEW",
      "SATISFIED HISTORICAL CANDIDATE",
    ]);
    assertMatch(all.stdout, /^MEMORY RECOVERY C000005 — Recovery review$/m);
    assertMatch(all.stdout, /^Status: already satisfied by V\d{6}; no action is required\.$/m);
    const satisfied = ok(await bimri(root, ["review", "C000004"]), "satisfied one");
    assertMatch(satisfied.stdout, /^SATISFIED HISTORICAL CANDIDATE$/m);
    assert(!satisfied.stdout.includes("ACTIONABLE CONCURRENT CONFLICT"));

    // Choosing the satisfied candidate records the answer against the head without a new revision.
    const candidateId = JSON.parse(
      Deno.readTextFileSync(join(root, ".bimri", "conflicts", "C000004.json")),
    ).proposal_ids[0];
    const state = () => JSON.parse(Deno.readTextFileSync(join(root, ".bimri", "state.json")));
    const head = state().head_revision;
    ok(
      await bimri(root, ["resolve", "C000004", "--choose", candidateId, "--human-approved"]),
      "resolve satisfied",
    );
    const resolution = JSON.parse(
      Deno.readTextFileSync(join(root, ".bimri", "resolutions", "C000004.json")),
    );
    assertEquals([resolution.status, resolution.revision_after], ["resolved", head]);
    assert(
      !("intended_revision_after" in resolution),
      "no intended revision for an effect already current",
    );
    assertEquals(state().head_revision, head);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a close candidate stays actionable when another run later closed the line it contested", async () => {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  ok(await bimri(root, newSubject(seed, "page.gone", "First value.")), "seed");
  ok(await bimri(root, ["sync", "--run", seed]), "seed sync");
  const closer = await startRun(root, "closer");
  ok(
    await bimri(root, ["propose", "--run", closer, "--operation", "close", "--key", "page.gone"]),
    "c",
  );
  const editor = await startRun(root, "editor");
  ok(
    await bimri(root, ["propose", "--run", editor, "--key", "page.gone", "--text", "Second."]),
    "e",
  );
  ok(await bimri(root, ["sync", "--run", editor]), "editor sync");
  const raised = ok(await bimri(root, ["sync", "--run", closer]), "closer sync");
  assertMatch(raised.stdout, /new concurrent conflicts 1/);
  // Another run removes the live line the conflict recorded.
  const later = await startRun(root, "later");
  ok(
    await bimri(root, ["propose", "--run", later, "--operation", "close", "--key", "page.gone"]),
    "l",
  );
  ok(await bimri(root, ["sync", "--run", later]), "later sync");
  // The reference counts only the candidate's own close as its effect: still the owner's question.
  const review = ok(await bimri(root, ["review", "--all"]), "review");
  assertMatch(review.stdout, /^Actionable concurrent conflicts: 1$/m);
  assertMatch(review.stdout, /^Satisfied historical candidates: 0$/m);
  assertMatch(review.stdout, /^MEMORY CONFLICT C000001 — Concurrent removal$/m);
});
