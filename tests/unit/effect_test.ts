/** The view edits of set, touch and close (formats 3.5) and proposal equivalence. */
import { assert, assertEquals } from "../helpers/assert.ts";
import { GENESIS_VIEW, parseView } from "../../engine/model/hot.ts";
import { genesisState } from "../../engine/model/state.ts";
import { effectContent } from "../../engine/memory/effect.ts";
import { proposalEquivalent } from "../../engine/records/proposal.ts";
import { proposalRecord } from "../helpers/records.ts";
import { findLive } from "../../engine/memory/residency.ts";

const proposal = proposalRecord;

const state = genesisState("0".repeat(64));

Deno.test("a new subject is inserted under its tier comment; the blank line before the next heading stays", () => {
  const out = effectContent(GENESIS_VIEW, proposal({}), null);
  const lines = out.text.split("\n");
  const at = lines.indexOf(
    "<!-- Current work, risks and next actions. Soft target: state.json. -->",
  );
  assertEquals(
    lines[at + 1],
    "[R000002-E001] [K:a.b] [I:3] [active] [T:working] [SRC:agent] [F:R000002] [L:R000002] [] Text. -> .bimri/log/R000002.md",
  );
  assertEquals(lines[at + 2], "");
  assertEquals(lines[at + 3], "## Tier 3: Pattern Recognition");
  assert(out.text.endsWith("<!-- END BIMRI -->\n"));
});

Deno.test("set replaces in place, moves tiers, touch keeps fields, close removes", () => {
  const first = effectContent(GENESIS_VIEW, proposal({}), null).text;
  const view = parseView(first);
  const live = findLive(view, state, "a.b");
  assert(live !== null);
  const replaced = effectContent(
    first,
    proposal({ run_id: "R000003", entry_id: "R000003-E001", text: "New." }),
    live,
  );
  assertEquals(parseView(replaced.text).entries.length, 1);
  assert(
    replaced.text.includes(
      "[R000003-E001] [K:a.b] [I:3] [active] [T:working] [SRC:agent] [F:R000002] [L:R000003] [] New.",
    ),
  );
  const promoted = effectContent(
    first,
    proposal({ tier: 1, kind: "rule", trust: "confirmed", source: "user" }),
    live,
  );
  const entries = parseView(promoted.text).entries;
  assertEquals(entries.map((e) => e.entry.tier), [1]);
  const touched = effectContent(first, proposal({ operation: "touch", run_id: "R000009" }), live);
  assert(touched.text.includes("[F:R000002] [L:R000009] [] Text. -> .bimri/log/R000009.md"));
  const closed = effectContent(first, proposal({ operation: "close" }), live);
  assertEquals(closed.text, GENESIS_VIEW);
  assertEquals(closed.archivedRaw, live.raw);
});

Deno.test("equivalence compares every authored field, not the entry ID", () => {
  const text = effectContent(GENESIS_VIEW, proposal({ tags: ["x"] }), null).text;
  const live = findLive(parseView(text), state, "a.b")!;
  assert(proposalEquivalent(proposal({ tags: ["x"], entry_id: "R000005-E009" }), live.entry));
  assert(!proposalEquivalent(proposal({ tags: ["y"] }), live.entry));
  assert(!proposalEquivalent(proposal({ tags: ["x"], importance: 4 }), live.entry));
  assert(
    !proposalEquivalent(proposal({ tags: ["x"], trust: "confirmed", source: "user" }), live.entry),
  );
  assert(!proposalEquivalent(proposal({ tags: ["x"], operation: "touch" }), live.entry));
});
