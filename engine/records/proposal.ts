/**
 * Read side of proposal records, shared by memory/ and retrieval/.
 *
 * `.bimri/proposals/<id>.json`: the 33 fields a 5.1.0 proposal carries,
 * reading with light validation, the caller-authored intent used to recognize
 * a same-run retry, and whether current memory already holds a proposal's
 * effect. Nothing here writes.
 */
import { BimriError } from "../errors.ts";
import { type MemoryEntry, normalizeTags } from "../model/hot.ts";
import { PROPOSAL_ID } from "../model/ids.ts";
import type { JsonObject, JsonValue } from "../model/json.ts";
import { readRecord } from "../store/records.ts";
import { lstatOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";

/** The preflight receipt stamped on every 5.1 proposal. */
export type PreflightReceipt = {
  engine_release: string;
  observed_head_revision: number;
  observed_head_hash: string;
  observed_key_hash: string;
};

/** A staged change, field for field as the reference writes it. */
export type Proposal = {
  bimri_version: string;
  proposal_id: string;
  run_id: string;
  actor: string;
  created_at: string;
  operation: "set" | "touch" | "close";
  new_subject: boolean;
  tier: 1 | 2 | 3;
  key: string;
  target_id: string | null;
  entry_id: string;
  kind: string;
  importance: number;
  status: string;
  trust: string;
  source: string;
  tags: string[];
  text: string;
  rationale: string;
  needs_human: boolean;
  question: string;
  confidence: string;
  observations: number;
  evidence: string[];
  falsifier: string;
  pattern_id: string | null;
  first_run: string;
  base_revision: number;
  base_hash: string;
  base_storage: "absent" | "hot" | "cold";
  base_archive_proposal_id: string | null;
  hold_reason: string | null;
  preflight_receipt: PreflightReceipt | null;
};

/** A proposal together with the exact bytes of its file (conflicts hash them). */
export type LoadedProposal = { proposal: Proposal; bytes: Uint8Array };

/** Fields that make up a caller's intent (allocated and observed fields excluded). */
export const PROPOSAL_INTENT_FIELDS = [
  "operation",
  "new_subject",
  "tier",
  "key",
  "target_id",
  "text",
  "source",
  "trust",
  "tags",
  "rationale",
  "needs_human",
  "question",
  "kind",
  "importance",
  "status",
  "confidence",
  "observations",
  "evidence",
  "falsifier",
] as const;

/** True when two proposals carry the same caller-authored intent. */
export function sameIntent(a: Proposal, b: Proposal): boolean {
  for (const field of PROPOSAL_INTENT_FIELDS) {
    if (JSON.stringify(a[field]) !== JSON.stringify(b[field])) return false;
  }
  return true;
}

/** The JSON document of a proposal (the serializer sorts keys). */
export function proposalToJson(proposal: Proposal): JsonObject {
  return { ...proposal } as unknown as JsonObject;
}

/** True when `current` already is exactly what a `set` proposal would write (ID aside). */
export function proposalEquivalent(proposal: Proposal, current: MemoryEntry | null): boolean {
  if (current === null || proposal.operation !== "set") return false;
  if (proposal.key !== current.key || proposal.text !== current.text) return false;
  if (proposal.tier !== current.tier) return false;
  if (current.tier === 3) {
    return proposal.confidence === current.confidence &&
      proposal.observations === current.observations &&
      proposal.evidence.join(",") === current.evidence.join(",") &&
      proposal.falsifier === current.falsifier;
  }
  if (proposal.trust !== current.trust || proposal.source !== current.source) return false;
  if (normalizeTags(proposal.tags).join(",") !== normalizeTags(current.tags).join(",")) {
    return false;
  }
  if (current.tier === 1) return proposal.kind === current.kind;
  return proposal.importance === current.importance && proposal.status === current.status;
}

function corrupt(id: string, detail: string): never {
  throw new BimriError("store-corrupt", `proposal ${id} is invalid (${detail}); run doctor.`);
}

/** Validates the fields the engine relies on and returns the typed proposal. */
export function parseProposal(id: string, value: JsonObject): Proposal {
  if (value.record_type === "authority-quarantine") {
    throw new BimriError(
      "authority-recovery-needed",
      `proposal ${id} is quarantined; restore it before continuing.`,
    );
  }
  if (value.proposal_id !== id) corrupt(id, "proposal_id does not match the file name");
  const op = value.operation;
  if (op !== "set" && op !== "touch" && op !== "close") corrupt(id, "operation");
  const tier = value.tier;
  if (tier !== 1 && tier !== 2 && tier !== 3) corrupt(id, "tier");
  for (const field of ["run_id", "key", "entry_id", "text", "base_hash"]) {
    if (typeof value[field] !== "string") corrupt(id, field);
  }
  if (typeof value.base_revision !== "number") corrupt(id, "base_revision");
  const storage = value.base_storage ?? "hot";
  const withDefaults: Record<string, JsonValue> = {
    ...value,
    new_subject: value.new_subject ?? false,
    base_storage: storage,
    base_archive_proposal_id: value.base_archive_proposal_id ?? null,
    hold_reason: value.hold_reason ?? null,
    preflight_receipt: value.preflight_receipt ?? null,
    tags: value.tags ?? [],
    evidence: value.evidence ?? [],
    falsifier: value.falsifier ?? "",
    pattern_id: value.pattern_id ?? null,
    first_run: value.first_run ?? value.run_id,
    target_id: value.target_id ?? null,
  };
  return withDefaults as unknown as Proposal;
}

/** Reads a proposal with its exact bytes; null when the file does not exist. */
export function readProposal(paths: StorePaths, id: string): LoadedProposal | null {
  if (!PROPOSAL_ID.test(id)) throw new BimriError("invalid-input", `invalid proposal ID: ${id}`);
  const record = readRecord(paths.proposal(id), `proposal ${id}`);
  if (record === null) return null;
  return { proposal: parseProposal(id, record.value), bytes: record.bytes };
}

/** Reads a proposal that must exist. */
export function requireProposal(paths: StorePaths, id: string): LoadedProposal {
  const loaded = readProposal(paths, id);
  if (loaded === null) {
    throw new BimriError(
      "store-corrupt",
      `proposal ${id} is missing although memory refers to it; run doctor.`,
    );
  }
  return loaded;
}

/**
 * IDs of a run's proposal files, in number order. Only this run's files are
 * probed: every number up to the highest `[PROPOSE:]` marker of its log, then
 * onward while files exist (a crash can leave a file without its marker).
 */
export function runProposalIds(paths: StorePaths, run: string, markers: string[]): string[] {
  let highest = 0;
  for (const id of markers) {
    if (id.startsWith(`${run}-Q`)) highest = Math.max(highest, Number(id.slice(-3)));
  }
  const ids: string[] = [];
  for (let n = 1; n <= 999; n++) {
    const id = `${run}-Q${String(n).padStart(3, "0")}`;
    if (lstatOrNull(paths.proposal(id)) !== null) ids.push(id);
    else if (n > highest) break;
  }
  return ids;
}
