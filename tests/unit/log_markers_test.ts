/** The audit's fast log scan finds exactly what scanRunLog finds. */
import { assertEquals } from "../helpers/assert.ts";
import { scanLogMarkers } from "../../engine/integrity/authority.ts";
import { scanRunLog } from "../../engine/memory/run_log.ts";

const RUN = "R000007";

const TEXTS = [
  "",
  "# Run R000007 | 2026-01-01T00:00:00Z | actor:a | base:V000000\n\n## Journal\n",
  "[PROPOSE:R000007-Q001] [set] [K:a.b] [BASE:absent] x\n[PROPOSE:R000007-Q002]\n",
  "x [PROPOSE:R000007-Q003] inline\n [PROPOSE:R000007-Q004] indented\n",
  "[PROPOSE:R000007-Q005]x no space\n[PROPOSE:R000007-Q006]\t tab\r\n[PROPOSE:R000007-Q007]",
  "[CLOSED:R000007 2026-01-01]\n",
  "[CLOSED:R000007]\n[CLOSED:R000008 other]\n",
  "[CLOSED:R0000071 longer]\n[PROPOSE:R000008-Q001] foreign\n",
  "[OUTCOME:bogus]\n[OUTCOME:partial] x\n[OUTCOME:success]\n[CLOSED:R000007\u00a0nbsp]",
  "[CLOSED:R000007",
  "a\r[PROPOSE:R000007-Q009] after a bare CR\n[ID:R000007-E001] [PROPOSE:R000007-Q010]\n",
];

Deno.test("scanLogMarkers agrees with scanRunLog on markers and closure", () => {
  for (const text of TEXTS) {
    const full = scanRunLog(RUN, text);
    const fast = scanLogMarkers(RUN, text);
    assertEquals({ proposalMarkers: fast.proposalMarkers, closed: fast.closed }, {
      proposalMarkers: full.proposalMarkers,
      closed: full.closed,
    }, JSON.stringify(text));
    // status counts the first line matching the outcome grammar.
    const first = text.split("\n").map((l) =>
      /^\[OUTCOME:(success|partial|overflow|fail)\]/.exec(l)
    )
      .find((m) => m !== null);
    assertEquals(fast.outcome, first ? first[1] : null, JSON.stringify(text));
  }
});
