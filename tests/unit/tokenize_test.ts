/**
 * Query terms, case folding and the match rule: ASCII queries must produce
 * exactly the reference's terms and match set; Unicode queries (German,
 * Korean, Japanese, emoji) must work as whole terms.
 */
import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import { casefold } from "../../engine/retrieval/casefold.ts";
import {
  containsTerm,
  foldField,
  holdsEveryTerm,
  queryTerms,
  type SearchFields,
  termCount,
  termsOf,
} from "../../engine/retrieval/tokenize.ts";

/** The reference's terms: `re.findall(r"[a-z0-9]+", query.casefold())`. */
function referenceTerms(query: string): string[] {
  return casefold(query).match(/[a-z0-9]+/g) ?? [];
}

/** The reference's match rule over one entry's fields. */
function referenceMatches(fields: SearchFields, terms: string[]): boolean {
  const haystack = casefold(
    [
      fields.key,
      fields.id,
      fields.text,
      fields.reason,
      fields.location,
      fields.trust,
      fields.source,
      fields.tags,
      fields.falsifier,
    ].join(" "),
  );
  return terms.every((term) => haystack.includes(term));
}

/** A small deterministic generator (no Math.random: results must repeat). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x100000000;
  };
}

Deno.test("casefold equals Python's str.casefold on the characters that differ from toLowerCase", () => {
  assertEquals(casefold("Straße"), "strasse");
  assertEquals(casefold("GROẞ"), "gross");
  assertEquals(casefold("ﬁx ﬂow"), "fix flow");
  assertEquals(casefold("ſ"), "s");
  // No final-sigma rule: Python folds every sigma to σ.
  assertEquals(casefold("ΟΔΟΣ"), "οδοσ");
  assertEquals(casefold("ς"), "σ");
  assertEquals(casefold("İ"), "i\u0307");
  // Cherokee folds to the uppercase letters.
  assertEquals(casefold("ꭰ"), "Ꭰ");
  assertEquals(casefold("Ꭰ"), "Ꭰ");
  assertEquals(casefold("MIXED Case 123"), "mixed case 123");
});

Deno.test("ASCII queries yield exactly the reference's terms", () => {
  const samples = [
    "checkout retries",
    "Checkout-Retries!!",
    "R000001-E003",
    "project.goal",
    "nightly search index",
    "  a_b  c__d ",
    "x1y2 z3",
    "HOT current",
  ];
  const next = lcg(7);
  const alphabet = "abcXYZ019 -_.,:;!?/()[]'\"";
  for (let i = 0; i < 300; i++) {
    let s = "";
    const n = 1 + Math.floor(next() * 30);
    for (let j = 0; j < n; j++) s += alphabet[Math.floor(next() * alphabet.length)];
    samples.push(s);
  }
  for (const query of samples) {
    const expected = [...new Set(referenceTerms(query))];
    if (expected.length === 0 || expected.length > 32) {
      assertThrows(() => queryTerms(query));
      continue;
    }
    assertEquals(queryTerms(query), expected, JSON.stringify(query));
  }
});

Deno.test("ASCII queries match exactly the reference's set, even over non-ASCII text", () => {
  const corpus: SearchFields[] = [
    ["a.street", "Die Straße ist gesperrt.", "deutsch"],
    ["b.fix", "ﬁx the ﬂaky test", ""],
    ["c.long-s", "Meſſage paſſed", "ci"],
    ["d.cafe", "cafe\u0301 au lait", ""],
    ["e.plain", "Verify checkout retries under load.", "checkout,retries"],
    ["f.korean", "한국어 메모 with ascii words", ""],
    ["g.kelvin", "Temperature 300 \u212a measured", ""],
  ].map(([key, text, tags], i) => ({
    key,
    text,
    tags: tags.split(",").join(" "),
    id: `R000001-E00${i + 1}`,
    reason: i % 2 ? "current" : "replaced",
    location: i % 2 ? "HOT" : "HISTORY",
    trust: "working",
    source: "agent",
    falsifier: "",
  }));
  const queries = [
    "strasse",
    "stra",
    "fix flaky",
    "message passed",
    "cafe",
    "cafe au",
    "checkout retries",
    "hot",
    "history replaced",
    "e00",
    "k measured",
    "300k",
    "ascii",
    "current working agent",
    "nothing here",
  ];
  for (const query of queries) {
    const terms = queryTerms(query);
    for (const fields of corpus) {
      assertEquals(
        holdsEveryTerm(fields, terms),
        referenceMatches(fields, referenceTerms(query)),
        `${query} vs ${fields.key}`,
      );
    }
  }
});

Deno.test("Unicode queries keep whole words: German, Korean, Japanese", () => {
  assertEquals(queryTerms("Straße nach KÖLN"), ["strasse", "nach", "köln"]);
  assertEquals(queryTerms("한국어 검색"), ["한국어", "검색"]);
  assertEquals(queryTerms("東京の天気"), ["東京の天気"]);
  assertEquals(queryTerms("Größe, größe"), ["grösse"]);
  const text = foldField("Die Straße nach Köln; Größe egal. 한국어 검색 테스트. 東京の天気は晴れ");
  for (const term of ["strasse", "köln", "grösse", "검색", "東京", "晴れ"]) {
    assert(containsTerm(text, term), term);
  }
  assert(!containsTerm(text, "münchen"));
});

Deno.test("composed and decomposed spellings find each other", () => {
  const decomposedText = foldField("Ko\u0308ln und Cafe\u0301");
  assert(containsTerm(decomposedText, queryTerms("Köln")[0]));
  assert(containsTerm(decomposedText, queryTerms("Café")[0]));
  const composedText = foldField("Köln und Café");
  assert(containsTerm(composedText, queryTerms("Ko\u0308ln")[0]));
});

Deno.test("emoji sequences are terms of their own", () => {
  assertEquals(queryTerms("launch🚀"), ["launch", "🚀"]);
  assertEquals(queryTerms("👍🏽"), ["👍🏽"]);
  assertEquals(queryTerms("👨‍👩‍👧 family"), ["👨‍👩‍👧", "family"]);
  assertEquals(queryTerms("🇩🇪"), ["🇩🇪"]);
  const text = foldField("Launch day 🚀 went well 👍🏽");
  assert(containsTerm(text, "🚀"));
  assert(containsTerm(text, "👍"));
  assert(!containsTerm(text, "🎉"));
});

Deno.test("invalid queries are refused", () => {
  assertThrows(() => queryTerms(""), /empty/);
  assertThrows(() => queryTerms("   "), /empty/);
  assertThrows(() => queryTerms("--- ... !!!"), /1 to 32/);
  assertThrows(
    () => queryTerms(Array.from({ length: 33 }, (_, i) => `w${i}`).join(" ")),
    /1 to 32/,
  );
  assertThrows(() => queryTerms("two\nlines"), /one line/);
  assertThrows(() => queryTerms("tab\there"), /one line/);
  assertThrows(() => queryTerms("x".repeat(501)), /500/);
  assertEquals(queryTerms("x".repeat(500)).length, 1);
});

Deno.test("termCount agrees with termsOf", () => {
  for (
    const text of [
      "",
      "a",
      "checkout.next-step",
      "  x1  y2__z ",
      "straße köln",
      "日本語 の",
      "🚀 go",
    ]
  ) {
    const folded = casefold(text);
    assertEquals(termCount(folded), termsOf(folded).length, text);
  }
});
