/**
 * Task-language search through the CLI: the reference's match set and groups
 * on ASCII queries, `--limit`, relevance order where it disagrees with key
 * order, Unicode queries (German, Korean, Japanese, emoji), determinism,
 * read-only behaviour.
 */
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { newSubject, startRun, tempStore } from "../helpers/cli.ts";
import { must, retrieve, seedStore, withoutScores } from "./retrieval_fixture.ts";

function rows(stdout: string): string[][] {
  return stdout.trimEnd().split("\n").map((line) => line.split("\t"));
}

Deno.test("search over the reference's retrieval store", async (t) => {
  const { root } = await seedStore();

  await t.step(
    "'checkout retries': the reference's three matches, HOT, HELD, HISTORY",
    async () => {
      const r = await retrieve(root, ["recall", "--query", "checkout retries"]);
      assertEquals(r.code, 0);
      assertEquals(rows(r.stdout).map((c) => c.slice(0, 4).join(" ")), [
        "HOT checkout.next-step R000002-E001 current",
        "HELD checkout.retry-budget R000002-Q003 classification-required",
        "HISTORY checkout.next-step R000001-E003 replaced",
      ]);
      const json = withoutScores(
        (await retrieve(root, ["search", "--query", "checkout retries", "--json"])).stdout,
      ) as { matches: { location: string }[]; total: number; omitted: number };
      assertEquals([json.total, json.omitted, json.matches.length], [3, 0, 3]);
    },
  );

  await t.step("--limit keeps the first matches and reports the rest", async () => {
    const r = await retrieve(root, ["recall", "--query", "checkout retries", "--limit", "1"]);
    assertEquals(
      r.stdout,
      "HOT\tcheckout.next-step\tR000002-E001\tcurrent\tworking\tagent\tCheckout retries verified; monitor the next sale.\nBIMRI: 2 additional matches omitted.\n",
    );
    const json = await retrieve(root, [
      "recall",
      "--query",
      "checkout retries",
      "--limit",
      "1",
      "--json",
    ]);
    const doc = withoutScores(json.stdout) as {
      matches: unknown[];
      total: number;
      omitted: number;
    };
    assertEquals([doc.matches.length, doc.total, doc.omitted], [1, 3, 2]);
  });

  await t.step("the match set covers key, id, tags, falsifier, reason and location", async () => {
    const keys = async (query: string) =>
      rows((await retrieve(root, ["search", "--query", query])).stdout).map((c) =>
        `${c[0]} ${c[1]}`
      );
    assertEquals(await keys("holidays"), ["HOT project.goal"]);
    assertEquals(await keys("strategy"), ["HOT project.goal"]);
    assertEquals(await keys("nightly search index"), ["HISTORY search.index"]);
    assertEquals(await keys("sale passes"), ["HOT ops.checkout-spikes"]);
    assertEquals(await keys("P0001"), ["HOT ops.checkout-spikes"]);
    assertEquals(await keys("history closed"), ["HISTORY search.index"]);
    assertEquals(await keys("classification"), ["HELD checkout.retry-budget"]);
    assertEquals(await keys("spike-s"), ["HOT ops.checkout-spikes"]);
  });

  await t.step("no match exits 1 with the query in the message", async () => {
    const r = await retrieve(root, ["search", "--query", "zebra quantum"]);
    assertEquals([r.code, r.stdout], [1, "BIMRI: no memory matched zebra quantum.\n"]);
    const json = await retrieve(root, ["search", "--query", "zebra quantum", "--json"]);
    assertEquals([json.code, json.stdout], [1, '{"matches": [], "omitted": 0, "total": 0}\n']);
  });

  await Deno.remove(root, { recursive: true });
});

Deno.test("ranking and Unicode queries", async (t) => {
  const root = await tempStore("bimri-retrieval-rank-");
  const run = await startRun(root, "codex");
  const subject = (key: string, text: string, extra: string[] = []) =>
    must(root, newSubject(run, key, text, extra));
  await subject(
    "aaa.misc",
    "Assorted notes about lunch, parking, the printer, and one retry of the coffee machine.",
  );
  await subject("mmm.queue", "Queue retry policy: retry twice, then retry with backoff.");
  await subject("zzz.retry", "Retry budget is three.", ["--tags", "retry"]);
  await subject("de.strasse", "Die Straße nach Köln ist gesperrt; Größe egal.", [
    "--tags",
    "deutsch",
  ]);
  await subject("ko.note", "한국어 검색 테스트 메모입니다");
  await subject("ja.note", "日本語の検索テストです。東京の天気は晴れ。");
  await subject("emoji.launch", "Launch day 🚀 went well 👍🏽");
  await must(root, ["sync", "--run", run]);

  await t.step("by default a group is in key order, as the reference prints it", async () => {
    for (const verb of ["search", "recall"]) {
      const r = await retrieve(root, [verb, "--query", "retry", "--json"]);
      const doc = withoutScores(r.stdout) as { matches: { key: string }[] };
      assertEquals(doc.matches.map((m) => m.key), ["aaa.misc", "mmm.queue", "zzz.retry"], verb);
      const limited = await retrieve(root, [verb, "--query", "retry", "--limit", "1"]);
      assertMatch(limited.stdout, /^HOT\taaa\.misc\t/);
      assertMatch(limited.stdout, /^BIMRI: 2 additional matches omitted\.$/m);
    }
  });

  await t.step("--rank orders a group by relevance and adds the score", async () => {
    for (const verb of ["search", "recall"]) {
      const r = await retrieve(root, [verb, "--query", "retry", "--rank", "--json"]);
      const doc = JSON.parse(r.stdout) as { matches: { key: string; score: number }[] };
      assertEquals(doc.matches.map((m) => m.key), ["zzz.retry", "mmm.queue", "aaa.misc"], verb);
      const [a, b, c] = doc.matches.map((m) => m.score);
      assertEquals(a > b && b > c, true);
      const limited = await retrieve(root, [verb, "--query", "retry", "--rank", "--limit", "1"]);
      assertMatch(limited.stdout, /^HOT\tzzz\.retry\t/);
      assertMatch(limited.stdout, /^BIMRI: 2 additional matches omitted\.$/m);
    }
    const keyed = await retrieve(root, ["recall", "--key", "zzz.retry", "--rank"]);
    assertEquals(keyed.code, 2);
  });

  await t.step("results repeat byte for byte", async () => {
    for (const flags of [[], ["--rank"]]) {
      const first = await retrieve(root, ["search", "--query", "retry", "--json", ...flags]);
      const second = await retrieve(root, ["search", "--query", "retry", "--json", ...flags]);
      assertEquals(second.stdout, first.stdout);
    }
  });

  await t.step("German, Korean, Japanese and emoji terms", async () => {
    const expectations: [string, string][] = [
      ["STRASSE", "de.strasse"],
      ["straße köln", "de.strasse"],
      ["GRÖSSE", "de.strasse"],
      ["Ko\u0308ln", "de.strasse"],
      ["검색 메모", "ko.note"],
      ["한국어", "ko.note"],
      ["東京", "ja.note"],
      ["日本語の検索", "ja.note"],
      ["🚀", "emoji.launch"],
      ["👍🏽 launch", "emoji.launch"],
    ];
    for (const [query, key] of expectations) {
      const r = await retrieve(root, ["search", "--query", query]);
      assertEquals([r.code, rows(r.stdout).map((c) => c[1])], [0, [key]], query);
    }
    for (const query of ["münchen", "서울", "大阪", "🎉"]) {
      assertEquals((await retrieve(root, ["search", "--query", query])).code, 1, query);
    }
  });

  await Deno.remove(root, { recursive: true });
});
