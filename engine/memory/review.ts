/**
 * Pull review of owner questions (protocol section 9): the grouping of
 * conflicts into actionable, legacy, recovery and satisfied records, and
 * offset/limit pagination that always states total, range and remainder.
 */
import { BimriError } from "../errors.ts";
import { PROPOSAL_ID } from "../model/ids.ts";
import { type MemoryEntry, parseAnyEntry, parseView } from "../model/hot.ts";
import { listNames } from "../store/files.ts";
import { readRecord } from "../store/records.ts";
import type { Store } from "../store/store.ts";
import {
  type CandidateProposal,
  candidateSetMatches,
  type ConflictRecord,
  listConflictIds,
  readCandidate,
  readConflict,
  readDecision,
  readResolution,
} from "../records/conflict.ts";
import { liveEntry } from "../records/live_entry.ts";
import {
  conflictLabel,
  renderConflictBlock,
  resolveCommandLines,
  type Satisfaction,
} from "./review_render.ts";

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
