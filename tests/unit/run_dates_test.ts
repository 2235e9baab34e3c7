/** Bounding run_dates: the newest 500 runs plus every run current memory names. */
import { assertEquals } from "../helpers/assert.ts";
import {
  GENESIS_VIEW,
  insertIntoTier,
  lineRunRefs,
  linesToText,
  parseAnyEntry,
  parseView,
} from "../../engine/model/hot.ts";
import { coldRecord, genesisState } from "../../engine/model/state.ts";
import { splitLines } from "../../engine/model/text.ts";
import { RUN_DATES_KEPT, trimRunDates } from "../../engine/memory/runs.ts";
import { loadHeadViews, type Store } from "../../engine/store/store.ts";
import { makeHead } from "../../engine/store/head_load.ts";
import { StorePaths } from "../../engine/store/paths.ts";

// makeHead parses the view through hot.ts, which store.ts loads on demand.
await loadHeadViews();

const run = (n: number) => `R${String(n).padStart(6, "0")}`;

function t2(key: string, first: number, last: number): string {
  return `[${run(last)}-E001] [K:${key}] [I:3] [active] [T:working] [SRC:agent] [F:${
    run(first)
  }] [L:${run(last)}] [] Text of ${key}. -> .bimri/log/${run(last)}.md`;
}

/** A store with runs R000001..R000700 dated, one hot and the given cold Tier 2 lines. */
function storeWith(coldLines: string[]): Store {
  const state = genesisState("0".repeat(64));
  for (let n = 1; n <= 700; n++) state.run_dates[run(n)] = "2026-01-01";
  state.active_runs[run(3)] = {
    actor: "a",
    base_revision: 0,
    last_activity_at: "2026-01-01T00:00:00Z",
    session_key: null,
    started_at: "2026-01-01T00:00:00Z",
  };
  state.session_runs["a:s"] = run(4);
  coldLines.forEach((line, i) => {
    const key = `cold.k${i}`;
    state.cold_current[key] = coldRecord(
      `${run(1)}-E00${i}`,
      key,
      line,
      "0".repeat(64),
      "R000001-Q001",
      "2026-01-01",
    );
  });
  const text = linesToText(insertIntoTier(splitLines(GENESIS_VIEW), 2, t2("hot.k", 5, 6)));
  const view = parseView(text)!;
  return {
    paths: new StorePaths("/nonexistent"),
    state,
    head: makeHead(0, text, "0".repeat(64), 500, { view }),
  };
}

const newest = Array.from({ length: RUN_DATES_KEPT }, (_, i) => run(700 - i));

Deno.test("run_dates keeps the newest runs and every run active, mapped, hot or cold names", () => {
  const store = storeWith([t2("cold.a", 7, 8), t2("cold.b", 9, 9)]);
  trimRunDates(store);
  const kept = Object.keys(store.state.run_dates).sort();
  assertEquals(kept, [3, 4, 5, 6, 7, 8, 9].map(run).concat(newest.slice().sort()).sort());
});

Deno.test("an unreadable cold line keeps every run date (references cannot be computed)", () => {
  const store = storeWith([t2("cold.a", 7, 8), "not a memory line"]);
  trimRunDates(store);
  assertEquals(Object.keys(store.state.run_dates).length, 700);
});

Deno.test("nothing to drop: cold lines are not needed and nothing changes", () => {
  const store = storeWith(["not a memory line"]);
  for (let n = 1; n <= 200; n++) {
    if (![3, 4, 5, 6].includes(n)) delete store.state.run_dates[run(n)];
  }
  const before = Object.keys(store.state.run_dates).length;
  trimRunDates(store);
  assertEquals(Object.keys(store.state.run_dates).length, before);
});

Deno.test("lineRunRefs answers exactly what parsing the line would", () => {
  const lines = [
    t2("cold.a", 7, 8),
    `  ${t2("cold.padded", 11, 12)}  `,
    t2("cold.b", 9, 9).replace("[I:3]", "[I:9]"),
    "[R000001-E001] [K:rule.one] [rule] [T:confirmed] [SRC:user] [] Always test. -> x.md",
    "[P001] [K:pattern.one] [emerging] [obs:2] [ev:R000001-E001] Retries cluster | Falsify: none",
    "not a memory line",
    "",
  ];
  for (const line of lines) {
    const entry = parseAnyEntry(line);
    const expected = entry === null
      ? null
      : entry.tier === 2
      ? [entry.first_run, entry.last_run]
      : "other";
    assertEquals(lineRunRefs(line), expected, line);
  }
  assertEquals(lineRunRefs(t2("cold.a", 7, 8)), [run(7), run(8)]);
});
