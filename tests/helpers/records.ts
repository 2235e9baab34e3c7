/** Builders of record values for unit tests: one complete default record of each kind, overridden field by field. */
import type { Proposal } from "../../engine/records/proposal.ts";

/** A valid Tier 2 `set` proposal of run R000002 for key `a.b` (text "Text."), with `fields` overriding. */
export function proposalRecord(fields: Partial<Proposal> = {}): Proposal {
  return {
    bimri_version: "5.1.0",
    proposal_id: "R000002-Q001",
    run_id: "R000002",
    actor: "codex",
    created_at: "2026-12-02T12:00:00Z",
    operation: "set",
    new_subject: false,
    tier: 2,
    key: "a.b",
    target_id: null,
    entry_id: "R000002-E001",
    kind: "fact",
    importance: 3,
    status: "active",
    trust: "working",
    source: "agent",
    tags: [],
    text: "Text.",
    rationale: "Text.",
    needs_human: false,
    question: "",
    confidence: "emerging",
    observations: 1,
    evidence: [],
    falsifier: "",
    pattern_id: null,
    first_run: "R000002",
    base_revision: 0,
    base_hash: "absent",
    base_storage: "absent",
    base_archive_proposal_id: null,
    hold_reason: null,
    preflight_receipt: null,
    ...fields,
  };
}
