/** Pure parts of pattern-ID allocation (engine/memory/pattern_ids.ts). */
import { assertEquals } from "../helpers/assert.ts";
import {
  cachedHighest,
  nextPatternIdFrom,
  patternNumber,
  scannedProposalName,
} from "../../engine/memory/pattern_ids.ts";

Deno.test("the scan reads the names the reference's R*-Q*.json glob matches", () => {
  for (const name of ["R000001-Q001.json", "R1-Q.json", "Rx-Qy.json", "R-Q-Q.json"]) {
    assertEquals(scannedProposalName(name), true, name);
  }
  for (
    const name of [
      "R000001-Q001.json.tmp",
      ".bimri-new-00ff",
      "r000001-Q001.json",
      "R000001-q001.json",
      "X-R000001-Q001.json",
      "R000001-Q001.JSON",
      "R000001.json",
    ]
  ) {
    assertEquals(scannedProposalName(name), false, name);
  }
});

Deno.test("pattern numbers count only P<digits> strings", () => {
  assertEquals(patternNumber("P0007"), 7);
  assertEquals(patternNumber("P12345"), 12345);
  for (const value of [null, undefined, 7, "P", "p0007", "P00x7", " P0007", "R000001-E001"]) {
    assertEquals(patternNumber(value), 0, String(value));
  }
});

Deno.test("the next pattern is above the counter, the Tier 3 lines and every proposal", () => {
  assertEquals(nextPatternIdFrom(0, [], 0), "P0001");
  assertEquals(nextPatternIdFrom(3, ["P0002"], 0), "P0004");
  assertEquals(nextPatternIdFrom(0, ["P0009", "R000001-E001"], 4), "P0010");
  assertEquals(nextPatternIdFrom(1, ["P0002"], 41), "P0042");
  assertEquals(nextPatternIdFrom(9999, [], 0), "P10000");
});

Deno.test("a pattern record vouches only for the folder fingerprint it names", () => {
  const doc = JSON.stringify({ schema: 1, print: "o:1:4096:10:10", highest: 5 });
  assertEquals(cachedHighest(doc, "o:1:4096:10:10"), 5);
  assertEquals(cachedHighest(doc, "o:1:4096:11:11"), null);
  assertEquals(cachedHighest(doc, null), null);
  assertEquals(cachedHighest(null, "o:1:4096:10:10"), null);
  for (
    const bad of [
      "not json",
      "null",
      "[]",
      JSON.stringify({ schema: 2, print: "p", highest: 5 }),
      JSON.stringify({ schema: 1, print: "p", highest: -1 }),
      JSON.stringify({ schema: 1, print: "p", highest: 1.5 }),
      JSON.stringify({ schema: 1, print: "p", highest: "5" }),
    ]
  ) {
    assertEquals(cachedHighest(bad, "p"), null, bad);
  }
});
