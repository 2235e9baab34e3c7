/**
 * Relevance search through the CLI (`recall --query ... --rank`, `search
 * --rank`): questions in task language find what they mean although no entry
 * holds every word, while the default mode still requires every word; the
 * phrase and all-terms matches first, current memory above history, and the
 * `--json` score, matched words and match kind.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { must, newSubject, startRun, tempStore } from "../helpers/cli.ts";
import { retrieve } from "./retrieval_fixture.ts";

type Match = { key: string; location: string; score: number; matched: string[]; match: string };

async function store(): Promise<string> {
  const root = await tempStore("bimri-relevance-");
  const run = await startRun(root, "codex");
  const subject = (key: string, text: string, extra: string[] = []) =>
    must(root, newSubject(run, key, text, extra));
  await subject(
    "payments.idempotency-key",
    "Every charge retry must reuse the original idempotency key.",
    ["--tags", "payments"],
  );
  await subject("ops.backups", "Nightly backups are kept for fourteen days.");
  await subject("notes.retry", "Retry, retry, retry: the budget for flaky jobs.", [
    "--tags",
    "retry",
  ]);
  await subject("billing.refund-charge", "A refund writes a negative charge row.");
  await subject("billing.phrase", "Always retry charge calls through the queue.");
  await subject("queue.retries", "Retries retried retrying: the old retry queue notes.");
  await must(root, ["sync", "--run", run]);
  // The replaced generation (strong on "retries") goes to history; the current one is weaker.
  await must(root, ["propose", "--run", run, "--key", "queue.retries", "--text", "Queue notes."]);
  await must(root, ["close", "--run", run, "--outcome", "success"]);
  return root;
}

async function ranked(root: string, query: string, verb = "recall"): Promise<Match[]> {
  const r = await retrieve(root, [verb, "--query", query, "--rank", "--json"]);
  strictEqual(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { matches: Match[] }).matches;
}

Deno.test("relevance search finds task language that the default mode does not", async (t) => {
  const root = await store();

  await t.step("the issue's questions: no match by default, the entry with --rank", async () => {
    for (const query of ["idempotency retries", "how do retries work"]) {
      const strict = await retrieve(root, ["recall", "--query", query]);
      strictEqual(strict.code, 1, query);
      strictEqual(strict.stdout, `BIMRI: no memory matched ${query}.\n`);
      const r = await retrieve(root, ["recall", "--query", query, "--rank"]);
      strictEqual(r.code, 0, query);
      match(r.stdout, /^HOT\tpayments\.idempotency-key\t/m, query);
    }
    const [first] = await ranked(root, "idempotency retries");
    strictEqual(first.key, "payments.idempotency-key");
    deepStrictEqual(first.matched, ["idempotency", "retries"]);
    strictEqual(first.match, "some");
    ok(first.score > 0);
  });

  await t.step("stop words are ignored and inflections folded", async () => {
    const matches = await ranked(root, "why was the customer charged");
    deepStrictEqual(matches.map((m) => m.key).sort(), [
      "billing.phrase",
      "billing.refund-charge",
      "payments.idempotency-key",
    ]);
    for (const m of matches) deepStrictEqual(m.matched, ["charged"]);
  });

  await t.step("phrase first, then all terms, then the most relevant of the rest", async () => {
    const matches = await ranked(root, "retry charge");
    deepStrictEqual(matches.slice(0, 2).map((m) => [m.key, m.match]), [
      ["billing.phrase", "phrase"],
      ["payments.idempotency-key", "all"],
    ]);
    const rest = matches.slice(2).filter((m) => m.location !== "HISTORY");
    ok(rest.length >= 2 && rest.every((m) => m.match === "some"));
    ok(rest.every((m, i) => i === 0 || rest[i - 1].score >= m.score), "the rest by score");
    // A partial match can score higher (key, tag and three hits) yet follows the full matches.
    ok(rest[0].score > matches[1].score, `${rest[0].score} > ${matches[1].score}`);
  });

  await t.step("current memory comes before history, whatever the scores", async () => {
    const matches = await ranked(root, "retries");
    const locations = matches.map((m) => m.location);
    const firstHistory = locations.indexOf("HISTORY");
    ok(firstHistory > 0, locations.join(" "));
    ok(locations.slice(firstHistory).every((l) => l === "HISTORY"), locations.join(" "));
    const history = matches[firstHistory];
    strictEqual(history.key, "queue.retries");
    ok(history.score > matches[0].score, "the history generation scores higher, yet comes later");
  });

  await t.step("search --rank answers as recall --rank; --limit keeps the best", async () => {
    const query = "how do retries work";
    deepStrictEqual(await ranked(root, query, "search"), await ranked(root, query));
    const r = await retrieve(root, ["recall", "--query", query, "--rank", "--limit", "1"]);
    const all = await ranked(root, query);
    match(r.stdout, new RegExp(`^HOT\\t${all[0].key.replace(".", "\\.")}\\t`));
    match(r.stdout, new RegExp(`^BIMRI: ${all.length - 1} additional matches omitted\\.$`, "m"));
  });

  await t.step("case, accent and Unicode folding as in the default mode", async () => {
    const run = await startRun(root, "codex");
    await must(
      root,
      newSubject(run, "de.strasse", "Die Straße nach Köln ist gesperrt; Größe egal."),
    );
    await must(root, newSubject(run, "ja.note", "日本語の検索テストです。東京の天気は晴れ。"));
    await must(root, newSubject(run, "emoji.launch", "Launch day 🚀 went well 👍🏽"));
    await must(root, ["close", "--run", run, "--outcome", "success"]);
    const expectations: [string, string][] = [
      ["STRASSE", "de.strasse"],
      ["welche straße nach Ko\u0308ln", "de.strasse"],
      ["GRÖSSE", "de.strasse"],
      ["東京", "ja.note"],
      ["where is 🚀", "emoji.launch"],
    ];
    for (const [query, key] of expectations) {
      strictEqual((await ranked(root, query))[0].key, key, query);
    }
  });

  await t.step("a query matching nothing still answers no match, exit 1", async () => {
    const r = await retrieve(root, ["recall", "--query", "zeppelin hangar", "--rank"]);
    strictEqual(r.code, 1);
    strictEqual(r.stdout, "BIMRI: no memory matched zeppelin hangar.\n");
  });
});
