/**
 * Pull review of owner questions (protocol section 9): one renderer shared by
 * the sync-time creation notice and the `review` command, the grouping of
 * conflicts into actionable, legacy, recovery and satisfied records, and
 * offset/limit pagination that always states total, range and remainder.
 */
import { BimriError } from "../errors.ts";
import { CONFLICT_ID, PROPOSAL_ID, revisionName } from "../model/ids.ts";
import { type MemoryEntry, parseAnyEntry, parseView } from "../model/hot.ts";
import { isJsonObject, type JsonObject } from "../model/json.ts";
import { listNames } from "../store/files.ts";
import { readRecord } from "../store/records.ts";
import type { StorePaths } from "../store/paths.ts";
import type { Store } from "../store/store.ts";
import { coldRecordOf } from "../model/state.ts";

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

/** Where a key's live generation is. */
export type LiveEntry = {
  entry: MemoryEntry;
  raw: string;
  storage: "hot" | "cold";
};

/** One candidate of a conflict whose effect is already in accepted history. */
export type Satisfaction = { revision: number; lineHash: string };

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

/** The live generation of `key` at the loaded head: hot first, then cold-current. */
export function liveEntry(store: Store, key: string): LiveEntry | null {
  const hot = store.head.view.entries.find((e) => e.entry.key === key);
  if (hot) return { entry: hot.entry, raw: hot.raw, storage: "hot" };
  const cold = coldRecordOf(store.state, key);
  if (cold) {
    const entry = parseAnyEntry(cold.raw_line);
    if (entry) return { entry, raw: cold.raw_line, storage: "cold" };
  }
  return null;
}

/** The conflict IDs that exist, ascending (bounded by conflict_count and the folder). */
export function listConflictIds(store: Store): string[] {
  const names = listNames(store.paths.folder("conflicts"))
    .filter((n) => n.endsWith(".json"))
    .map((n) => n.slice(0, -5))
    .filter((id) => CONFLICT_ID.test(id));
  return [...new Set(names)].sort();
}

// ---------------------------------------------------------------------------
// Rendering (one renderer for notices and review)

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

// ---------------------------------------------------------------------------
// Grouping and pagination for `review`

/** The four review groups, in display order. */
export const REVIEW_CATEGORIES = ["concurrent", "legacy", "recovery", "satisfied"] as const;
/** One review group. */
export type ReviewCategory = typeof REVIEW_CATEGORIES[number];

/** One displayable review record. */
export type ReviewItem = {
  category: ReviewCategory;
  conflict: ConflictRecord;
  proposalIds: string[];
  satisfied: Record<string, Satisfaction>;
};

/** Counts shown at the top of `review` and in `status`. */
export type ReviewCounts = {
  concurrent: number;
  legacy: number;
  recovery: number;
  satisfied: number;
};

const CATEGORY_HEADINGS: Record<ReviewCategory, string> = {
  concurrent: "ACTIONABLE CONCURRENT CONFLICT",
  legacy: "LEGACY REVIEW RECORD",
  recovery: "RECOVERY REVIEW",
  satisfied: "SATISFIED HISTORICAL CANDIDATE",
};

/** Reads a decision record; null when it does not exist. */
export function readDecision(store: Store, proposalId: string): JsonObject | null {
  return readRecord(store.paths.decision(proposalId), `decision ${proposalId}`)?.value ?? null;
}

/** Reads a resolution record; null when it does not exist. */
export function readResolution(store: Store, conflictId: string): JsonObject | null {
  return readRecord(store.paths.resolution(conflictId), `resolution ${conflictId}`)?.value ?? null;
}

/**
 * History needed to tell whether a contested candidate's effect already
 * reached accepted memory after it was contested. Built lazily, once per
 * review, because it reads every decision (review is not an everyday path).
 */
class AcceptedHistory {
  private revisions: number[] | null = null;
  private accepted = new Map<string, number>();
  private closedRows: { by: string; raw: string }[] = [];
  private cooledRows = new Map<string, { by: string; entry: MemoryEntry }[]>();
  private archiveRead = false;
  private views = new Map<number, Map<string, MemoryEntry>>();

  constructor(private readonly store: Store) {}

  /** Revision numbers that accepted authority references, ascending. */
  referencedRevisions(): number[] {
    if (this.revisions) return this.revisions;
    const set = new Set<number>([0, this.store.state.head_revision]);
    for (const name of listNames(this.store.paths.folder("decisions"))) {
      const id = name.replace(/\.json$/, "");
      if (!PROPOSAL_ID.test(id) || !name.endsWith(".json")) continue;
      const d = readDecision(this.store, id);
      if (d && d.outcome === "accepted" && typeof d.revision === "number") {
        set.add(d.revision);
        this.accepted.set(id, d.revision);
      }
    }
    for (const id of listConflictIds(this.store)) {
      const r = readResolution(this.store, id);
      if (r && r.status === "resolved" && typeof r.revision_after === "number") {
        set.add(r.revision_after);
      }
    }
    this.revisions = [...set].filter((n) => n <= this.store.state.head_revision).sort((a, b) =>
      a - b
    );
    return this.revisions;
  }

  /** The live entry of `key` at accepted revision `n` (cold generations only at the head). */
  entryAt(n: number, key: string): MemoryEntry | null {
    if (n === this.store.state.head_revision) return liveEntry(this.store, key)?.entry ?? null;
    let map = this.views.get(n);
    if (!map) {
      map = new Map();
      const bytes = readRecordText(this.store.paths.revision(n));
      if (bytes !== null) {
        for (const e of parseView(bytes, this.store.state.entry_max_chars).entries) {
          map.set(e.entry.key, e.entry);
        }
      }
      this.views.set(n, map);
    }
    return map.get(key) ?? null;
  }

  /**
   * The `closed` rows, and the `cooled` rows by the key of the generation they
   * hold, of every archive month: read once per review, for both questions.
   */
  private readArchiveRows(): void {
    this.referencedRevisions();
    if (this.archiveRead) return;
    this.archiveRead = true;
    for (const name of listNames(this.store.paths.folder("archive"))) {
      if (!/^[0-9]{4}-[0-9]{2}\.md$/.test(name)) continue;
      const text = readRecordText(this.store.paths.archiveMonth(name.slice(0, 7))) ?? "";
      for (const line of text.split("\n")) {
        const m = /^\[ARCHIVED:[0-9-]+\] \[BY:(R[0-9]{6}-Q[0-9]{3})\] \[(closed|cooled)\] (.+)$/
          .exec(line);
        if (!m) continue;
        if (m[2] === "closed") {
          this.closedRows.push({ by: m[1], raw: m[3] });
          continue;
        }
        const entry = parseAnyEntry(m[3]);
        if (!entry) continue;
        const rows = this.cooledRows.get(entry.key) ?? [];
        rows.push({ by: m[1], entry });
        this.cooledRows.set(entry.key, rows);
      }
    }
  }

  /**
   * The generations of `key` that set proposals accepted at revision `n` wrote
   * straight to cold storage (their cooled archive rows): a revision's view
   * shows only hot memory, so a value that went cold when it was written is
   * found here.
   */
  coldWrittenAt(n: number, key: string): MemoryEntry[] {
    this.readArchiveRows();
    const out: MemoryEntry[] = [];
    for (const { by, entry } of this.cooledRows.get(key) ?? []) {
      if (this.accepted.get(by) !== n) continue;
      // Only the proposal's own generation: a set elsewhere may cool this key's older value.
      const proposal = readRecord(this.store.paths.proposal(by), `proposal ${by}`)?.value;
      if (proposal && proposal.key === key && proposal.operation === "set") out.push(entry);
    }
    return out;
  }

  /**
   * True when close proposal `by`, accepted by revision `n`, archived exactly
   * `raw`. As in the reference, only the candidate's own close counts: another
   * run that closed the same line later made a different change.
   */
  closedBy(raw: string, n: number, by: string): boolean {
    this.readArchiveRows();
    return this.closedRows.some((row) => {
      const revision = this.accepted.get(row.by);
      return row.by === by && row.raw === raw && revision !== undefined && revision <= n;
    });
  }
}

function readRecordText(path: string): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Deno.readFileSync(path));
  } catch {
    return null;
  }
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

function satisfactionOf(
  history: AcceptedHistory,
  conflict: ConflictRecord,
  p: CandidateProposal,
  contestedAt: number,
): Satisfaction | null {
  // A touch only refreshes recency; whether it "happened" later cannot be told
  // apart from ordinary use, so it always stays a choice for the owner.
  if (p.operation === "touch") return null;
  for (const n of history.referencedRevisions()) {
    if (n <= contestedAt) continue;
    const entry = history.entryAt(n, conflict.key);
    if (p.operation === "close") {
      if (
        entry === null && conflict.current_line !== null &&
        history.closedBy(conflict.current_line, n, p.proposal_id)
      ) {
        return { revision: n, lineHash: "absent" };
      }
    } else if (
      candidateSetMatches(p, entry) ||
      history.coldWrittenAt(n, conflict.key).some((cold) => candidateSetMatches(p, cold))
    ) {
      return { revision: n, lineHash: "" };
    }
  }
  return null;
}

/** True when conflict `id` has a resolution whose status is `resolved`. */
function isResolved(store: Store, id: string): boolean {
  const r = readResolution(store, id);
  return r !== null && r.status === "resolved";
}

/** Sorts every unresolved conflict into the four review groups. */
export function classifyReviews(store: Store): ReviewItem[] {
  const items: ReviewItem[] = [];
  let history: AcceptedHistory | null = null;
  for (const id of listConflictIds(store)) {
    if (isResolved(store, id)) continue;
    const conflict = readConflict(store, id);
    if (!conflict) continue;
    if (conflict.type === "manual-edit") {
      items.push({ category: "recovery", conflict, proposalIds: [], satisfied: {} });
      continue;
    }
    const actionable: string[] = [];
    const satisfied: Record<string, Satisfaction> = {};
    for (const pid of conflict.proposal_ids) {
      const decision = readDecision(store, pid);
      let found: Satisfaction | null = null;
      if (decision && decision.outcome === "contested" && typeof decision.revision === "number") {
        history ??= new AcceptedHistory(store);
        found = satisfactionOf(history, conflict, readCandidate(store, pid), decision.revision);
      }
      if (found) satisfied[pid] = found;
      else actionable.push(pid);
    }
    const satisfiedIds = Object.keys(satisfied);
    if (satisfiedIds.length > 0) {
      items.push({ category: "satisfied", conflict, proposalIds: satisfiedIds, satisfied });
    }
    if (actionable.length > 0) {
      items.push({
        category: conflict.type === "stale-base" ? "concurrent" : "legacy",
        conflict,
        proposalIds: actionable,
        satisfied: {},
      });
    }
  }
  const order = (c: ReviewCategory) => REVIEW_CATEGORIES.indexOf(c);
  return items.sort((a, b) => order(a.category) - order(b.category));
}

/** Group sizes (satisfied counts candidates, the others count conflicts). */
export function reviewCounts(items: ReviewItem[]): ReviewCounts {
  const counts: ReviewCounts = { concurrent: 0, legacy: 0, recovery: 0, satisfied: 0 };
  for (const item of items) {
    counts[item.category] += item.category === "satisfied" ? item.proposalIds.length : 1;
  }
  return counts;
}

/** What `review` selects and how much of it to show. */
export type ReviewRequest = {
  conflictId?: string;
  all: boolean;
  offset: number;
  limit: number;
};

/** The rendered review and its machine-readable summary. */
export type ReviewReport = {
  text: string;
  counts: ReviewCounts;
  total: number;
  first: number;
  last: number;
  remaining: number;
  records: {
    category: ReviewCategory;
    conflict_id: string;
    type: string;
    label: string;
    key: string;
    proposal_ids: string[];
  }[];
};

/** Validates review paging flags (the reference's bounds: offset >= 0, 1 <= limit <= 100). */
export function checkReviewPaging(offset: number, limit: number): void {
  if (!Number.isInteger(offset) || offset < 0) {
    throw new BimriError("invalid-input", "review offset must be zero or greater.");
  }
  if (!Number.isInteger(limit) || limit < 1) {
    throw new BimriError("invalid-input", "review limit must be at least one.");
  }
  if (limit > 100) throw new BimriError("invalid-input", "review limit cannot exceed 100.");
}

/** Builds the review page: header counts, the stated range, and each selected block. */
export function reviewReport(store: Store, request: ReviewRequest): ReviewReport {
  checkReviewPaging(request.offset, request.limit);
  const items = classifyReviews(store);
  const counts = reviewCounts(items);
  let selected: ReviewItem[];
  if (request.conflictId !== undefined) {
    selected = items.filter((i) => i.conflict.conflict_id === request.conflictId);
    if (selected.length === 0) {
      throw new BimriError(
        "unknown-record",
        `${request.conflictId} has no open or historical satisfied review.`,
      );
    }
  } else if (request.all) {
    selected = items;
  } else {
    selected = items.filter((i) => i.category === "concurrent");
  }
  const total = selected.length;
  const page = selected.slice(request.offset, request.offset + request.limit);
  const first = page.length > 0 ? request.offset + 1 : 0;
  const last = page.length > 0 ? request.offset + page.length : 0;
  const remaining = Math.max(0, total - (request.offset + page.length));
  const lines = [
    "BIMRI REVIEW",
    `Actionable concurrent conflicts: ${counts.concurrent}`,
    `Legacy review records: ${counts.legacy}`,
    `Recovery reviews: ${counts.recovery}`,
    `Satisfied historical candidates: ${counts.satisfied}`,
    `Review records: total ${total} | displayed ${first}-${last} | remaining ${remaining}`,
  ];
  const records: ReviewReport["records"] = [];
  for (const item of page) {
    lines.push(
      "",
      CATEGORY_HEADINGS[item.category],
      renderConflictBlock(store, item.conflict, item.proposalIds, item.satisfied),
    );
    if (item.category !== "satisfied") {
      lines.push(...resolveCommandLines(item.conflict.conflict_id, item.proposalIds));
    }
    records.push({
      category: item.category,
      conflict_id: item.conflict.conflict_id,
      type: item.conflict.type,
      label: conflictLabel(
        item.conflict.type,
        item.proposalIds.map((id) => readCandidate(store, id).operation),
      ),
      key: item.conflict.key,
      proposal_ids: item.proposalIds,
    });
  }
  return { text: lines.join("\n") + "\n", counts, total, first, last, remaining, records };
}
