/**
 * The default mode's search (every term must occur; the reference's group,
 * key, id, reason order; history from the digest or the archive alike),
 * result rendering, and the index rows built from hand-written revision,
 * state, log and archive files.
 */
import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import { fingerprint } from "../../engine/store/files.ts";
import { searchFirst, searchStore } from "../../engine/retrieval/search.ts";
import { compareOrder, type RecallMatch } from "../../engine/retrieval/lookup.ts";
import { allRecords } from "../../engine/retrieval/records.ts";
import { type RetrievalRecord, searchFieldsOf } from "../../engine/retrieval/lookup.ts";
import { holdsEveryTerm, queryTerms } from "../../engine/retrieval/tokenize.ts";
import { compactSortedJson, renderTsv, resultJson } from "../../engine/retrieval/output.ts";
import { indexRows, renderIndex } from "../../engine/retrieval/index_tsv.ts";
import { historicalGenerations } from "../../engine/retrieval/archive_read.ts";
import { parseArchiveText } from "../../engine/model/archive_row.ts";
import { readArchiveMonths } from "../../engine/store/archive_month.ts";
import {
  digestGenerations,
  digestKeyAndId,
  loadHistoryDigest,
  rebuildHistoryDigest,
} from "../../engine/retrieval/history_digest.ts";
import { parseView } from "../../engine/model/hot.ts";
import { genesisState } from "../../engine/model/state.ts";
import { StorePaths } from "../../engine/store/paths.ts";
import { loadHeadViews, type Store } from "../../engine/store/store.ts";
import { makeHead } from "../../engine/store/head_load.ts";
import { tempStoreSync } from "../helpers/cli.ts";

// makeHead parses the view through hot.ts, which store.ts loads on demand.
await loadHeadViews();

function record(
  key: string,
  text: string,
  extra: Partial<RetrievalRecord> = {},
): RetrievalRecord {
  return {
    location: "HOT",
    key,
    id: `R000001-E${String(key.length).padStart(3, "0")}`,
    reason: "current",
    trust: "working",
    source: "agent",
    text,
    typed: { tier: 2 },
    tags: [],
    falsifier: "",
    ...extra,
  };
}

/** The full read the search must agree with: every matching record, sorted whole (stable). */
function fullRead(records: readonly RetrievalRecord[], terms: readonly string[]): RecallMatch[] {
  return records
    .filter((record) => holdsEveryTerm(searchFieldsOf(record), terms))
    .map((record) => ({ ...record, score: 0 }))
    .sort(compareOrder);
}

/** Every match of `terms` among `records`, through the search's own first-N path. */
function search(records: readonly RetrievalRecord[], terms: readonly string[]): RecallMatch[] {
  return searchFirst(records, terms, Number.MAX_SAFE_INTEGER).matches;
}

Deno.test("groups come first: HOT, COLD, HELD, HISTORY whatever the key", () => {
  const records = [
    record("a.history", "retry retry retry", { location: "HISTORY", reason: "replaced" }),
    record("b.held", "retry retry", { location: "HELD", reason: "classification-required" }),
    record("c.cold", "retry", { location: "COLD" }),
    record("d.hot", "a long text that mentions retry only once among many words", {}),
  ];
  const matches = search(records, queryTerms("retry"));
  assertEquals(matches.map((m) => m.location), ["HOT", "COLD", "HELD", "HISTORY"]);
});

Deno.test("within a group, matches go by key, id, reason; results repeat exactly", () => {
  const records = [
    record("b.same", "same words", { id: "R000002-E001" }),
    record("a.same", "same words", { id: "R000003-E001" }),
    record("a.same", "same words", {
      id: "R000001-E001",
      location: "HISTORY",
      reason: "replaced",
    }),
    record("a.same", "same words", { id: "R000001-E001", location: "HISTORY", reason: "closed" }),
  ];
  const first = search(records, queryTerms("same words"));
  assertEquals(first.map((m) => `${m.location} ${m.key} ${m.id} ${m.reason}`), [
    "HOT a.same R000003-E001 current",
    "HOT b.same R000002-E001 current",
    "HISTORY a.same R000001-E001 closed",
    "HISTORY a.same R000001-E001 replaced",
  ]);
  const again = search([...records].reverse(), queryTerms("same words"));
  assertEquals(again, first);
});

Deno.test("every term must occur; non-matching records are left out", () => {
  const records = [record("a.one", "alpha beta"), record("b.two", "alpha only")];
  assertEquals(search(records, queryTerms("alpha beta")).map((m) => m.key), ["a.one"]);
  assertEquals(search(records, queryTerms("gamma")), []);
});

Deno.test("TSV and JSON rendering follow the reference's shapes", () => {
  const matches = search(
    [record("a.one", "Alpha café 🚀"), record("b.two", "alpha two")],
    queryTerms("alpha"),
  );
  const first = matches.filter((m) => m.key === "a.one");
  const result = { target: "alpha", matches: first, total: 2, omitted: 1, ranked: false };
  assertEquals(
    renderTsv(result),
    "HOT\ta.one\tR000001-E005\tcurrent\tworking\tagent\tAlpha café 🚀\nBIMRI: 1 additional matches omitted.\n",
  );
  assertEquals(
    renderTsv({ target: "zebra", matches: [], total: 0, omitted: 0, ranked: false }),
    "BIMRI: no memory matched zebra.\n",
  );
  const json = compactSortedJson(resultJson(result));
  assert(json.startsWith('{"matches": [{"id": "R000001-E005", "key": "a.one", "location": "HOT"'));
  assert(json.includes('"text": "Alpha café 🚀"'), "non-ASCII stays raw, as ensure_ascii=False");
  assert(json.endsWith('"omitted": 1, "total": 2}'));
  assertEquals("score" in JSON.parse(json).matches[0], false, "no score unless ranked");
  const ranked = JSON.parse(compactSortedJson(resultJson({ ...result, ranked: true })));
  assertEquals(ranked.matches[0].score, first[0].score);
});

Deno.test("the search keeps the reference's key order and scores nothing", () => {
  const records = [
    record("zzz.retry", "Retry budget is three.", { tags: ["retry"] }),
    record("aaa.misc", "One retry among many other words about lunch and parking."),
  ];
  const terms = queryTerms("retry");
  const plain = search(records, terms);
  assertEquals(plain.map((m) => [m.key, m.score]), [["aaa.misc", 0], ["zzz.retry", 0]]);
  assertEquals(searchFirst(records, terms, 1), { matches: plain.slice(0, 1), total: 2 });
});

const VIEW = `# BIMRI Memory

<!-- BIMRI v5.0.2 | Generated view. Do not edit directly. -->
<!-- Full history: .bimri/log/ | Revisions: .bimri/revisions/ -->

## Tier 1: Core Intelligence

<!-- Confirmed facts, decisions, preferences and rules. Soft target: state.json. -->
[R000001-E003] [K:project.goal] [decision] [T:confirmed] [SRC:user] [strategy] Ship it. -> .bimri/log/R000001.md

## Tier 2: Active Context

<!-- Current work, risks and next actions. Soft target: state.json. -->
[R000002-E001] [K:task.alpha] [I:3] [active] [T:working] [SRC:agent] [F:R000001] [L:R000002] [] ${
  "A".repeat(170)
}   -> .bimri/log/R000002.md

## Tier 3: Pattern Recognition

<!-- Evidence-backed patterns. Soft target: state.json. -->
[P0001] [K:flow.arch] [developing] [obs:2] [ev:R000001-E001] Simplify first. | Falsify: speed wins.

<!-- END BIMRI -->
`;

const COLD_LINE =
  "[R000001-E004] [K:task.cold] [I:1] [watch] [T:working] [SRC:agent] [F:R000001] [L:R000001] [] Cold one. -> .bimri/log/R000001.md";
const ALPHA_V1 =
  "[R000001-E001] [K:task.alpha] [I:3] [active] [T:working] [SRC:agent] [F:R000001] [L:R000001] [] Alpha v1. -> .bimri/log/R000001.md";
const GONE =
  "[R000001-E002] [K:task.gone] [I:2] [active] [T:working] [SRC:agent] [F:R000001] [L:R000001] [] Gone. -> .bimri/log/R000001.md";

/**
 * Makes the history checkpoint vouch for files changed behind its back, as a
 * same-second edit with its mtime put back would leave it.
 */
function vouchAgain(
  paths: StorePaths,
  update: (checkpoint: { digest: string; months: Record<string, string> }) => void,
): void {
  const checkpointFile = join(paths.dir, "audit-integrity-history.json");
  const checkpoint = JSON.parse(Deno.readTextFileSync(checkpointFile));
  update(checkpoint);
  Deno.writeTextFileSync(checkpointFile, JSON.stringify(checkpoint));
}

/** Queries that reach the fixture's current records, its history, both, or nothing. */
const FIXTURE_QUERIES = ["alpha", "gone", "history closed", "task", "cold one", "ship", "zebra"];

/** Each fixture query at each limit prints the first rows of the full read's matches. */
function assertLimitedSearchesMatchFullRead(store: Store, limits: readonly number[]): void {
  for (const query of FIXTURE_QUERIES) {
    const terms = queryTerms(query);
    const all = fullRead(allRecords(store), terms);
    for (const limit of limits) {
      assertEquals(searchStore(store, terms, limit), {
        matches: all.slice(0, limit),
        total: all.length,
      }, `${query} / ${limit}`);
    }
  }
}

function fixtureStore(root: string): Store {
  const paths = new StorePaths(root);
  for (const folder of ["log", "archive"]) {
    Deno.mkdirSync(paths.folder(folder), { recursive: true });
  }
  Deno.writeTextFileSync(
    join(paths.folder("log"), "R000001.md"),
    "# Run R000001 | 2026-12-02T12:00:00Z | actor:codex | base:V000000\n\n## Outcome\n\n" +
      "[ID:R000001-E001] [I:3] First note.\n  [ID:R000001-E002] [I:2] Indented note.   \n" +
      "[PROPOSE:R000001-Q001] [set] [K:task.alpha] [BASE:absent] Alpha v1.\n",
  );
  Deno.writeTextFileSync(
    join(paths.folder("archive"), "2026-11.md"),
    `[ARCHIVED:2026-11-30] [BY:R000001-Q002] [cooled] ${GONE}\n`,
  );
  Deno.writeTextFileSync(
    join(paths.folder("archive"), "2026-12.md"),
    [
      `[ARCHIVED:2026-12-01] [BY:R000002-Q001] [replaced] ${ALPHA_V1}`,
      `[ARCHIVED:2026-12-01] [BY:R000002-Q002] [closed] ${GONE}`,
      `[ARCHIVED:2026-12-02] [BY:R000002-Q003] [cooled] ${COLD_LINE}`,
      "",
    ].join("\n"),
  );
  const state = genesisState("0".repeat(64));
  state.cold_current["task.cold"] = {
    entry_id: "R000001-E004",
    key: "task.cold",
    tier: 2,
    raw_line: COLD_LINE,
    line_hash: "0".repeat(64),
    archived_by: "R000002-Q003",
    archived_on: "2026-12-02",
  };
  return { paths, state, head: makeHead(3, VIEW, "", 500, { view: parseView(VIEW) }) };
}

Deno.test("index rows from hand-written files: columns, ranks, cold exclusion, order", () => {
  const root = tempStoreSync("bimri-index-unit-");
  try {
    const rows = indexRows(fixtureStore(root));
    const text = renderIndex(rows);
    const lines = text.split("\n");
    assertEquals(lines[0], "id\tkey\tloc\ttrust\tsource\tstatus\tfile\theadline");
    assertEquals(lines.at(-1), "");
    assertEquals(rows.map((r) => `${r[0]} ${r[2]} ${r[5]} ${r[6]}`), [
      "P0001 T3 developing bimri.md",
      "R000001-E001 archive replaced .bimri/archive/2026-12.md",
      "R000001-E001 log detail .bimri/log/R000001.md",
      "R000001-E002 archive closed .bimri/archive/2026-12.md",
      "R000001-E002 log detail .bimri/log/R000001.md",
      "R000001-E003 T1 decision bimri.md",
      "R000001-E004 cold watch .bimri/state.json",
      "R000002-E001 T2 active bimri.md",
    ]);
    const byId = (id: string, loc: string) => rows.find((r) => r[0] === id && r[2] === loc)!;
    assertEquals(byId("P0001", "T3").slice(3, 5), ["", ""]);
    assertEquals(byId("R000002-E001", "T2")[7], "A".repeat(160));
    assertEquals(byId("R000001-E002", "log")[7], "[ID:R000001-E002] [I:2] Indented note.");
    assertEquals(byId("R000001-E001", "archive")[7], ALPHA_V1.slice(0, 160));
    for (const line of lines.slice(1, -1)) assertEquals(line.split("\t").length, 8);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("historical generations keep the highest reason and skip the current cold binding", () => {
  const records = parseArchiveText(
    [
      "[ARCHIVED:2026-12-01] [BY:R000001-Q001] [cooled] LINE-A",
      "ignored line",
      "[ARCHIVED:2026-12-01] [BY:R000001-Q002] [closed] LINE-A",
      "[ARCHIVED:2026-12-01] [BY:R000001-Q003] [replaced] LINE-A",
      "[ARCHIVED:2026-12-01] [BY:R000001-Q004] [cooled] LINE-B",
      "[ARCHIVED:2026-12-01] [BY:R000001-Q005] [cooled] LINE-C",
    ].join("\n"),
    ".bimri/archive/2026-12.md",
  );
  const cold = {
    "k.b": {
      entry_id: "R000001-E001",
      key: "k.b",
      tier: 2,
      raw_line: "LINE-B",
      line_hash: "",
      archived_by: "R000001-Q004",
      archived_on: "2026-12-01",
    },
  };
  assertEquals(
    historicalGenerations(records, cold).map((r) => `${r.rawLine} ${r.reason} ${r.proposalId}`),
    ["LINE-A closed R000001-Q002", "LINE-C cooled R000001-Q005"],
  );
});

Deno.test("the first matches of a large group are those of a full stable sort", () => {
  // 400 matches in one group, far more than the few a limit keeps at a time: ties
  // in key and ID (told apart only by `typed`) must keep their input order.
  const words = ["retry", "retry retry", "retry budget", "a retry of the retry"];
  const records: RetrievalRecord[] = [];
  for (let i = 0; i < 400; i++) {
    const key = `k.${String((i * 7919) % 37).padStart(2, "0")}`;
    records.push(record(key, words[i % words.length], { id: "R000001-E001", typed: { n: i } }));
  }
  const terms = queryTerms("retry");
  const all = fullRead(records, terms);
  assertEquals(all.length, 400);
  for (const limit of [1, 3, 7, 50, 399, 400, 1000]) {
    const first = searchFirst(records, terms, limit);
    assertEquals(first, { matches: all.slice(0, limit), total: 400 }, `limit ${limit}`);
  }
});

Deno.test("history matched and ordered from the digest equals matching the parsed rows", () => {
  const root = tempStoreSync("bimri-rank-digest-fields-");
  try {
    const store = fixtureStore(root);
    const paths = store.paths;
    const line = (n: number, key: string, tags: string, text: string) =>
      `[ARCHIVED:2026-12-02] [BY:R00000${n}-Q001] [closed] [R00000${n}-E001] [K:${key}] [I:2] ` +
      `[active] [T:working] [SRC:agent] [F:R00000${n}] [L:R00000${n}] [${tags}] ${text} -> .bimri/log/R00000${n}.md`;
    // Folds that change length (ß, ǅ), a decomposed accent, a term in key, tags and text at once.
    Deno.writeTextFileSync(
      join(paths.folder("archive"), "2026-12.md"),
      [
        line(3, "task.strasse", "strasse", "Die Straße ist gesperrt; STRASSE und strasse später."),
        line(4, "task.cafe", "cafe,menu", "Cafe\u0301 menu: café, CAFÉ and cafe are three forms."),
        line(5, "task.dz", "", "ǅemal and ǆemal and DŽEMAL; strasse once."),
        line(6, "task.plain", "menu", "menu menu menu plain words"),
        "",
      ].join("\n"),
      { append: true },
    );
    rebuildHistoryDigest(paths, readArchiveMonths(paths));
    const digest = loadHistoryDigest(paths)!;
    for (const row of digest.order) {
      assert(digestKeyAndId(digest, row) !== null, `row ${row} has no field spans`);
    }
    const queries = ["straße", "strasse", "café", "cafe", "menu", "ǆemal", "menu cafe", "task"];
    const compare = (path: string) => {
      for (const query of queries) {
        const terms = queryTerms(query);
        const all = fullRead(allRecords(store), terms);
        for (const limit of [1, 2, 3, 50]) {
          assertEquals(searchStore(store, terms, limit), {
            matches: all.slice(0, limit),
            total: all.length,
          }, `${path}: ${query} / ${limit}`);
        }
      }
    };
    compare("field spans");
    // Rows whose fields the digest does not lay out (as when a field's fold is not its share of
    // the whole fold) are built to be ordered, with the same results.
    const digestFile = join(paths.dir, "audit-integrity-history.tsv");
    Deno.writeTextFileSync(digestFile, Deno.readTextFileSync(digestFile).replaceAll("\u001f", " "));
    vouchAgain(
      paths,
      (checkpoint) => (checkpoint.digest = fingerprint(Deno.lstatSync(digestFile))),
    );
    const flat = loadHistoryDigest(paths);
    assert(flat !== null && digestKeyAndId(flat, flat.order[0]) === null);
    compare("built rows");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("a process keeps a settled digest only while its print names it", async () => {
  const root = tempStoreSync("bimri-rank-digest-keep-");
  try {
    const store = fixtureStore(root);
    const paths = store.paths;
    rebuildHistoryDigest(paths, readArchiveMonths(paths));
    // A digest changed within the coarse-clock window is read again every time.
    assert(loadHistoryDigest(paths) !== loadHistoryDigest(paths), "an unsettled digest was kept");
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const first = loadHistoryDigest(paths);
    assert(first !== null && loadHistoryDigest(paths) === first, "a settled digest was read again");
    // Rewritten in place at the same size with its mtime put back, and vouched for again:
    // the change time moved, so the print did, and the new bytes are read.
    const digestFile = join(paths.dir, "audit-integrity-history.tsv");
    const before = Deno.lstatSync(digestFile);
    const text = Deno.readTextFileSync(digestFile);
    Deno.writeTextFileSync(digestFile, text.replace("alpha v1", "alpha v9"));
    Deno.utimeSync(digestFile, before.atime!, before.mtime!);
    vouchAgain(
      paths,
      (checkpoint) => (checkpoint.digest = fingerprint(Deno.lstatSync(digestFile))),
    );
    const again = loadHistoryDigest(paths);
    assert(again !== null && again !== first && again.text.includes("alpha v9"), "a stale digest");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("a printed history row whose line no longer hashes as the digest says is refused", () => {
  const root = tempStoreSync("bimri-rank-confirm-");
  try {
    const store = fixtureStore(root);
    const paths = store.paths;
    rebuildHistoryDigest(paths, readArchiveMonths(paths));
    const terms = queryTerms("alpha");
    assertEquals(searchStore(store, terms, 5).matches.some((m) => m.location === "HISTORY"), true);
    // Same length, same proposal and reason: only the line hash tells the edit, and
    // the checkpoint is made to vouch for the edited month as a same-second edit would.
    const month = join(paths.folder("archive"), "2026-12.md");
    Deno.writeTextFileSync(month, Deno.readTextFileSync(month).replace("Alpha v1.", "Alpha v9."));
    vouchAgain(
      paths,
      (checkpoint) => (checkpoint.months["2026-12.md"] = fingerprint(Deno.lstatSync(month))),
    );
    assert(loadHistoryDigest(paths) !== null, "the digest must still vouch for the archive");
    assertThrows(() => searchStore(store, terms, 5), /the archive changed while it was searched/);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("skipping unparsed history rows changes neither the matches nor their order", () => {
  const root = tempStoreSync("bimri-rank-skip-");
  try {
    const store = fixtureStore(root);
    for (const query of FIXTURE_QUERIES) {
      const terms = queryTerms(query);
      assertEquals(
        searchStore(store, terms).matches,
        fullRead(allRecords(store), terms),
        query,
      );
    }
    // Ordering only the groups that reach the printed limit changes nothing printed.
    assertLimitedSearchesMatchFullRead(store, [1, 2, 3, 5]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("searching through the history digest gives the full read's matches", () => {
  const root = tempStoreSync("bimri-rank-digest-");
  try {
    const store = fixtureStore(root);
    const paths = store.paths;
    rebuildHistoryDigest(paths, readArchiveMonths(paths));
    // Four rows; the cooled row of the current cold binding is not history.
    assertEquals(loadHistoryDigest(paths)?.order.length, 4);
    assertEquals(digestGenerations(loadHistoryDigest(paths)!, store.state.cold_current).length, 2);
    assertLimitedSearchesMatchFullRead(store, [1, 2, 3, 5, 50]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
