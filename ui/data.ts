/**
 * The console's read model: what each page shows, read through the engine's
 * own functions under the shared engine lock (the lock `review`, `recall`
 * and `doctor --read-only` take), never by parsing files the engine does not
 * parse. Writes never happen here: answers go through the `resolve` verb.
 */
import { withReadOnlyStore } from "../engine/retrieval/read_store.ts";
import type { Store } from "../engine/store/store.ts";
import { type StatusReport, statusReport } from "../engine/memory/status.ts";
import { orphanCandidates } from "../engine/memory/runs.ts";
import { scanRunLog } from "../engine/memory/run_log.ts";
import { folderPrint, listNames, lstatOrNull } from "../engine/store/files.ts";
import {
  type CandidateProposal,
  type ConflictRecord,
  listConflictIds,
  readCandidate,
  readConflict,
  readDecision,
  readResolution,
} from "../engine/records/conflict.ts";
import { classifyReviews, type ReviewCategory } from "../engine/memory/review.ts";
import { conflictLabel } from "../engine/memory/review_render.ts";
import { type LiveEntry, liveEntry } from "../engine/records/live_entry.ts";
import { currentRecords, heldRecords } from "../engine/retrieval/records.ts";
import type { RetrievalRecord } from "../engine/retrieval/lookup.ts";
import { readAllArchiveRecords } from "../engine/store/archive_month.ts";
import { recall } from "../engine/retrieval/recall.ts";
import { HOLD_MESSAGES } from "../engine/memory/decision_record.ts";
import { readProposal } from "../engine/records/proposal.ts";
import { readTextOrNull } from "../engine/store/files.ts";
import { isShared, loadShare } from "../engine/share/state.ts";
import { scanShare } from "../engine/share/scan.ts";
import { holdUntrusted, pendingTrustQuestions, type TrustQuestion } from "../engine/share/trust.ts";
import type { JsonObject } from "../engine/model/json.ts";
import { type MemoryEntry, parseAnyEntry } from "../engine/model/hot.ts";
import { RUN_ID } from "../engine/model/ids.ts";

/** The engine facts of one run, from its log's first line (immutable once written). */
export type RunHeader = { run: string; startedAt: string; actor: string; base: string };

const HEADER = /^# Run (R[0-9]{6}) \| (\S+) \| actor:(\S*) \| base:(V[0-9]{6})/;

// Run-log headers never change once written: one read per run per process.
const headers = new Map<string, RunHeader | null>();

/** The header of run `run`'s log, or null when the log is missing or unreadable. */
export function runHeader(store: Store, run: string): RunHeader | null {
  if (headers.has(run)) return headers.get(run)!;
  const text = readHead(store.paths.log(run));
  const m = text === null ? null : HEADER.exec(text);
  const header = m ? { run: m[1], startedAt: m[2], actor: m[3], base: m[4] } : null;
  if (header) headers.set(run, header);
  return header;
}

function readHead(path: string): string | null {
  try {
    const file = Deno.openSync(path, { read: true });
    try {
      const buffer = new Uint8Array(512);
      const n = file.readSync(buffer) ?? 0;
      return new TextDecoder().decode(buffer.subarray(0, n)).split("\n")[0];
    } finally {
      file.close();
    }
  } catch {
    return null;
  }
}

/** The run that wrote a memory entry (`R000002-E001` -> `R000002`), when it names one. */
export function entryRun(entry: MemoryEntry): string | null {
  if (entry.tier === 2) return entry.last_run;
  const m = /^(R[0-9]{6})-E[0-9]+$/.exec(entry.id);
  return m ? m[1] : null;
}

/** Runs on one Overview line: what changed, by which run and actor, when. */
export type Activity = {
  run: string;
  actor: string;
  startedAt: string;
  closed: boolean;
  outcome: string | null;
  proposals: { id: string; operation: string; key: string }[];
};

/** Everything the Overview shows. */
export type Overview = {
  status: StatusReport;
  activity: Activity[];
  share: {
    replica: string;
    exported: number;
    /** This clone's changes since its last export (written by the next one: a commit with the hooks, `share status`). */
    unexported: number;
    /** Other replicas: records imported, records waiting for `share pull`, and whether one is missing. */
    peers: { replica: string; seen: number; waiting: number; gap: boolean }[];
    waiting: number;
    /** Refused shared records (doctor names them). */
    problems: number;
    /** Effects a pull decided and has not finished committing. */
    finishing: number;
    /** Replicas whose records wait for the owner's trust (the review inbox lists them). */
    trust: number;
  } | null;
};

/** How many recent runs the Overview lists. */
const ACTIVITY_RUNS = 8;

// Outcomes of closed runs, by log name: a closed run's log does not change.
const closedOutcomes = new Map<string, string | null>();

// The last count, valid while the log folder and the set of active runs stay
// the same (a run's outcome is written when it closes, which ends its activity).
let lastCounts: { key: string; outcomes: Record<string, number> } | null = null;

/** Outcome counts over run logs (each log by its first `[OUTCOME:…]` line), closed logs read once. */
function outcomeCounts(store: Store): Record<string, number> {
  const key = `${folderPrint(store.paths, "log")}|${
    Object.keys(store.state.active_runs).sort().join(",")
  }`;
  if (lastCounts !== null && lastCounts.key === key) return { ...lastCounts.outcomes };
  const outcomes: Record<string, number> = {};
  for (const name of listNames(store.paths.folder("log"))) {
    const m = /^(R[0-9]{6})\.md$/.exec(name);
    if (!m) continue;
    let outcome = closedOutcomes.get(name);
    if (outcome === undefined) {
      const text = readTextOrNull(store.paths.log(m[1]));
      if (text === null) continue;
      const facts = scanRunLog(m[1], text);
      outcome = facts.outcome;
      if (!Object.hasOwn(store.state.active_runs, m[1])) closedOutcomes.set(name, outcome);
    }
    if (outcome) outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  lastCounts = { key, outcomes: { ...outcomes } };
  return outcomes;
}

/**
 * Reads the Overview: status's figures from the engine's own parts (the
 * full authority check, which reads every record, is the Health page's).
 */
export function readOverview(root: string): Overview {
  return withReadOnlyStore(root, (store) => {
    const { state } = store;
    const status = statusReport(store, false, outcomeCounts);
    const activity: Activity[] = [];
    for (let n = state.run_count; n >= 1 && activity.length < ACTIVITY_RUNS; n--) {
      const run = `R${String(n).padStart(6, "0")}`;
      const log = readRunTimeline(store, run);
      if (log !== null) activity.push(log.activity);
    }
    return { status, activity, share: readShare(store) };
  });
}

function readShare(store: Store): Overview["share"] {
  if (!isShared(store.paths)) return null;
  try {
    const ctx = loadShare(store.paths, false);
    if (ctx === null) return null;
    const state = ctx.state;
    // File names only: nothing is parsed or imported.
    const scan = scanShare(ctx, { countOnly: true });
    const peers = scan.replicas.filter((r) => !r.own).map((r) => {
      const seen = Number(state.vector[r.replica] ?? 0);
      // Every record file past the cursor waits (share status counts the same).
      const waiting = scan.waiting.get(r.replica) ?? 0;
      // A record before some of them is missing (share status names the gap).
      const gap = scan.gaps.some((g) => g.replica === r.replica);
      return { replica: r.replica, seen, waiting, gap };
    });
    return {
      replica: state.replica,
      exported: state.nextSeq - 1,
      unexported: state.headSeen < 0 ? 0 : Math.max(0, store.head.revision - state.headSeen),
      peers,
      waiting: peers.reduce((n, p) => n + p.waiting, 0),
      problems: scan.problems.length,
      finishing: state.importing.length,
      trust: holdUntrusted(ctx, scan.pending, scan.waiting).length,
    };
  } catch {
    return null;
  }
}

/** One line of a run log, classified for the timeline. */
export type LogLine =
  | { kind: "journal"; id: string; importance: string; text: string }
  | { kind: "propose"; id: string; operation: string; key: string; text: string; outcome: string }
  | { kind: "outcome"; outcome: string; text: string }
  | { kind: "closed"; at: string }
  | { kind: "other"; text: string };

/** A run's log as a timeline. */
export type RunTimeline = { header: RunHeader | null; lines: LogLine[]; activity: Activity };

const JOURNAL = /^\[ID:(R[0-9]{6}-E[0-9]{3})\] \[I:([1-5])\] ?(.*)$/;
const PROPOSE =
  /^\[PROPOSE:(R[0-9]{6}-Q[0-9]{3})\] \[([a-z]+)\] \[K:([^\]]*)\] \[BASE:[^\]]*\] ?(.*)$/;
const OUTCOME = /^\[OUTCOME:(success|partial|overflow|fail)\] ?(.*)$/;
const CLOSED = /^\[CLOSED:R[0-9]{6} ([^\]]*)\]/;

/** Reads run `run`'s log as a timeline, or null when there is no log. */
export function readRunTimeline(store: Store, run: string): RunTimeline | null {
  if (!RUN_ID.test(run)) return null;
  const text = readTextOrNull(store.paths.log(run));
  if (text === null) return null;
  const header = runHeader(store, run);
  const lines: LogLine[] = [];
  let outcome: string | null = null;
  let closed = false;
  const proposals: Activity["proposals"] = [];
  let body = false;
  for (const line of text.split("\n")) {
    if (!body) {
      // The fixed header ends with the `## Outcome` heading.
      if (line === "## Outcome") body = true;
      continue;
    }
    if (line === "") continue;
    let m = JOURNAL.exec(line);
    if (m) {
      lines.push({ kind: "journal", id: m[1], importance: m[2], text: m[3] });
      continue;
    }
    m = PROPOSE.exec(line);
    if (m) {
      const decision = readDecision(store, m[1]);
      const verdict = decision && typeof decision.outcome === "string"
        ? decision.outcome
        : "staged";
      lines.push({
        kind: "propose",
        id: m[1],
        operation: m[2],
        key: m[3],
        text: m[4],
        outcome: verdict,
      });
      proposals.push({ id: m[1], operation: m[2], key: m[3] });
      continue;
    }
    m = OUTCOME.exec(line);
    if (m) {
      outcome ??= m[1];
      lines.push({ kind: "outcome", outcome: m[1], text: m[2] });
      continue;
    }
    m = CLOSED.exec(line);
    if (m) {
      closed = true;
      lines.push({ kind: "closed", at: m[1] });
      continue;
    }
    lines.push({ kind: "other", text: line });
  }
  const active = Object.hasOwn(store.state.active_runs, run);
  return {
    header,
    lines,
    activity: {
      run,
      actor: header?.actor ?? store.state.active_runs[run]?.actor ?? "",
      startedAt: header?.startedAt ?? "",
      closed: closed || !active,
      outcome,
      proposals,
    },
  };
}

/** One page of the runs list, newest first. */
export type RunsPage = { total: number; runs: Activity[]; active: Set<string>; orphans: string[] };

/** Reads runs `offset`..`offset+limit` counted from the newest. */
export function readRuns(root: string, offset: number, limit: number): RunsPage {
  return withReadOnlyStore(root, (store) => {
    const total = store.state.run_count;
    const runs: Activity[] = [];
    for (let n = total - offset; n >= 1 && runs.length < limit; n--) {
      const run = `R${String(n).padStart(6, "0")}`;
      const log = readRunTimeline(store, run);
      if (log !== null) runs.push(log.activity);
    }
    return {
      total,
      runs,
      active: new Set(Object.keys(store.state.active_runs)),
      orphans: orphanCandidates(store.state),
    };
  });
}

/** Reads one run's timeline (null when it has no log). */
export function readRun(root: string, run: string): RunTimeline | null {
  return withReadOnlyStore(root, (store) => readRunTimeline(store, run));
}

/** One row of the Memory page. */
export type MemoryRow = RetrievalRecord & {
  tier: number;
  status: string;
  actor: string;
  run: string | null;
};

/** The filters of the Memory page (empty string: any). */
export type MemoryFilter = {
  tier: string;
  status: string;
  source: string;
  trust: string;
  actor: string;
  location: string;
};

/** Current memory (hot, then cold-current) and held candidates, filtered. */
export function readMemory(
  root: string,
  filter: MemoryFilter,
): { rows: MemoryRow[]; actors: string[] } {
  return withReadOnlyStore(root, (store) => {
    const { records, currentByKey } = currentRecords(store);
    const all = [...records, ...heldRecords(store, currentByKey)];
    const actors = new Set<string>();
    const rows: MemoryRow[] = [];
    for (const record of all) {
      const row = memoryRow(store, record);
      if (row.actor !== "") actors.add(row.actor);
      if (passes(row, filter)) rows.push(row);
    }
    return { rows, actors: [...actors].sort() };
  });
}

/** A retrieval record with its tier, status, run and actor. */
export function memoryRow(store: Store, record: RetrievalRecord): MemoryRow {
  const tier = typeof record.typed.tier === "number" ? record.typed.tier : 0;
  const status = typeof record.typed.status === "string" ? record.typed.status : "";
  let run: string | null = null;
  if (record.location === "HELD") run = record.id.slice(0, 7);
  else if (typeof record.typed.last_run === "string") run = record.typed.last_run;
  else {
    const m = /^(R[0-9]{6})-E[0-9]+$/.exec(record.id);
    run = m ? m[1] : null;
  }
  const actor = run === null ? "" : runHeader(store, run)?.actor ?? "";
  return { ...record, tier, status, run, actor };
}

/** One generation of a key in its timeline. */
export type Generation = {
  raw: string;
  text: string;
  /** How this generation left current memory (replaced, closed, cooled), or "current". */
  reason: string;
  /** The proposal that displaced it, and when it was archived. */
  by: ProposalFacts | null;
  archivedOn: string;
};

/** What the timeline says about a proposal. */
export type ProposalFacts = {
  id: string;
  run: string;
  actor: string;
  createdAt: string;
  operation: string;
  revision: number | null;
  outcome: string;
};

/** Everything a key's page shows. */
export type KeyPage = {
  key: string;
  current: (LiveEntry & { row: MemoryRow }) | null;
  generations: Generation[];
  held: MemoryRow[];
  conflicts: ConflictSummary[];
};

/** A conflict of a key and its answer. */
export type ConflictSummary = {
  id: string;
  label: string;
  createdAt: string;
  candidates: string[];
  answer: JsonObject | null;
};

function proposalFacts(store: Store, id: string): ProposalFacts | null {
  const loaded = readProposal(store.paths, id);
  if (loaded === null) return null;
  const p = loaded.proposal;
  const decision = readDecision(store, id);
  const revision = decision && typeof decision.revision === "number" ? decision.revision : null;
  return {
    id,
    run: p.run_id,
    actor: p.actor,
    createdAt: p.created_at,
    operation: p.operation,
    revision,
    outcome: decision && typeof decision.outcome === "string" ? decision.outcome : "staged",
  };
}

/** Reads key `key`'s page. */
export function readKey(root: string, key: string): KeyPage {
  return withReadOnlyStore(root, (store) => {
    const live = liveEntry(store, key);
    const { currentByKey } = currentRecords(store);
    let current: KeyPage["current"] = null;
    if (live) {
      const record = currentRecords(store).records.find((r) => r.key === key);
      if (record) current = { ...live, row: memoryRow(store, record) };
    }
    // Every memory line names its key as `[K:<key>]`; other rows are not parsed.
    const marker = `[K:${key}]`;
    const generations: Generation[] = [];
    const facts = new Map<string, ProposalFacts | null>();
    for (const row of readAllArchiveRecords(store.paths)) {
      if (!row.rawLine.includes(marker)) continue;
      const entry = parseAnyEntry(row.rawLine);
      if (!entry || entry.key !== key) continue;
      if (!facts.has(row.proposalId)) {
        facts.set(row.proposalId, proposalFacts(store, row.proposalId));
      }
      generations.push({
        raw: row.rawLine,
        text: entry.text,
        reason: row.reason,
        by: facts.get(row.proposalId) ?? null,
        archivedOn: row.date,
      });
    }
    if (live) {
      generations.push({
        raw: live.raw,
        text: live.entry.text,
        reason: "current",
        by: null,
        archivedOn: "",
      });
    }
    const held = heldRecords(store, currentByKey, key).map((r) => memoryRow(store, r));
    const conflicts: ConflictSummary[] = [];
    for (const id of listConflictIds(store)) {
      const conflict = readConflict(store, id);
      if (!conflict || conflict.key !== key) continue;
      conflicts.push(conflictSummary(store, conflict));
    }
    return { key, current, generations, held, conflicts };
  });
}

function conflictSummary(store: Store, conflict: ConflictRecord): ConflictSummary {
  const operations = conflict.proposal_ids.map((id) => readCandidate(store, id).operation);
  return {
    id: conflict.conflict_id,
    label: conflictLabel(conflict.type, operations),
    createdAt: conflict.created_at,
    candidates: conflict.proposal_ids,
    answer: readResolution(store, conflict.conflict_id),
  };
}

/** One open question of the inbox. */
export type Question = {
  category: ReviewCategory;
  conflict: ConflictRecord;
  label: string;
  live: LiveEntry | null;
  candidates: (CandidateProposal & { outcome: string })[];
  /** The run and actor that wrote the live value, when its line names a run. */
  liveBy: { run: string; actor: string } | null;
  /** Fingerprint of what the owner saw: an answer to a changed question is refused. */
  seen: string;
  /** A recovery review's preserved edit, against the accepted view (null for other questions). */
  evidence: Evidence | null;
};

/** A direct edit of bimri.md that the engine preserved, line by line against accepted memory. */
export type Evidence = {
  file: string;
  /** Lines only the edit has, and lines only accepted memory has (each list at most EVIDENCE_LINES). */
  onlyEdit: string[];
  onlyAccepted: string[];
  /** The file could not be read (missing, linked or too large). */
  unreadable: boolean;
};

/** Lines of each side of a preserved edit listed on the page. */
const EVIDENCE_LINES = 50;

const RECOVERY_FILE = /^\.bimri\/recovery\/[A-Za-z0-9._-]+\.md$/;

function evidenceOf(store: Store, conflict: ConflictRecord): Evidence | null {
  if (conflict.type !== "manual-edit") return null;
  const file = conflict.extra.recovery_file;
  if (typeof file !== "string" || !RECOVERY_FILE.test(file)) return null;
  const path = `${store.paths.root}/${file}`;
  const info = lstatOrNull(path);
  const text = info && info.isFile && !info.isSymlink && info.size <= 1_048_576
    ? readTextOrNull(path)
    : null;
  if (text === null) return { file, onlyEdit: [], onlyAccepted: [], unreadable: true };
  const edit = text.split("\n");
  const accepted = store.head.text.split("\n");
  const inEdit = new Set(edit);
  const inAccepted = new Set(accepted);
  return {
    file,
    onlyEdit: edit.filter((line) => line.trim() !== "" && !inAccepted.has(line)).slice(
      0,
      EVIDENCE_LINES,
    ),
    onlyAccepted: accepted.filter((line) => line.trim() !== "" && !inEdit.has(line)).slice(
      0,
      EVIDENCE_LINES,
    ),
    unreadable: false,
  };
}

/** A held candidate waiting for the owner (no conflict: answered by a direct owner statement). */
export type HeldQuestion = { row: MemoryRow; message: string };

/**
 * The whole inbox: conflicts and reviews, held candidates, and the replicas
 * whose records wait for the owner's trust (answered in a terminal only).
 */
export type Inbox = { questions: Question[]; held: HeldQuestion[]; trust: TrustQuestion[] };

/** Reads every open question. */
export function readInbox(root: string, onlyConflict?: string): Inbox {
  return withReadOnlyStore(root, (store) => {
    const questions: Question[] = [];
    for (const item of classifyReviews(store)) {
      if (onlyConflict !== undefined && item.conflict.conflict_id !== onlyConflict) continue;
      questions.push(question(store, item.category, item.conflict, item.proposalIds));
    }
    const { currentByKey } = currentRecords(store);
    const held = onlyConflict !== undefined
      ? []
      : heldRecords(store, currentByKey).map((record) => {
        const decision = readDecision(store, record.id);
        const reason = decision && typeof decision.reason === "string" ? decision.reason : "";
        return {
          row: memoryRow(store, record),
          message: HOLD_MESSAGES[reason] ?? "Candidate preserved; current unchanged.",
        };
      });
    return { questions, held, trust: onlyConflict !== undefined ? [] : trustQuestions(store) };
  });
}

/** The trust questions of a shared store (file names and key files only; none when unreadable). */
function trustQuestions(store: Store): TrustQuestion[] {
  try {
    return pendingTrustQuestions(store.paths);
  } catch {
    return []; // the Health page and `share status` say what is wrong
  }
}

function question(
  store: Store,
  category: ReviewCategory,
  conflict: ConflictRecord,
  ids: string[],
): Question {
  const candidates = ids.map((id) => {
    const decision = readDecision(store, id);
    const outcome = decision && typeof decision.outcome === "string" ? decision.outcome : "staged";
    return { ...readCandidate(store, id), outcome };
  });
  const live = liveEntry(store, conflict.key);
  const liveRun = live === null ? null : entryRun(live.entry);
  return {
    category,
    conflict,
    label: conflictLabel(conflict.type, candidates.map((c) => c.operation)),
    live,
    candidates,
    liveBy: liveRun === null
      ? null
      : { run: liveRun, actor: runHeader(store, liveRun)?.actor ?? "" },
    seen: seenStamp(conflict, live),
    evidence: evidenceOf(store, conflict),
  };
}

/**
 * A short fingerprint of a conflict record as the owner saw it (its
 * candidates): an answer to a question that gained or lost a candidate since
 * is refused. A live value that changed meanwhile is the engine's to refuse.
 */
export function seenStamp(conflict: ConflictRecord, _live?: LiveEntry | null): string {
  let h = 2166136261;
  const bytes = conflict.bytes;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i];
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** The recorded answer of conflict `id`, and the fingerprint of its open question (null once answered). */
export function readAnswer(
  root: string,
  id: string,
): { answer: JsonObject | null; seen: string | null; exists: boolean } {
  return withReadOnlyStore(root, (store) => {
    const conflict = readConflict(store, id);
    if (!conflict) return { answer: null, seen: null, exists: false };
    return {
      answer: readResolution(store, id),
      seen: seenStamp(conflict, liveEntry(store, conflict.key)),
      exists: true,
    };
  });
}

/** Most search results the Memory page ranks. */
const SEARCH_LIMIT = 500;

/** Ranked search (recall's own ranking) over current memory, held candidates and history, filtered. */
export async function searchMemory(
  root: string,
  query: string,
  filter: MemoryFilter,
): Promise<{ rows: MemoryRow[]; actors: string[] }> {
  const found = await recall(root, { query, history: true, limit: SEARCH_LIMIT, rank: true });
  return withReadOnlyStore(root, (store) => {
    const actors = new Set<string>();
    const rows: MemoryRow[] = [];
    for (const match of found.matches) {
      const row = memoryRow(store, match);
      if (row.actor !== "") actors.add(row.actor);
      if (!passes(row, filter)) continue;
      rows.push(row);
    }
    return { rows, actors: [...actors].sort() };
  });
}

function passes(row: MemoryRow, filter: MemoryFilter): boolean {
  return (filter.tier === "" || String(row.tier) === filter.tier) &&
    (filter.status === "" || row.status === filter.status) &&
    (filter.source === "" || row.source === filter.source) &&
    (filter.trust === "" || row.trust === filter.trust) &&
    (filter.actor === "" || row.actor === filter.actor) &&
    (filter.location === "" || row.location === filter.location);
}
