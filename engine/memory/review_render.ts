/**
 * The one renderer of owner questions (protocol section 9), shared by the
 * sync-time creation notice and the `review` command: each conflict block,
 * its candidates' consequences and the owner's exact resolve commands.
 */
import { BimriError } from "../errors.ts";
import { revisionName } from "../model/ids.ts";
import { type MemoryEntry, parseAnyEntry } from "../model/hot.ts";
import type { Store } from "../store/store.ts";
import {
  type CandidateProposal,
  type ConflictRecord,
  readCandidate,
  readConflict,
} from "../records/conflict.ts";
import { type LiveEntry, liveEntry } from "../records/live_entry.ts";

/** One candidate of a conflict whose effect is already in accepted history. */
export type Satisfaction = { revision: number; lineHash: string };

/** The label people see: derived from the type and the displayed candidates. */
export function conflictLabel(type: string, operations: string[]): string {
  if (type === "manual-edit") return "Recovery review";
  if (type !== "stale-base") return "Legacy review";
  if (operations.length > 0 && operations.every((op) => op === "close")) {
    return "Concurrent removal";
  }
  return "Concurrent edit";
}

function heading(type: string): string {
  if (type === "stale-base") return "MEMORY CONFLICT";
  if (type === "manual-edit") return "MEMORY RECOVERY";
  return "MEMORY REVIEW";
}

const LEGACY_STOP_REASONS: Record<string, string> = {
  "agent-declared": "an older agent explicitly requested owner judgment.",
  "approval": "an older release required owner approval for this core-memory proposal.",
  "confirmed-change": "an older release stopped before changing confirmed memory.",
  "capacity-or-validation": "an older proposal exceeded a capacity or validation rule.",
};

function stopReason(conflict: ConflictView): string {
  if (conflict.type === "stale-base") {
    return "another run changed the same subject after this candidate was staged, and the two effects are incompatible.";
  }
  if (conflict.type === "manual-edit") {
    return "generated memory and accepted authority differ; BIMRI preserved the evidence and paused shared-memory writes.";
  }
  return LEGACY_STOP_REASONS[conflict.type] ?? (conflict.question || "review required.");
}

/** "Tier 2; importance 3; active; source agent; trust working" for a memory line. */
export function entryMetadata(entry: MemoryEntry): string {
  const parts = [`Tier ${entry.tier}`];
  if (entry.tier === 1) parts.push(entry.kind);
  else if (entry.tier === 2) parts.push(`importance ${entry.importance}`, entry.status);
  else parts.push(entry.confidence, `${entry.observations} observations`);
  if (entry.tier !== 3) {
    parts.push(`source ${entry.source}`, `trust ${entry.trust}`);
    if (entry.tags.length > 0) parts.push(`tags ${entry.tags.join(", ")}`);
  }
  return parts.filter((p) => p !== "").join("; ");
}

/** add / replace / remove/archive / refresh, as the reference names the action. */
export function actionName(operation: string, hasSnapshot: boolean): string {
  if (operation === "close") return "remove/archive";
  if (operation === "touch") return "refresh";
  return hasSnapshot ? "replace" : "add";
}

function proposedMetadata(p: CandidateView): string {
  const parts = [`Tier ${p.tier}`];
  if (p.tier === 1) parts.push(p.kind);
  else if (p.tier === 2) parts.push(`importance ${p.importance}`, p.status);
  else parts.push(p.confidence, `${p.observations} observations`);
  if (p.tier === 1 || p.tier === 2) {
    parts.push(`source ${p.source}`, "trust confirmed when chosen");
    if (p.tags.length > 0) parts.push(`tags ${p.tags.join(", ")}`);
  }
  return parts.join("; ");
}

function candidateLines(
  conflict: ConflictView,
  p: CandidateView,
  hasSnapshot: boolean,
  satisfied: Satisfaction | undefined,
): string[] {
  const id = p.proposal_id;
  let state: string;
  let metadata: string;
  if (p.operation === "close") {
    state =
      "Proposed post-state: absent from current memory; preserve the exact removed line in the archive.";
    metadata = `Archive effect: exact prior storage line retained with proposal provenance ${id}.`;
  } else if (p.operation === "touch") {
    state =
      `Proposed post-state: keep the live value and authority fields; refresh recency for run ${p.run_id}.`;
    metadata =
      "Preserved metadata: live text and authority fields remain unchanged; only safe recency is refreshed.";
  } else {
    state = `Proposed value: "${p.text}"`;
    metadata = `Proposed metadata: ${proposedMetadata(p)}`;
  }
  let consequence: string;
  if (satisfied) {
    consequence = `Status: already satisfied by ${
      revisionName(satisfied.revision)
    }; no action is required.`;
  } else if (p.operation === "close") {
    consequence =
      `Choose ${id}: remove ${conflict.key} from hot memory and preserve the exact prior line in the archive.`;
  } else if (p.operation === "touch") {
    consequence =
      `Choose ${id}: keep the value and authority fields, then refresh its recency for run ${p.run_id}.`;
  } else if (hasSnapshot) {
    consequence =
      `Choose ${id}: replace the live value with the proposed value shown above, record confirmed trust, and preserve source ${p.source}.`;
  } else {
    consequence =
      `Choose ${id}: add the proposed value to hot memory, record confirmed trust, and preserve source ${p.source}.`;
  }
  return [
    "",
    `Choice ${id}`,
    `Action: ${actionName(p.operation, hasSnapshot)}`,
    state,
    metadata,
    `Candidate: run ${p.run_id} (${p.actor}) | ${p.created_at} | base ${
      revisionName(p.base_revision)
    }`,
    `Authority: source ${p.source} | trust ${p.trust}`,
    `Rationale: ${p.rationale}`,
    consequence,
  ];
}

/**
 * Renders one conflict block: subject, live value and residency, the snapshot
 * taken when it was raised, why reconciliation stopped, and each displayed
 * candidate with its consequence. `proposalIds` limits the candidates shown
 * (the notice shows only the candidate that just joined).
 */
export function renderConflictBlock(
  store: Store,
  conflict: ConflictRecord,
  proposalIds: string[] = conflict.proposal_ids,
  satisfied: Record<string, Satisfaction> = {},
): string {
  const proposals = proposalIds.map((id) => readCandidate(store, id));
  return formatConflict(conflict, proposals, liveEntry(store, conflict.key), satisfied);
}

/** The shape of the data `formatConflict` needs from a conflict record. */
export type ConflictView = Pick<
  ConflictRecord,
  "conflict_id" | "type" | "key" | "current_line" | "question" | "extra"
>;

/** The candidate fields `formatConflict` shows. */
export type CandidateView = Pick<
  CandidateProposal,
  | "proposal_id"
  | "run_id"
  | "actor"
  | "created_at"
  | "operation"
  | "tier"
  | "kind"
  | "importance"
  | "status"
  | "trust"
  | "source"
  | "tags"
  | "text"
  | "rationale"
  | "confidence"
  | "observations"
  | "base_revision"
>;

/** Pure text of one conflict block (the single renderer behind notices and review). */
export function formatConflict(
  conflict: ConflictView,
  proposals: CandidateView[],
  live: LiveEntry | null,
  satisfied: Record<string, Satisfaction> = {},
): string {
  const snapshot = conflict.current_line === null ? null : parseAnyEntry(conflict.current_line);
  if (conflict.current_line !== null && snapshot === null) {
    throw new BimriError(
      "store-corrupt",
      `conflict ${conflict.conflict_id} snapshot is not a valid memory entry; run doctor.`,
    );
  }
  const label = conflictLabel(conflict.type, proposals.map((p) => p.operation));
  const lines = [
    `${heading(conflict.type)} ${conflict.conflict_id} — ${label}`,
    `Subject: ${conflict.key}`,
  ];
  if (live) {
    lines.push(
      `Live value: "${live.entry.text}"`,
      `Live metadata: ${entryMetadata(live.entry)}`,
      `Live residency: ${
        live.storage === "cold" ? "cold-current (active and retrievable)" : "hot-current"
      }`,
    );
  } else {
    lines.push("Live value: absent from current memory");
  }
  if (snapshot) {
    lines.push(
      `Snapshot when raised: "${snapshot.text}"`,
      `Snapshot metadata: ${entryMetadata(snapshot)}`,
    );
  } else {
    lines.push("Snapshot when raised: absent from current memory");
  }
  lines.push(`Why BIMRI stopped: ${stopReason(conflict)}`);
  lines.push(
    live
      ? `Keep live: "${live.entry.text}" remains unchanged.`
      : "Keep live: this subject remains absent from current memory.",
  );
  if (conflict.type === "manual-edit") {
    const files = Array.isArray(conflict.extra.recovery_files)
      ? conflict.extra.recovery_files.filter((f) => typeof f === "string") as string[]
      : [];
    for (const file of files) lines.push(`Preserved evidence: ${file}`);
    lines.push(
      "Owner action: review the preserved evidence, then choose current only if the accepted canonical memory should remain authoritative.",
    );
    return lines.join("\n");
  }
  for (const p of proposals) {
    lines.push(...candidateLines(conflict, p, snapshot !== null, satisfied[p.proposal_id]));
  }
  return lines.join("\n");
}

/**
 * The exact owner command of every choice of one review record, keep-current
 * and dismiss included (added after the reference's block lines, which stay
 * as they are): an agent that asked the owner runs the matching line.
 */
export function resolveCommandLines(conflictId: string, proposalIds: readonly string[]): string[] {
  const command = (choice: string) =>
    `bimri resolve ${conflictId} --choose ${choice} --human-approved`;
  return [
    "Owner commands:",
    `  keep live: ${command("current")}`,
    ...proposalIds.map((id) => `  choose ${id}: ${command(id)}`),
    `  dismiss the question: ${command("dismiss")}`,
  ];
}

/** A candidate that just joined a conflict during sync/close (one notice each). */
export type NewConflictCandidate = { conflictId: string; proposalId: string };

/**
 * The creation notices printed by sync/close: one block per (conflict,
 * candidate) pair in the order given (duplicates dropped), each followed by
 * `New conflict notices: total N | displayed i-i | remaining M`. Replays pass
 * nothing and print nothing. Returns one multi-line string per notice.
 */
export function renderNewConflictNotices(
  store: Store,
  candidates: NewConflictCandidate[],
): string[] {
  const unique: NewConflictCandidate[] = [];
  for (const c of candidates) {
    if (!unique.some((u) => u.conflictId === c.conflictId && u.proposalId === c.proposalId)) {
      unique.push(c);
    }
  }
  const total = unique.length;
  return unique.map((c, index) => {
    const conflict = readConflict(store, c.conflictId);
    if (!conflict) {
      throw new BimriError("store-corrupt", `conflict ${c.conflictId} is missing; run doctor.`);
    }
    const block = renderConflictBlock(store, conflict, [c.proposalId]);
    const n = index + 1;
    return `${block}\nNew conflict notices: total ${total} | displayed ${n}-${n} | remaining ${
      total - n
    }`;
  });
}
