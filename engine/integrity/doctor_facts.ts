/** The few fields of proposals and decisions a doctor audit keeps (records are not kept whole). */
import { isJsonObject, type JsonObject } from "../model/json.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import { isV51 } from "./schemas.ts";

/** The fields of a proposal the audit's effect checks use (records are not kept whole). */
export type ProposalFacts = {
  key: string;
  run: unknown;
  baseRevision: number;
  baseHash: unknown;
  baseStorage: string | undefined;
  baseArchiveProposalId: unknown;
  observedHeadHash: unknown;
  hasReceipt: boolean;
  operation: unknown;
  tier: unknown;
  entryId: unknown;
  holdReason: unknown;
  v51: boolean;
};

/** The fields of a decision the audit uses. */
export type DecisionFacts = {
  outcome: unknown;
  revision: number;
  reason: unknown;
  resolutionId: unknown;
  conflictId: unknown;
  /** A noop's evidence: where the matching generation was, and its line hash. */
  effectStorage: unknown;
  effectHash: unknown;
};

/** A noop the commit itself decided (an owner's dismissal is checked with its answer). */
export function isOwnNoop(d: DecisionFacts): boolean {
  return d.outcome === "noop" && typeof d.resolutionId !== "string" &&
    typeof d.revision === "number";
}

/**
 * The conflicts whose live snapshot the reference proves in the residency
 * they recorded (v5.1 records other than manual-edit reviews).
 */
export function bindsResidency(c: JsonObject): boolean {
  return c.bimri_version === AUTHORITY_FORMAT && c.type !== "manual-edit" &&
    typeof c.key === "string";
}

/** The facts the audit keeps of a parsed decision. */
export function decisionFacts(d: JsonObject): DecisionFacts {
  return {
    outcome: d.outcome,
    revision: d.revision as number,
    reason: d.reason,
    resolutionId: d.resolution_id,
    conflictId: d.conflict_id,
    // Kept for noops only: the audit holds every decision's facts at once.
    effectStorage: d.outcome === "noop" ? d.effect_storage : undefined,
    effectHash: d.outcome === "noop" ? d.effect_hash : undefined,
  };
}

/** The facts the audit keeps of a parsed proposal. */
export function proposalFacts(p: JsonObject): ProposalFacts {
  const receipt = p.preflight_receipt;
  return {
    key: p.key as string,
    run: p.run_id,
    baseRevision: p.base_revision as number,
    baseHash: p.base_hash,
    baseStorage: p.base_storage as string | undefined,
    baseArchiveProposalId: p.base_archive_proposal_id,
    observedHeadHash: isJsonObject(receipt) ? receipt.observed_head_hash : undefined,
    hasReceipt: isJsonObject(receipt),
    operation: p.operation,
    tier: p.tier,
    entryId: p.entry_id,
    holdReason: p.hold_reason,
    v51: isV51(p),
  };
}
