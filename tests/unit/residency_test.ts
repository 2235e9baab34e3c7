/** Retention order and the cooling plan (formats section 11). */
import { assert, assertEquals } from "../helpers/assert.ts";
import { GENESIS_VIEW, insertIntoTier, linesToText, parseView } from "../../engine/model/hot.ts";
import { genesisState } from "../../engine/model/state.ts";
import { splitLines, utf8Length } from "../../engine/model/text.ts";
import {
  ageMultiplier,
  planCooling,
  retentionForecast,
  retentionOrder,
} from "../../engine/memory/residency.ts";

function t2(id: string, key: string, importance: number, status: string, last: string): string {
  return `[${id}] [K:${key}] [I:${importance}] [${status}] [T:working] [SRC:agent] [F:R000001] [L:${last}] [] Text of ${key}. -> .bimri/log/${last}.md`;
}

function viewWith(lines: string[], tier1: string[] = []): string {
  let out = splitLines(GENESIS_VIEW);
  for (const line of tier1) out = insertIntoTier(out, 1, line);
  for (const line of lines) out = insertIntoTier(out, 2, line);
  return linesToText(out);
}

Deno.test("age multipliers follow the decay table; unknown dates are coolest", () => {
  assertEquals(ageMultiplier("2026-12-02", "2026-12-02"), 1.0);
  assertEquals(ageMultiplier("2026-11-30", "2026-12-02"), 0.8);
  assertEquals(ageMultiplier("2026-11-27", "2026-12-02"), 0.5);
  assertEquals(ageMultiplier("2026-11-24", "2026-12-02"), 0.35);
  assertEquals(ageMultiplier("2026-11-01", "2026-12-02"), 0.1);
  assertEquals(ageMultiplier(undefined, "2026-12-02"), 0.1);
});

Deno.test("retention order: importance x age, then status, date, key, id", () => {
  const state = genesisState("0".repeat(64));
  state.run_dates = { R000001: "2026-12-02", R000002: "2026-11-01" };
  const text = viewWith([
    t2("R000001-E001", "b.fresh-important", 5, "active", "R000001"),
    t2("R000001-E002", "a.old-important", 5, "active", "R000002"), // 5 x 0.1 = 0.5
    t2("R000001-E003", "c.fresh-low", 1, "active", "R000001"), // 1.0
    t2("R000001-E004", "d.fresh-low-closed", 1, "closed", "R000001"), // 1.0, closed first
    t2("R000001-E005", "e.unknown", 2, "watch", "R000009"), // 0.2
  ]);
  const order = retentionOrder(parseView(text), state, null, "2026-12-02").map((e) => e.entry.key);
  assertEquals(order, [
    "e.unknown",
    "a.old-important",
    "d.fresh-low-closed",
    "c.fresh-low",
    "b.fresh-important",
  ]);
  assertEquals(
    retentionOrder(parseView(text), state, "e.unknown", "2026-12-02")[0].entry.key,
    "a.old-important",
  );
});

Deno.test("cooling compacts headers first, then cools in order and never Tier 1", () => {
  const state = genesisState("0".repeat(64));
  const lines = Array.from(
    { length: 6 },
    (_, i) => t2(`R000001-E00${i + 1}`, `k.subject-${i}`, i + 1, "active", "R000001"),
  );
  const text = viewWith(lines, [
    "[R000001-E009] [K:core.rule] [rule] [T:confirmed] [SRC:user] [] A rule. -> .bimri/log/R000001.md",
  ]);
  const compacted = planCooling(
    text,
    { ...state, hot_max_bytes: utf8Length(text) - 10 },
    "k.subject-5",
  );
  assert(compacted !== null);
  assertEquals(compacted.cooled.length, 0, "compacting the header comments is enough");
  assert(compacted.text.includes("<!-- BIMRI v5.0.2 | Generated. -->"));

  const limit = utf8Length(text) - 250;
  const plan = planCooling(text, { ...state, hot_max_bytes: limit }, "k.subject-5");
  assert(plan !== null);
  assert(utf8Length(plan.text) <= limit);
  assertEquals(
    plan.cooled.map((c) => c.entry.key),
    ["k.subject-0", "k.subject-1"].slice(0, plan.cooled.length),
  );
  assert(plan.text.includes("core.rule"), "Tier 1 never cools");

  const impossible = planCooling(text, { ...state, hot_max_bytes: 400 }, "k.subject-5");
  assertEquals(impossible, null, "nothing left to cool: the intent must be held");
});

Deno.test("the forecast names the next subject to cool only under pressure", () => {
  const state = genesisState("0".repeat(64));
  state.run_dates = { R000001: "2026-12-02" };
  const text = viewWith([t2("R000001-E001", "k.a", 3, "active", "R000001")]);
  const healthy = retentionForecast(parseView(text), text, state);
  assertEquals(healthy.nextToCool, null);
  assertEquals(healthy.advice, "Residency is healthy; no pressure action is needed.");
  const pressed = retentionForecast(parseView(text), text, {
    ...state,
    hot_max_bytes: utf8Length(text),
  });
  assertEquals([pressed.percent, pressed.nextToCool], [100, "k.a"]);
});

Deno.test("a change that shrinks an already oversized head is taken without cooling", () => {
  const state = genesisState("0".repeat(64));
  const lines = Array.from(
    { length: 4 },
    (_, i) => t2(`R000001-E00${i + 1}`, `k.subject-${i}`, 3, "active", "R000001"),
  );
  const head = viewWith(lines);
  const smaller = viewWith(lines.slice(1));
  const tight = { ...state, hot_max_bytes: utf8Length(smaller) - 50 };
  const plan = planCooling(smaller, tight, "k.subject-0", head);
  assertEquals(plan, { text: smaller, cooled: [] });
  const grown = planCooling(head, tight, "k.subject-0", smaller);
  assert(grown !== null && grown.cooled.length > 0, "growth past the ceiling still cools");
});
