/**
 * Decision records (`.bimri/decisions/<proposal-id>.json`), write side: the
 * small state machine `applying` -> final, the evidence fields each outcome
 * carries, and the hold reasons with the words of their notices (propose,
 * sync and close print them). Reading is in records/decision.ts.
 */
import { lineHash } from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import type { JsonObject } from "../model/json.ts";
import { createRecord, replaceRecord } from "../store/records.ts";
import type { StorePaths } from "../store/paths.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import { type Decision, type Outcome, readDecision } from "../records/decision.ts";

/** The five hold reasons. */
export const HOLD_REASONS = [
  "classification-required",
  "tier1-human-authority-required",
  "confirmed-user-authority-required",
  "owner-resolution-in-progress",
  "capacity-residency-required",
] as const;

/** The `BIMRI HELD:` notice text of each hold reason. */
export const HOLD_MESSAGES: Record<string, string> = {
  "classification-required":
    "No exact current key matched. Search and reuse the intended key, or resubmit with --new-subject if this is genuinely new.",
  "confirmed-user-authority-required":
    "Current confirmed truth is unchanged. A direct owner statement may update or close this subject.",
  "tier1-human-authority-required":
    "Tier 1 truth is unchanged. A direct owner statement may admit or promote this subject.",
  "capacity-residency-required":
    "The intent is preserved, but no eligible hot resident could cool; current truth is unchanged.",
  "owner-resolution-in-progress":
    "The intent is preserved and current truth is unchanged while an earlier owner resolution finishes. Review or resubmit it afterward.",
};

/** A current generation as decisions record it (base or effect evidence). */
export type GenerationEvidence = {
  raw: string | null;
  storage: "absent" | "hot" | "cold";
  archiveProposalId?: string;
  archiveDate?: string;
};

/** A decision record of proposal `id` recorded now (also written in groups: commit_batch.ts). */
export function decisionRecord(id: string, outcome: Outcome, extra: JsonObject): Decision {
  return {
    bimri_version: AUTHORITY_FORMAT,
    proposal_id: id,
    outcome,
    recorded_at: utcTimestamp(),
    ...extra,
  };
}

/**
 * Writes a decision the way the protocol allows: created exclusively when
 * absent; an existing `applying` decision is replaced only when
 * `replaceApplying`; any other existing decision is left as it is and returned.
 */
export function writeDecision(
  paths: StorePaths,
  id: string,
  outcome: Outcome,
  extra: JsonObject,
  replaceApplying: boolean,
): Decision {
  const decision = decisionRecord(id, outcome, extra);
  const existing = readDecision(paths, id);
  if (existing === null) {
    if (createRecord(paths.decision(id), decision)) return decision;
    return readDecision(paths, id)!;
  }
  if (replaceApplying && existing.outcome === "applying") {
    replaceRecord(paths.decision(id), decision);
    return decision;
  }
  return existing;
}

/** `base_line`/`base_storage` (+ cold binding) fields of an applying decision. */
export function baseEvidence(generation: GenerationEvidence): JsonObject {
  const out: JsonObject = {
    base_line: generation.raw,
    base_storage: generation.storage,
  };
  if (generation.storage === "cold") {
    out.base_archive_proposal_id = generation.archiveProposalId ?? null;
    out.base_archive_date = generation.archiveDate ?? null;
  }
  return out;
}

/** `effect_*` fields of a noop decision. */
export function effectEvidence(generation: GenerationEvidence): JsonObject {
  const out: JsonObject = {
    effect_hash: lineHash(generation.raw),
    effect_line: generation.raw,
    effect_storage: generation.storage,
  };
  if (generation.storage === "cold") {
    out.effect_archive_proposal_id = generation.archiveProposalId ?? null;
    out.effect_archive_date = generation.archiveDate ?? null;
  }
  return out;
}

/** The next step for a proposal held for `reason` (stderr lines of propose, sync and close). */
export function heldNextStep(key: string, reason: string): string {
  return reason === "classification-required"
    ? `if ${key} is a new subject, propose it again with --new-subject; else reuse the existing key (bimri search)`
    : "the owner decides it in `bimri review`";
}

/**
 * The stderr line beside a `BIMRI HELD:` notice (whose text the reference
 * fixes): which proposal and key were held, and the next step.
 */
export function heldDetail(proposal: string, key: string, reason: string): string {
  return `BIMRI: held ${proposal} [${key}]: ${heldNextStep(key, reason)}.`;
}
