/**
 * Exact-key retrieval through the CLI: current hot and cold generations,
 * `--history` with replaced, closed and held records, the typed `--json`
 * schema of every tier, exit codes, read-only behaviour, the bounded reads of
 * a current lookup, and index.tsv as a non-authoritative export.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, newSubject, startRun, tempStore } from "../helpers/cli.ts";
import { must, patchState, retrieve, seedStore, withoutScores } from "./retrieval_fixture.ts";

const NEXT_STEP_V2 =
  "HOT\tcheckout.next-step\tR000002-E001\tcurrent\tworking\tagent\tCheckout retries verified; monitor the next sale.";
const NEXT_STEP_V1 =
  "HISTORY\tcheckout.next-step\tR000001-E003\treplaced\tworking\tagent\tVerify checkout retries under concurrent requests.";

Deno.test("exact-key retrieval: current, history, held, typed JSON, exit codes", async (t) => {
  const { root } = await seedStore();

  await t.step("recall --key prints the one current generation as seven columns", async () => {
    const r = await retrieve(root, ["recall", "--key", "checkout.next-step"]);
    assertEquals([r.code, r.stdout, r.stderr], [0, NEXT_STEP_V2 + "\n", ""]);
  });

  await t.step("--history adds the replaced generation after the current one", async () => {
    const r = await retrieve(root, ["recall", "--key", "checkout.next-step", "--history"]);
    assertEquals([r.code, r.stdout], [0, `${NEXT_STEP_V2}\n${NEXT_STEP_V1}\n`]);
  });

  await t.step("--json carries the Tier 2 fields, total and omitted", async () => {
    const r = await retrieve(root, ["get", "--key", "checkout.next-step", "--json", "--history"]);
    assertEquals(r.code, 0);
    assertEquals(withoutScores(r.stdout), {
      matches: [
        {
          first_run: "R000001",
          id: "R000002-E001",
          importance: 4,
          key: "checkout.next-step",
          last_run: "R000002",
          location: "HOT",
          pointer: ".bimri/log/R000002.md",
          reason: "current",
          source: "agent",
          status: "active",
          tags: ["checkout", "retries"],
          text: "Checkout retries verified; monitor the next sale.",
          tier: 2,
          trust: "working",
        },
        {
          first_run: "R000001",
          id: "R000001-E003",
          importance: 4,
          key: "checkout.next-step",
          last_run: "R000001",
          location: "HISTORY",
          pointer: ".bimri/log/R000001.md",
          reason: "replaced",
          source: "agent",
          status: "active",
          tags: ["checkout", "retries"],
          text: "Verify checkout retries under concurrent requests.",
          tier: 2,
          trust: "working",
        },
      ],
      omitted: 0,
      total: 2,
    });
    // The document is the reference's: one line, keys sorted, no extra top-level fields.
    assert(r.stdout.startsWith('{"matches": [{"first_run": "R000001", "id": "R000002-E001"'));
    assert(r.stdout.endsWith('"omitted": 0, "total": 2}\n'));
  });

  await t.step("Tier 1 and Tier 3 JSON fields", async () => {
    const t1 = await retrieve(root, ["get", "--key", "project.goal", "--json"]);
    assertEquals(withoutScores(t1.stdout), {
      matches: [{
        id: "R000001-E002",
        key: "project.goal",
        kind: "decision",
        location: "HOT",
        pointer: ".bimri/log/R000001.md",
        reason: "current",
        source: "user",
        tags: ["strategy"],
        text: "Ship a reliable checkout before the holidays.",
        tier: 1,
        trust: "confirmed",
      }],
      omitted: 0,
      total: 1,
    });
    const t3 = await retrieve(root, ["get", "--key", "ops.checkout-spikes", "--json"]);
    assertEquals(withoutScores(t3.stdout), {
      matches: [{
        confidence: "emerging",
        evidence: ["R000001-E001"],
        falsifier: "A sale passes without a retry spike.",
        id: "P0001",
        key: "ops.checkout-spikes",
        location: "HOT",
        observations: 1,
        reason: "current",
        source: "",
        text: "Checkout retry spikes follow promotional emails.",
        tier: 3,
        trust: "",
      }],
      omitted: 0,
      total: 1,
    });
  });

  await t.step("a closed subject is not current; --history shows it as closed", async () => {
    const now = await retrieve(root, ["get", "--key", "search.index"]);
    assertEquals([now.code, now.stdout], [1, "BIMRI: no memory matched search.index.\n"]);
    const past = await retrieve(root, ["get", "--key", "search.index", "--history"]);
    assertEquals(
      past.stdout,
      "HISTORY\tsearch.index\tR000001-E004\tclosed\tworking\tagent\tRebuild the product search index nightly.\n",
    );
  });

  await t.step("a held candidate appears only with --history, with its operation", async () => {
    const now = await retrieve(root, ["recall", "--key", "checkout.retry-budget"]);
    assertEquals(now.code, 1);
    const held = await retrieve(root, [
      "get",
      "--key",
      "checkout.retry-budget",
      "--history",
      "--json",
    ]);
    assertEquals(withoutScores(held.stdout), {
      matches: [{
        id: "R000002-Q003",
        importance: 3,
        key: "checkout.retry-budget",
        location: "HELD",
        operation: "set",
        reason: "classification-required",
        source: "agent",
        status: "active",
        tags: [],
        text: "Cap checkout retries at three.",
        tier: 2,
        trust: "working",
      }],
      omitted: 0,
      total: 1,
    });
  });

  await t.step("no match: exit 1, the reference's text and empty JSON document", async () => {
    const text = await retrieve(root, ["recall", "--key", "missing.subject"]);
    assertEquals([text.code, text.stdout], [1, "BIMRI: no memory matched missing.subject.\n"]);
    const json = await retrieve(root, ["recall", "--key", "missing.subject", "--json"]);
    assertEquals([json.code, json.stdout], [1, '{"matches": [], "omitted": 0, "total": 0}\n']);
    const global = await retrieve(root, ["--json", "get", "--key", "missing.subject"]);
    assertEquals(global.stdout, '{"matches": [], "omitted": 0, "total": 0}\n');
  });

  await t.step("keys are trimmed and lower-cased like the reference", async () => {
    const r = await retrieve(root, ["get", "--key", "  Project.Goal "]);
    assertEquals(r.code, 0);
    assertMatch(r.stdout, /^HOT\tproject\.goal\tR000001-E002\t/);
  });

  await t.step("bad requests exit 2 with BIMRI ERROR and change nothing", async () => {
    for (
      const args of [
        ["get", "--key", "Not A Key"],
        ["recall"],
        ["recall", "--key", "a.b", "--query", "x"],
        ["recall", "--key", "a.b", "--limit", "0"],
        ["recall", "--key", "a.b", "--limit", "501"],
        ["search", "--query", "!!! ---"],
        ["get"],
      ]
    ) {
      const r = await retrieve(root, args);
      assertEquals(r.code, 2, args.join(" "));
      assertMatch(r.stderr, /^BIMRI ERROR: /);
    }
  });

  await t.step("index.tsv is an export: deleted or corrupt, results stay the same", async () => {
    const queries = [
      ["recall", "--query", "checkout retries", "--json"],
      ["get", "--key", "checkout.next-step", "--history", "--json"],
    ];
    const baseline = [];
    for (const q of queries) baseline.push((await retrieve(root, q)).stdout);
    assertMatch(await must(root, ["index"]), /^BIMRI: index rebuilt with \d+ rows\.$/m);
    const index = join(root, ".bimri", "index.tsv");
    const built = Deno.readTextFileSync(index);
    assertEquals(built.split("\n")[0], "id\tkey\tloc\ttrust\tsource\tstatus\tfile\theadline");
    for (
      const damage of [
        () => Deno.removeSync(index),
        () => Deno.writeTextFileSync(index, "garbage\x00\n"),
      ]
    ) {
      damage();
      for (const [i, q] of queries.entries()) {
        assertEquals((await retrieve(root, q)).stdout, baseline[i]);
      }
    }
    await must(root, ["index"]);
    assertEquals(Deno.readTextFileSync(index), built);
  });

  await t.step("a current lookup reads no history; history and search do", async () => {
    // Damage what only history needs: an unrelated archive month.
    Deno.writeTextFileSync(
      join(root, ".bimri", "archive", "2001-01.md"),
      "[ARCHIVED:not-a-date] malformed\n",
    );
    const current = await retrieve(root, ["get", "--key", "checkout.next-step"]);
    assertEquals([current.code, current.stdout], [0, NEXT_STEP_V2 + "\n"]);
    const search = await retrieve(root, ["search", "--query", "checkout"]);
    assertEquals(search.code, 2);
  });

  await t.step("a damaged authority record stops every read, current ones too", async () => {
    Deno.writeTextFileSync(join(root, ".bimri", "decisions", "R000002-Q003.json"), "{broken");
    for (
      const args of [
        ["get", "--key", "checkout.next-step"],
        ["get", "--key", "checkout.next-step", "--history"],
      ]
    ) {
      const refused = await retrieve(root, args);
      assertEquals([refused.code, refused.stdout], [2, ""], args.join(" "));
      assertMatch(refused.stderr, /authority recovery is required: decision R000002-Q003 /);
    }
  });

  await Deno.remove(root, { recursive: true });
});

Deno.test("cold-current subjects: found by key from their own archive month only", async () => {
  const root = await tempStore("bimri-retrieval-cold-");
  const run = await startRun(root, "codex");
  patchState(root, { hot_max_bytes: 900 });
  for (const i of [1, 2, 3, 4]) {
    await must(
      root,
      newSubject(run, `cold.subject-${i}`, `Subject ${i} about freezer temperature logs.`, [
        "--importance",
        String(i),
      ]),
    );
  }
  await must(root, ["sync", "--run", run]);
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri", "state.json")));
  assertEquals(Object.keys(state.cold_current), ["cold.subject-1"]);

  const cold = await retrieve(root, ["get", "--key", "cold.subject-1", "--json"]);
  const doc = withoutScores(cold.stdout) as { matches: Record<string, unknown>[] };
  assertEquals(doc.matches.map((m) => [m.location, m.reason, m.importance]), [[
    "COLD",
    "current",
    1,
  ]]);
  const search = await retrieve(root, ["search", "--query", "freezer"]);
  assertEquals(search.stdout.trim().split("\n").map((l) => l.split("\t")[0]), [
    "HOT",
    "HOT",
    "HOT",
    "COLD",
  ]);

  // Another month that is unreadable does not matter to the exact lookup...
  Deno.writeTextFileSync(join(root, ".bimri", "archive", "2001-01.md"), "[ARCHIVED:x] broken\n");
  assertEquals((await retrieve(root, ["get", "--key", "cold.subject-1"])).code, 0);
  assertEquals((await retrieve(root, ["search", "--query", "freezer"])).code, 2);
  Deno.removeSync(join(root, ".bimri", "archive", "2001-01.md"));
  // ...but a cold record whose cooled row is gone is refused, not served.
  const month = join(
    root,
    ".bimri",
    "archive",
    `${state.cold_current["cold.subject-1"].archived_on.slice(0, 7)}.md`,
  );
  // The binding row is found wherever it sits in a month of many 64 KB pieces...
  const original = Deno.readFileSync(month);
  const filler = (tag: string) =>
    Array.from(
      { length: 1500 },
      (_, i) => `note ${tag} ${i}: no archive row here, just filler — ${"é".repeat(i % 50)}\n`,
    ).join("");
  Deno.writeTextFileSync(
    month,
    filler("before") + new TextDecoder().decode(original) + filler("after"),
  );
  assert(Deno.statSync(month).size > 3 * 65536);
  assertEquals(
    withoutScores((await retrieve(root, ["get", "--key", "cold.subject-1", "--json"])).stdout),
    doc,
  );
  // ...and a month that is not valid UTF-8 anywhere is refused, as a whole read would.
  Deno.writeFileSync(month, new Uint8Array([0xc3, 0x28, 0x0a]), { append: true });
  const notText = await retrieve(root, ["get", "--key", "cold.subject-1"]);
  assertEquals(notText.code, 2);
  assertMatch(notText.stderr, /not valid UTF-8/);
  Deno.writeFileSync(month, original);
  assertEquals(
    withoutScores((await retrieve(root, ["get", "--key", "cold.subject-1", "--json"])).stdout),
    doc,
  );
  Deno.writeTextFileSync(month, "");
  const broken = await retrieve(root, ["get", "--key", "cold.subject-1"]);
  assertEquals(broken.code, 2);
  assertMatch(broken.stderr, /cold\.subject-1/);
  await Deno.remove(root, { recursive: true });
});

Deno.test("retrieval never creates a store", async () => {
  const root = await tempStore("bimri-retrieval-empty-");
  for (const args of [["get", "--key", "a.b"], ["search", "--query", "anything"]]) {
    const r = await bimri(root, args);
    assertEquals(r.code, 2);
    assertMatch(r.stderr, /^BIMRI ERROR: .*\.bimri/);
  }
  assertEquals([...Deno.readDirSync(root)].length, 0);
  await Deno.remove(root, { recursive: true });
});
