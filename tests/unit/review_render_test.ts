/** The one conflict renderer: exact text against the reference's recorded notice, and each variant. */
import { assert, assertEquals, assertMatch, assertThrows } from "../helpers/assert.ts";
import {
  actionName,
  type CandidateView,
  conflictLabel,
  type ConflictView,
  entryMetadata,
  formatConflict,
} from "../../engine/memory/review_render.ts";
import type { LiveEntry } from "../../engine/records/live_entry.ts";
import { parseAnyEntry } from "../../engine/model/hot.ts";
import { proposalRecord } from "../helpers/records.ts";

const LIVE_LINE =
  "[R000002-E001] [K:api.timeout] [I:3] [active] [T:working] [SRC:agent] [F:R000001] [L:R000002] [] Timeout is 45 seconds. -> .bimri/log/R000002.md";

function conflict(overrides: Partial<ConflictView> = {}): ConflictView {
  return {
    conflict_id: "C000001",
    type: "stale-base",
    key: "api.timeout",
    current_line: LIVE_LINE,
    question: "",
    extra: { current_storage: "hot" },
    ...overrides,
  };
}

function candidate(overrides: Partial<CandidateView> = {}): CandidateView {
  const proposal = proposalRecord({
    proposal_id: "R000003-Q001",
    run_id: "R000003",
    actor: "beta",
    created_at: "2026-12-02T12:58:50Z",
    text: "Timeout is 60 seconds.",
    rationale: "Timeout is 60 seconds.",
    base_revision: 3,
  });
  return { ...proposal, ...overrides };
}

function live(line: string, storage: "hot" | "cold" = "hot"): LiveEntry {
  const entry = parseAnyEntry(line);
  assert(entry !== null);
  return { entry, raw: line, storage };
}

Deno.test("the concurrent-edit block matches the reference notice line for line", () => {
  // Recorded by the reference (golden conflict-review-resolve, step 14), <TS> filled in.
  const expected = [
    "MEMORY CONFLICT C000001 — Concurrent edit",
    "Subject: api.timeout",
    'Live value: "Timeout is 45 seconds."',
    "Live metadata: Tier 2; importance 3; active; source agent; trust working",
    "Live residency: hot-current",
    'Snapshot when raised: "Timeout is 45 seconds."',
    "Snapshot metadata: Tier 2; importance 3; active; source agent; trust working",
    "Why BIMRI stopped: another run changed the same subject after this candidate was staged, and the two effects are incompatible.",
    'Keep live: "Timeout is 45 seconds." remains unchanged.',
    "",
    "Choice R000003-Q001",
    "Action: replace",
    'Proposed value: "Timeout is 60 seconds."',
    "Proposed metadata: Tier 2; importance 3; active; source agent; trust confirmed when chosen",
    "Candidate: run R000003 (beta) | 2026-12-02T12:58:50Z | base V000003",
    "Authority: source agent | trust working",
    "Rationale: Timeout is 60 seconds.",
    "Choose R000003-Q001: replace the live value with the proposed value shown above, record confirmed trust, and preserve source agent.",
  ].join("\n");
  assertEquals(formatConflict(conflict(), [candidate()], live(LIVE_LINE)), expected);
});

Deno.test("labels: edit, removal (all candidates close), recovery, legacy", () => {
  assertEquals(conflictLabel("stale-base", ["set"]), "Concurrent edit");
  assertEquals(conflictLabel("stale-base", ["close", "set"]), "Concurrent edit");
  assertEquals(conflictLabel("stale-base", ["close", "close"]), "Concurrent removal");
  assertEquals(conflictLabel("manual-edit", []), "Recovery review");
  assertEquals(conflictLabel("approval", ["set"]), "Legacy review");
  assertEquals(actionName("set", false), "add");
  assertEquals(actionName("set", true), "replace");
  assertEquals(actionName("close", true), "remove/archive");
  assertEquals(actionName("touch", true), "refresh");
});

Deno.test("a removal conflict with the live value gone shows absence and the archive consequence", () => {
  const text = formatConflict(
    conflict({ key: "z.item" }),
    [candidate({ operation: "close", text: "Item v1." })],
    null,
  );
  assertMatch(text, /^MEMORY CONFLICT C000001 — Concurrent removal$/m);
  assertMatch(text, /^Live value: absent from current memory$/m);
  assertMatch(text, /^Keep live: this subject remains absent from current memory\.$/m);
  assertMatch(text, /^Action: remove\/archive$/m);
  assertMatch(
    text,
    /^Proposed post-state: absent from current memory; preserve the exact removed line in the archive\.$/m,
  );
  assertMatch(
    text,
    /^Archive effect: exact prior storage line retained with proposal provenance R000003-Q001\.$/m,
  );
  assertMatch(text, /^Choose R000003-Q001: remove z\.item from hot memory/m);
});

Deno.test("an add against an absent snapshot, cold residency, tags, Tier 1 and Tier 3 metadata", () => {
  const text = formatConflict(
    conflict({ current_line: null }),
    [candidate({ tier: 1, kind: "decision", tags: ["api", "limits"] })],
    live(LIVE_LINE, "cold"),
  );
  assertMatch(text, /^Snapshot when raised: absent from current memory$/m);
  assertMatch(text, /^Live residency: cold-current \(active and retrievable\)$/m);
  assertMatch(text, /^Action: add$/m);
  assertMatch(
    text,
    /^Proposed metadata: Tier 1; decision; source agent; trust confirmed when chosen; tags api, limits$/m,
  );
  assertMatch(text, /^Choose R000003-Q001: add the proposed value to hot memory/m);
  const pattern = parseAnyEntry(
    "[P0001] [K:workflow.x] [developing] [obs:4] [ev:R000001-E001] Simplify first. | Falsify: speed wins.",
  );
  assert(pattern !== null);
  assertEquals(entryMetadata(pattern), "Tier 3; developing; 4 observations");
});

Deno.test("touch candidates, satisfied candidates and several candidates in one block", () => {
  const text = formatConflict(
    conflict(),
    [
      candidate({ operation: "touch" }),
      candidate({ proposal_id: "R000004-Q001", run_id: "R000004", actor: "gamma" }),
    ],
    live(LIVE_LINE),
    { "R000004-Q001": { revision: 9, lineHash: "" } },
  );
  assertMatch(text, /^Action: refresh$/m);
  assertMatch(text, /^Choose R000003-Q001: keep the value and authority fields, then refresh/m);
  assertMatch(text, /^Choice R000004-Q001$/m);
  assertMatch(text, /^Status: already satisfied by V000009; no action is required\.$/m);
});

Deno.test("a recovery review lists the preserved evidence and the owner action", () => {
  const text = formatConflict(
    conflict({
      type: "manual-edit",
      key: "manual.bimri",
      current_line: null,
      extra: { recovery_file: "a", recovery_files: [".bimri/recovery/manual-hot-1.md", "b"] },
    }),
    [],
    null,
  );
  assertMatch(text, /^MEMORY RECOVERY C000001 — Recovery review$/m);
  assertMatch(text, /^Preserved evidence: \.bimri\/recovery\/manual-hot-1\.md$/m);
  assertMatch(text, /^Preserved evidence: b$/m);
  assertMatch(text, /^Owner action: review the preserved evidence/m);
  assert(!text.includes("Choice "));
});

Deno.test("a corrupt snapshot line fails closed", () => {
  assertThrows(
    () => formatConflict(conflict({ current_line: "not a memory line" }), [], null),
    /snapshot is not a valid memory entry/,
  );
});
