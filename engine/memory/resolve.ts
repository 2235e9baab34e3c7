/**
 * Human resolution of an owner question (protocol section 9): the owner picks
 * one candidate, `current` (keep the live value) or `dismiss`. The resolution
 * record is written `applying` with its intended revision before any effect,
 * then `resolved` (or `failed`), and only then are the candidates' contested
 * decisions finalized. Crash recovery finalizes an `applying` resolution only
 * when the chosen effect is proven committed; otherwise the same choice must
 * be given again and is re-applied.
 */
import { BimriError } from "../errors.ts";
import { cleanScalar, PROPOSAL_ID, requireConflictId } from "../model/ids.ts";
import { lineHash, sha256Hex } from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import type { JsonObject } from "../model/json.ts";
import { faultPoint } from "../store/fault.ts";
import { listNames } from "../store/files.ts";
import { plannedRevisionNumber } from "../store/store.ts";
import { replaceRecord } from "../store/records.ts";
import { invalidateAuditWitness, type Store } from "../store/store.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import {
  knownApplyingResolutions,
  noteResolutionApplying,
  noteResolutionSettled,
} from "../integrity/everyday.ts";
import { trackMentions } from "./proposal_mentions.ts";
import { registerResolutionFinisher } from "./commit.ts";
import {
  type CandidateProposal,
  candidateSetMatches,
  type ConflictRecord,
  readCandidate,
  readConflict,
  readDecision,
  readResolution,
} from "../records/conflict.ts";
import { liveEntry } from "../records/live_entry.ts";
import {
  chosenEffectAtHead,
  requireProvenResolvedAnswer,
  requireRecordedResidency,
} from "../records/answer_proof.ts";

/**
 * Commits one chosen candidate's effect as a human-confirmed change (Tier 1/2
 * trust becomes confirmed, the source stays) and returns the new revision.
 * Provided by the commit protocol; it must write no decision of its own.
 */
export type ChosenEffectCommitter = (store: Store, proposalId: string) => number;

/** What a resolve did. */
export type ResolveOutcome = {
  conflict_id: string;
  choice: string;
  status: "resolved";
  /** True when the conflict was already resolved (nothing new was decided). */
  already_resolved: boolean;
  revision_before: number;
  revision_after: number;
};

const CHANGED_MESSAGE =
  "memory changed after this question was raised. Ask the agent to review the latest state before resolving it.";

/**
 * Whether a resolved record choosing the close `candidate` can be proven by
 * the reference engine. It proves a chosen close only through the archive row
 * of the conflict's live line, and only for a close whose own base was that
 * very line. A close in a stale-base conflict was based on an older value, so
 * the reference cannot prove it (it fails its own resolve there, and it treats
 * such a record written by another engine as damaged authority and pauses
 * every shared write). bimri therefore never writes one.
 */
function referenceProvesClose(candidate: CandidateProposal, conflict: ConflictRecord): boolean {
  return candidate.operation !== "close" ||
    (conflict.current_line !== null && candidate.base_hash === lineHash(conflict.current_line));
}

function unprovableCloseMessage(conflict: ConflictRecord, candidate: CandidateProposal): string {
  return `${candidate.proposal_id} closes ${conflict.key} from an older value, and a resolution choosing it cannot be verified by the reference engine, which would then pause shared writes on this store. Choose current or dismiss instead; to remove ${conflict.key}, start a run and propose the close against the live value: bimri propose --run <run> --operation close --key ${conflict.key}`;
}

/** Decision fields a resolution adds when it finalizes a contested candidate. */
function finalizedDecision(
  decision: JsonObject,
  conflictId: string,
  resolution: JsonObject,
  proposalId: string,
): JsonObject {
  return {
    ...decision,
    initial_outcome: typeof decision.initial_outcome === "string"
      ? decision.initial_outcome
      : decision.outcome as string,
    outcome: resolution.choice === proposalId ? "accepted" : "noop",
    resolution_id: conflictId,
    resolution_choice: resolution.choice as string,
    resolved_at: resolution.resolved_at as string,
    revision: resolution.revision_after as number,
  };
}

function isFinalFor(decision: JsonObject, conflictId: string, resolution: JsonObject, id: string) {
  const expected = resolution.choice === id ? "accepted" : "noop";
  return decision.outcome === expected && decision.resolution_id === conflictId &&
    decision.resolution_choice === resolution.choice &&
    decision.resolved_at === resolution.resolved_at &&
    decision.revision === resolution.revision_after;
}

/**
 * Rewrites every candidate decision of a resolved conflict to its final
 * outcome (chosen -> accepted, others -> noop). Idempotent: decisions already
 * final for this resolution are left alone. Validates all before writing.
 */
export function finalizeCandidateDecisions(
  store: Store,
  conflict: ConflictRecord,
  resolution: JsonObject,
): number {
  if (resolution.status !== "resolved") {
    throw new BimriError("refused", "cannot finalize decisions from an unfinished resolution.");
  }
  const planned: { id: string; value: JsonObject }[] = [];
  const ids = Array.isArray(resolution.proposal_ids)
    ? resolution.proposal_ids as string[]
    : conflict.proposal_ids;
  for (const id of ids) {
    const decision = readDecision(store, id);
    if (!decision) {
      throw new BimriError(
        "store-corrupt",
        `cannot finalize ${conflict.conflict_id}: candidate decision ${id} is missing; run doctor.`,
      );
    }
    if (isFinalFor(decision, conflict.conflict_id, resolution, id)) continue;
    if (decision.outcome !== "contested" || decision.conflict_id !== conflict.conflict_id) {
      throw new BimriError(
        "store-corrupt",
        `cannot finalize ${id}: its decision is neither the contested candidate of ${conflict.conflict_id} nor its resolved outcome; run doctor.`,
      );
    }
    planned.push({ id, value: finalizedDecision(decision, conflict.conflict_id, resolution, id) });
  }
  planned.forEach((p, index) => {
    replaceRecord(store.paths.decision(p.id), p.value);
    if (index === 0) faultPoint("resolve-first-decision-finalized");
  });
  return planned.length;
}

/** Refuses when a candidate's proposal file no longer has the hash the conflict recorded. */
function verifyCandidateHashes(store: Store, conflict: ConflictRecord): void {
  const recorded = Object.keys(conflict.proposal_hashes).sort().join(",");
  if (recorded !== [...conflict.proposal_ids].sort().join(",")) {
    throw new BimriError(
      "store-corrupt",
      `conflict ${conflict.conflict_id} candidate hashes do not name its candidates; run doctor.`,
    );
  }
  for (const id of conflict.proposal_ids) {
    const candidate = readCandidate(store, id);
    if (sha256Hex(candidate.bytes) !== conflict.proposal_hashes[id]) {
      throw new BimriError(
        "store-corrupt",
        `proposal ${id} changed after conflict ${conflict.conflict_id} recorded it; run doctor.`,
      );
    }
  }
}

/** Refuses unless every candidate's decision is contested here, or final for `resolution`. */
function verifyCandidateDecisions(
  store: Store,
  conflict: ConflictRecord,
  resolution: JsonObject | null,
): void {
  for (const id of conflict.proposal_ids) {
    const decision = readDecision(store, id);
    if (!decision) {
      throw new BimriError(
        "refused",
        `conflict ${conflict.conflict_id} candidate ${id} has no decision record yet; sync that run first.`,
      );
    }
    if (decision.outcome === "contested" && decision.conflict_id === conflict.conflict_id) continue;
    if (
      resolution && resolution.status === "resolved" &&
      decision.resolution_id === conflict.conflict_id
    ) continue;
    throw new BimriError(
      "store-corrupt",
      `candidate ${id} has an invalid decision state for conflict ${conflict.conflict_id}; run doctor.`,
    );
  }
}

function highestContestedRevision(store: Store, conflict: ConflictRecord): number {
  let highest = -1;
  for (const id of conflict.proposal_ids) {
    const d = readDecision(store, id);
    if (d && typeof d.revision === "number") highest = Math.max(highest, d.revision);
  }
  return highest >= 0 ? highest : store.state.head_revision;
}

function withoutFailure(record: JsonObject): JsonObject {
  const copy = { ...record };
  delete copy.failed_at;
  delete copy.error;
  return copy;
}

function complete(
  store: Store,
  conflict: ConflictRecord,
  record: JsonObject,
  revisionAfter: number,
): JsonObject {
  const resolved: JsonObject = {
    ...withoutFailure(record),
    status: "resolved",
    resolved_at: utcTimestamp(),
    revision_after: revisionAfter,
  };
  const path = store.paths.resolution(conflict.conflict_id);
  trackMentions(store.paths, path, () => replaceRecord(path, resolved));
  noteResolutionSettled(store, conflict.conflict_id);
  faultPoint("resolve-resolved-written");
  finalizeCandidateDecisions(store, conflict, resolved);
  invalidateAuditWitness(store.paths);
  return resolved;
}

function outcome(record: JsonObject, already: boolean): ResolveOutcome {
  return {
    conflict_id: record.conflict_id as string,
    choice: record.choice as string,
    status: "resolved",
    already_resolved: already,
    revision_before: record.revision_before as number,
    revision_after: record.revision_after as number,
  };
}

/**
 * Resolves conflict `conflictInput` with `choiceInput` (a candidate proposal
 * ID, `current` or `dismiss`). Must run under the engine lock on a freshly
 * loaded store; `commitChosen` applies a chosen candidate's effect.
 * `answeredElsewhere` (team memory only): the owner answered this question
 * in another clone with every candidate in view, so `dismiss` closes it even
 * though the live value moved since it was raised.
 */
export function resolveConflict(
  store: Store,
  conflictInput: string,
  choiceInput: string,
  humanApproved: boolean,
  commitChosen: ChosenEffectCommitter,
  answeredElsewhere = false,
): ResolveOutcome {
  const conflictId = requireConflictId(conflictInput);
  const choice = cleanScalar(choiceInput, "resolution choice", 80);
  const conflict = readConflict(store, conflictId);
  if (!conflict) throw new BimriError("unknown-record", `unknown conflict: ${conflictId}`);
  const ids = conflict.proposal_ids;
  if (choice !== "current" && choice !== "dismiss" && !ids.includes(choice)) {
    throw new BimriError("invalid-input", `choose current, dismiss, or one of: ${ids.join(", ")}`);
  }
  verifyCandidateHashes(store, conflict);
  const existing = readResolution(store, conflictId);
  if (existing && !["applying", "failed", "resolved"].includes(existing.status as string)) {
    throw new BimriError(
      "store-corrupt",
      `resolution ${conflictId} has an unknown status; run doctor.`,
    );
  }
  verifyCandidateDecisions(store, conflict, existing);

  // A finished answer stands: repeating it (with any choice) only completes
  // decision finalization an interruption may have left behind.
  if (existing && existing.status === "resolved") {
    requireProvenResolvedAnswer(store, conflict, existing);
    if (finalizeCandidateDecisions(store, conflict, existing) > 0) {
      invalidateAuditWitness(store.paths);
    }
    return outcome(existing, true);
  }
  if (!humanApproved) {
    throw new BimriError(
      "refused",
      "resolve requires --human-approved after the owner explicitly chooses an option. This is an attestation, not authentication.",
    );
  }
  if (existing && existing.status === "applying" && existing.choice !== choice) {
    throw new BimriError(
      "refused",
      `${conflictId} is already applying choice ${existing.choice}; retry that choice.`,
    );
  }
  const head = store.state.head_revision;
  const live = liveEntry(store, conflict.key);
  const liveHash = lineHash(live?.raw ?? null);
  const resumable = existing !== null && existing.choice === choice &&
    typeof existing.intended_revision_after === "number";
  const candidate = ids.includes(choice) ? readCandidate(store, choice) : null;
  if (candidate !== null && !PROPOSAL_ID.test(candidate.proposal_id)) {
    throw new BimriError("store-corrupt", `proposal ${choice} is malformed; run doctor.`);
  }
  if (candidate !== null && !referenceProvesClose(candidate, conflict)) {
    throw new BimriError(
      "refused",
      existing?.status === "applying"
        ? `${conflictId} stays applying ${choice}: ${unprovableCloseMessage(conflict, candidate)}`
        : unprovableCloseMessage(conflict, candidate),
    );
  }

  // Recovery: an interrupted attempt whose effect is proven finishes without
  // being applied twice. Keeping the live value (current) or dropping the
  // question (dismiss) has no effect of its own: the answer is proven where it
  // was recorded, at its two revisions, so values written since stand.
  if (
    resumable && candidate === null &&
    (existing!.intended_revision_after as number) <= head
  ) {
    requireRecordedResidency(store, conflict, existing!.revision_before as number);
    requireRecordedResidency(store, conflict, existing!.intended_revision_after as number);
    return outcome(
      complete(store, conflict, existing!, existing!.intended_revision_after as number),
      false,
    );
  }
  if (resumable && candidate !== null) {
    const intended = existing!.intended_revision_after as number;
    if (intended <= head && chosenEffectAtHead(store, conflict, candidate)) {
      requireRecordedResidency(store, conflict, existing!.revision_before as number);
      return outcome(complete(store, conflict, existing!, intended), false);
    }
  }
  // The owner chose an effect another run has meanwhile made current: record
  // the answer against the head without writing a new revision.
  const alreadyCurrent = candidate !== null &&
    (candidate.operation === "set"
      ? candidateSetMatches(candidate, live?.entry ?? null)
      : chosenEffectAtHead(store, conflict, candidate));
  if (!existing && alreadyCurrent) {
    const closed = candidate!.operation === "close" ? conflict.current_line : null;
    return answerWithoutCommit(store, conflict, choice, head, closed);
  }
  if (
    liveHash !== conflict.current_hash && answeredElsewhere && choice === "dismiss" && !existing
  ) {
    // Answered in another clone after the live value moved here: the
    // question is closed as of the revision it was asked at, which still
    // holds the value it named (so the answer stays verifiable).
    return answerWithoutCommit(store, conflict, choice, null, null);
  }
  if (liveHash !== conflict.current_hash) throw new BimriError("refused", CHANGED_MESSAGE);
  const revisionBefore = typeof existing?.revision_before === "number"
    ? existing.revision_before
    : head;
  requireRecordedResidency(store, conflict, revisionBefore);
  if (candidate === null && revisionBefore !== head) {
    requireRecordedResidency(store, conflict, head);
  }

  const applying = applyingResolution(conflictId, choice, ids, {
    intended_revision_after: candidate === null ? head : plannedRevisionNumber(store),
    revision_before: revisionBefore,
    started_at: typeof existing?.started_at === "string" ? existing.started_at : utcTimestamp(),
  });
  if (candidate?.operation === "close" && live !== null) applying.archived_raw = live.raw;
  const path = store.paths.resolution(conflictId);
  trackMentions(store.paths, path, () => replaceRecord(path, applying));
  noteResolutionApplying(store, conflictId);
  invalidateAuditWitness(store.paths);
  faultPoint("resolve-applying-written");

  let revisionAfter = head;
  if (candidate !== null) {
    try {
      revisionAfter = commitChosen(store, candidate.proposal_id);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const failed: JsonObject = {
        ...applying,
        status: "failed",
        failed_at: utcTimestamp(),
        error: [...message.replace(/[\r\n\t]+/g, " ")].slice(0, 1000).join(""),
      };
      trackMentions(store.paths, path, () => replaceRecord(path, failed));
      noteResolutionSettled(store, conflictId);
      throw error;
    }
    faultPoint("resolve-effect-committed");
    if (revisionAfter !== applying.intended_revision_after) {
      // The committed revision is what the record must name; keep them equal.
      applying.intended_revision_after = revisionAfter;
    }
  }
  return outcome(complete(store, conflict, applying, revisionAfter), false);
}

/**
 * Finishes every `applying` resolution whose chosen effect the head already
 * proves committed (a crash between the commit and the `resolved` record):
 * the record becomes `resolved` and the candidates' decisions are finalized.
 * Nothing is re-applied and unproven answers are left for the owner's retry.
 * Meant for the start of sync/close (under the engine lock) so a committed
 * answer is finalized before later same-key intents move the key on.
 * Returns the conflict IDs it finished.
 */
export function finalizeCommittedResolutions(store: Store): string[] {
  const finished: string[] = [];
  // The health check that preceded this knows which resolutions are applying
  // (usually none), so the everyday path reads no resolution history.
  const candidates = knownApplyingResolutions(store) ??
    listNames(store.paths.folder("resolutions"))
      .filter((name) => /^C[0-9]{6}\.json$/.test(name))
      .map((name) => name.slice(0, -5)).sort();
  for (const id of candidates) {
    const record = readResolution(store, id);
    if (!record || record.status !== "applying") continue;
    const intended = record.intended_revision_after;
    const choice = record.choice;
    if (typeof intended !== "number" || typeof choice !== "string") continue;
    if (!PROPOSAL_ID.test(choice) || intended > store.state.head_revision) continue;
    const conflict = readConflict(store, id);
    if (!conflict || !conflict.proposal_ids.includes(choice)) continue;
    const candidate = readCandidate(store, choice);
    // An unprovable close the reference left applying stays as it left it.
    if (!referenceProvesClose(candidate, conflict)) continue;
    if (!chosenEffectAtHead(store, conflict, candidate)) continue;
    complete(store, conflict, record, intended);
    finished.push(id);
  }
  return finished;
}

/**
 * Records an answer that commits nothing, as of the highest revision a
 * candidate was contested at (its residency proven there): resolved at
 * `head` when the chosen effect is already current there, else (`head`
 * null: a question closed as it was asked) at that same revision, which the
 * record then also names as its intended revision. `archivedRaw`: the live
 * line a chosen close archived.
 */
function answerWithoutCommit(
  store: Store,
  conflict: ConflictRecord,
  choice: string,
  head: number | null,
  archivedRaw: string | null,
): ResolveOutcome {
  const asked = highestContestedRevision(store, conflict);
  requireRecordedResidency(store, conflict, asked);
  const record = applyingResolution(conflict.conflict_id, choice, conflict.proposal_ids, {
    ...(head === null ? { intended_revision_after: asked } : {}),
    revision_before: asked,
    started_at: utcTimestamp(),
  });
  if (archivedRaw !== null) record.archived_raw = archivedRaw;
  return outcome(complete(store, conflict, record, head ?? asked), false);
}

/**
 * The owner's answer as first written (`status: applying`), before its effect
 * is committed; `when` holds the revisions and start time of this answer.
 */
function applyingResolution(
  conflictId: string,
  choice: string,
  proposalIds: string[],
  when: { intended_revision_after?: number; revision_before: number; started_at: string },
): JsonObject {
  return {
    authority: "human-asserted",
    bimri_version: AUTHORITY_FORMAT,
    by: "user",
    choice,
    conflict_id: conflictId,
    ...when,
    proposal_ids: proposalIds,
    status: "applying",
  };
}

// commit.ts finishes committed resolutions through this once it is loaded
// (sync and close load it only when a resolution may be applying).
registerResolutionFinisher(finalizeCommittedResolutions);
