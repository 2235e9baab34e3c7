/** The terminal progress indicator's pure part: when it shows and what its line says. */
import { strictEqual } from "node:assert/strict";
import { progressFrame } from "../../commands/progress.ts";

Deno.test("the progress line appears after a second, counts seconds and fits the terminal", () => {
  strictEqual(progressFrame("doctor: auditing the store", 999, 0, 80), "");
  strictEqual(
    progressFrame("doctor: auditing the store", 1000, 0, 80),
    "| bimri doctor: auditing the store... 1s",
  );
  strictEqual(
    progressFrame("doctor: auditing the store", 12_345, 1, 80),
    "/ bimri doctor: auditing the store... 12s",
  );
  const narrow = progressFrame("share: pulling team memory", 5000, 2, 20);
  strictEqual(narrow, "- bimri share: pul~");
  strictEqual(narrow.length, 19);
});
