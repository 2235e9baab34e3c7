/**
 * Read side of owner questions, shared by every layer: conflict records, the
 * candidate proposals they name, their decisions and answers (resolutions),
 * and whether a memory line carries a set-candidate's chosen effect. Nothing
 * here writes.
 */
import { BimriError } from "../errors.ts";
import { CONFLICT_ID, PROPOSAL_ID } from "../model/ids.ts";
import type { MemoryEntry } from "../model/hot.ts";
import { isJsonObject, type JsonObject } from "../model/json.ts";
import { listNames } from "../store/files.ts";
import { readRecord } from "../store/records.ts";
import type { StorePaths } from "../store/paths.ts";
import type { Store } from "../store/store.ts";

/** A conflict record as read from `.bimri/conflicts/`. */
export type ConflictRecord = {
  conflict_id: string;
  type: string;
  key: string;
  created_at: string;
  proposal_ids: string[];
  proposal_hashes: Record<string, string>;
  current_line: string | null;
  current_hash: string;
  question: string;
  extra: JsonObject;
  /** The record exactly as stored (for rewrites that must keep unknown fields). */
  raw: JsonObject;
  /** The exact bytes of the file. */
  bytes: Uint8Array;
};

/** The fields of a proposal that review and resolution read. */
export type CandidateProposal = {
  proposal_id: string;
  run_id: string;
  actor: string;
  created_at: string;
  operation: string;
  tier: number;
  key: string;
  kind: string;
  importance: number;
  status: string;
  trust: string;
  source: string;
  tags: string[];
  text: string;
  rationale: string;
  confidence: string;
  observations: number;
  base_revision: number;
  base_hash: string;
  raw: JsonObject;
  bytes: Uint8Array;
};

function stringField(value: JsonObject, field: string, label: string): string {
  const v = value[field];
  if (typeof v !== "string") {
    throw new BimriError("store-corrupt", `${label} field ${field} is invalid; run doctor.`);
  }
  return v;
}

function intField(value: JsonObject, field: string, label: string): number {
  const v = value[field];
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw new BimriError("store-corrupt", `${label} field ${field} is invalid; run doctor.`);
  }
  return v;
}

function stringList(value: JsonObject, field: string, label: string): string[] {
  const v = value[field];
  if (!Array.isArray(v) || v.some((item) => typeof item !== "string")) {
    throw new BimriError("store-corrupt", `${label} field ${field} is invalid; run doctor.`);
  }
  return v as string[];
}

/** Reads conflict `id`; null when the file does not exist. */
export function readConflict(store: Store, id: string): ConflictRecord | null {
  const label = `conflict ${id}`;
  const record = readRecord(store.paths.conflict(id), label);
  if (!record) return null;
  const v = record.value;
  if (v.conflict_id !== id) {
    throw new BimriError("store-corrupt", `${label} does not carry its own ID; run doctor.`);
  }
  const hashes = v.proposal_hashes;
  // Conflicts written before format 5.1.0 carry no `extra`.
  const extra = v.extra === undefined ? {} : v.extra;
  const line = v.current_line;
  if (
    !isJsonObject(hashes) || !isJsonObject(extra) || (line !== null && typeof line !== "string")
  ) {
    throw new BimriError("store-corrupt", `${label} is malformed; run doctor.`);
  }
  const ids = stringList(v, "proposal_ids", label);
  if (ids.some((p) => !PROPOSAL_ID.test(p))) {
    throw new BimriError("store-corrupt", `${label} names an invalid candidate; run doctor.`);
  }
  return {
    conflict_id: id,
    type: stringField(v, "type", label),
    key: stringField(v, "key", label),
    created_at: stringField(v, "created_at", label),
    proposal_ids: ids,
    proposal_hashes: hashes as Record<string, string>,
    current_line: line as string | null,
    current_hash: stringField(v, "current_hash", label),
    question: typeof v.question === "string" ? v.question : "",
    extra,
    raw: v,
    bytes: record.bytes,
  };
}

/** Reads proposal `id` (fails closed when it is missing or malformed). */
export function readCandidate(store: Store, id: string): CandidateProposal {
  return readCandidateAt(store.paths, id);
}

/** `readCandidate` from the store's paths alone (the audit holds no loaded store). */
export function readCandidateAt(paths: StorePaths, id: string): CandidateProposal {
  const label = `proposal ${id}`;
  const record = readRecord(paths.proposal(id), label);
  if (!record) {
    throw new BimriError("store-corrupt", `${label} is missing; run doctor.`);
  }
  const v = record.value;
  if (v.proposal_id !== id) {
    throw new BimriError("store-corrupt", `${label} does not carry its own ID; run doctor.`);
  }
  return {
    proposal_id: id,
    run_id: stringField(v, "run_id", label),
    actor: stringField(v, "actor", label),
    created_at: stringField(v, "created_at", label),
    operation: stringField(v, "operation", label),
    tier: intField(v, "tier", label),
    key: stringField(v, "key", label),
    kind: typeof v.kind === "string" ? v.kind : "fact",
    importance: typeof v.importance === "number" ? v.importance : 3,
    status: typeof v.status === "string" ? v.status : "active",
    trust: stringField(v, "trust", label),
    source: stringField(v, "source", label),
    tags: Array.isArray(v.tags) ? (v.tags.filter((t) => typeof t === "string") as string[]) : [],
    text: stringField(v, "text", label),
    rationale: typeof v.rationale === "string" ? v.rationale : "",
    confidence: typeof v.confidence === "string" ? v.confidence : "emerging",
    observations: typeof v.observations === "number" ? v.observations : 1,
    base_revision: intField(v, "base_revision", label),
    base_hash: stringField(v, "base_hash", label),
    raw: v,
    bytes: record.bytes,
  };
}
/** The conflict IDs that exist, ascending (bounded by conflict_count and the folder). */
export function listConflictIds(store: Store): string[] {
  const names = listNames(store.paths.folder("conflicts"))
    .filter((n) => n.endsWith(".json"))
    .map((n) => n.slice(0, -5))
    .filter((id) => CONFLICT_ID.test(id));
  return [...new Set(names)].sort();
}

/** Reads a decision record; null when it does not exist. */
export function readDecision(store: Store, proposalId: string): JsonObject | null {
  return readRecord(store.paths.decision(proposalId), `decision ${proposalId}`)?.value ?? null;
}

/** Reads a resolution record; null when it does not exist. */
export function readResolution(store: Store, conflictId: string): JsonObject | null {
  return readRecord(store.paths.resolution(conflictId), `resolution ${conflictId}`)?.value ?? null;
}

/** True when `entry` carries exactly the effect a human choice of set-candidate `p` would write. */
export function candidateSetMatches(p: CandidateProposal, entry: MemoryEntry | null): boolean {
  if (!entry || entry.tier !== p.tier || entry.key !== p.key || entry.text !== p.text) return false;
  if (entry.tier === 3) {
    const falsifier = typeof p.raw.falsifier === "string" ? p.raw.falsifier : "";
    const evidence = Array.isArray(p.raw.evidence) ? p.raw.evidence.join(",") : "";
    return entry.confidence === p.confidence && entry.observations === p.observations &&
      entry.falsifier === falsifier && entry.evidence.join(",") === evidence;
  }
  const sameClaim = entry.trust === "confirmed" && entry.source === p.source &&
    entry.tags.join(",") === p.tags.join(",");
  if (entry.tier === 1) return sameClaim && entry.kind === p.kind;
  return sameClaim && entry.importance === p.importance && entry.status === p.status;
}
