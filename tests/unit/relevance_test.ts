/**
 * Relevance search's pure parts: the light English stemmer, stop words, the
 * query words, whole-word counting of stems, and the BM25F score order.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  countWord,
  PREFIX_WEIGHT,
  probeOf,
  relevanceQuery,
  relevanceScore,
  stem,
  STOP_WORDS,
} from "../../engine/retrieval/relevance.ts";

Deno.test("inflections of one word share a stem", () => {
  const families = [
    ["retry", "retries", "retried", "retrying"],
    ["charge", "charged", "charging", "charges"],
    ["deploy", "deploys", "deployed", "deploying"],
    ["ship", "shipped", "shipping", "ships"],
    ["log", "logs", "logged", "logging"],
    ["roll", "rolled", "rolling", "rolls"],
    ["process", "processes", "processed", "processing"],
    ["policy", "policies"],
    ["hash", "hashed", "hashing", "hashes"],
  ];
  for (const family of families) {
    const stems = new Set(family.map(stem));
    strictEqual(stems.size, 1, `${family.join("/")} -> ${[...stems].join(", ")}`);
  }
});

Deno.test("the stemmer leaves short words, numbers and non-ASCII words alone", () => {
  for (
    const word of ["key", "api", "ci", "16", "v2", "r000001", "straße", "検索", "status", "bus"]
  ) {
    strictEqual(stem(word), word);
  }
  // Different words keep different stems.
  ok(stem("retry") !== stem("return"));
  ok(stem("charge") !== stem("change"));
});

Deno.test("every word with a stem starts with the stem's probe", () => {
  for (
    const word of ["retry", "retries", "retried", "charging", "shipped", "policies", "deploys"]
  ) {
    ok(word.startsWith(probeOf(stem(word))), word);
  }
});

Deno.test("stop words, question words included, are dropped from a query", () => {
  for (const word of ["how", "why", "which", "what", "does", "do", "the", "is", "we", "should"]) {
    ok(STOP_WORDS.has(word), word);
  }
  const query = relevanceQuery("How do retries work?", ["how", "do", "retries", "work"]);
  deepStrictEqual(query.words.map((w) => w.term), ["retries", "work"]);
  deepStrictEqual(query.terms, ["how", "do", "retries", "work"]);
  strictEqual(query.phrase, "how do retries work?");
  // A query of stop words only keeps them, so it still searches.
  deepStrictEqual(relevanceQuery("how", ["how"]).words.map((w) => w.term), ["how"]);
  strictEqual(relevanceQuery("how", ["how"]).phrase, null);
  // One word per stem.
  deepStrictEqual(
    relevanceQuery("retry retries", ["retry", "retries"]).words.map((w) => w.term),
    ["retry"],
  );
});

Deno.test("countWord counts whole words by stem, longer words by prefix, not inner substrings", () => {
  const [retries] = relevanceQuery("retries", ["retries"]).words;
  strictEqual(countWord("every charge retry must reuse it; retried twice", retries), 2);
  strictEqual(countWord("the retrying worker", retries), 1);
  strictEqual(countWord("nothing here: preretry", retries), 0);
  const [postgres] = relevanceQuery("postgres", ["postgres"]).words;
  strictEqual(countWord("postgresql 16 and postgres", postgres), 1 + PREFIX_WEIGHT);
  strictEqual(countWord("db.postgres-version", postgres), 1);
  // Bounds: only the range [start, end) is looked at.
  const text = "retry\u001fretries\u001fnone";
  strictEqual(countWord(text, retries, 0, 5), 1);
  strictEqual(countWord(text, retries, 6, 13), 1);
  strictEqual(countWord(text, retries, 14, text.length), 0);
  // A non-ASCII term is counted as a substring, as the default mode matches it.
  const [tokyo] = relevanceQuery("東京", ["東京"]).words;
  strictEqual(countWord("日本語の検索テストです。東京の天気", tokyo), 1);
});

Deno.test("BM25F: key hits beat text hits, rare words beat common ones, more words beat fewer", () => {
  const stats = { size: 100, df: [2, 60], averageLength: [3, 2, 2, 20, 1] };
  const none = [0, 0, 0, 0, 0];
  const lengths = [3, 2, 2, 20, 0];
  const inKey = relevanceScore([[1, 0, 0, 0, 0], none], lengths, stats);
  const inText = relevanceScore([[0, 0, 0, 1, 0], none], lengths, stats);
  ok(inKey > inText, `${inKey} > ${inText}`);
  const rare = relevanceScore([[0, 0, 0, 1, 0], none], lengths, stats);
  const common = relevanceScore([none, [0, 0, 0, 1, 0]], lengths, stats);
  ok(rare > common, `${rare} > ${common}`);
  const both = relevanceScore([[0, 0, 0, 1, 0], [0, 0, 0, 1, 0]], lengths, stats);
  ok(both > rare, `${both} > ${rare}`);
  strictEqual(relevanceScore([none, none], lengths, stats), 0);
  // A short text says more per hit than a long one.
  const short = relevanceScore([[0, 0, 0, 1, 0], none], [3, 2, 2, 5, 0], stats);
  ok(short > rare, `${short} > ${rare}`);
});
