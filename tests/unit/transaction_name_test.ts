/**
 * Update and install backup folders are named `YYYYmmdd-HHMMSS-<8 hex>`; their
 * name order is the order of the updates (the reference's tests and readers
 * sort them), so a second update within the same second must sort after the
 * first whatever its random suffix.
 */
import { match, ok } from "node:assert/strict";
import { transactionName } from "../../engine/migrate/v502.ts";
import { SYSTEM_CLOCK, useClock } from "../../engine/model/time.ts";

Deno.test("a transaction name sorts after every name of the same second, preparing ones included", () => {
  const instant = new Date(2026, 11, 6, 23, 4, 5);
  useClock(() => instant);
  try {
    const first = transactionName();
    match(first, /^20261206-230405-[0-9a-f]{8}$/);
    for (const taken of [["20261206-230405-fffffff0"], [".preparing-20261206-230405-ffff0000"]]) {
      for (let i = 0; i < 50; i++) {
        const next = transactionName(taken);
        match(next, /^20261206-230405-[0-9a-f]{8}$/);
        const plain = taken[0].replace(".preparing-", "");
        ok(next > plain, `${next} sorts before ${plain}`);
      }
    }
    // Names of other seconds do not constrain this one.
    ok(transactionName(["20261206-230404-ffffffff"]).startsWith("20261206-230405-"));
  } finally {
    useClock(SYSTEM_CLOCK);
  }
});
