// The clock comes in from the edge: a BIMRI_NOW pin, or the system clock.
import { ok, strictEqual } from "node:assert/strict";
import { now, pinnedClock, SYSTEM_CLOCK, useClock, utcTimestamp } from "../../engine/model/time.ts";

Deno.test("a valid pin fixes every instant; the model reads only the installed clock", () => {
  const clock = pinnedClock("2026-03-04T05:06:07Z");
  strictEqual(clock().toISOString(), "2026-03-04T05:06:07.000Z");
  ok(clock() !== clock(), "each reading is a fresh Date");
  try {
    useClock(clock);
    strictEqual(utcTimestamp(), "2026-03-04T05:06:07Z");
    strictEqual(now().getTime(), Date.parse("2026-03-04T05:06:07Z"));
  } finally {
    useClock(SYSTEM_CLOCK);
  }
});

Deno.test("no pin, an empty pin or an unparsable one is the system clock", () => {
  for (const pin of [undefined, "", "not a time"]) strictEqual(pinnedClock(pin), SYSTEM_CLOCK);
});
