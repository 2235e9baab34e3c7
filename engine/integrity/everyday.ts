/**
 * The everyday authority check's own layer (authority.ts, layer 3): the
 * derived summary that vouches for every authority folder since the engine's
 * last healthy write, the active runs' records it still validates, the
 * per-file facts those records yield, and the bookkeeping writers leave for
 * the next check. Kept apart from the full check (collectFacts, the graph
 * rules, settled history, consumed records) so a read (get, recall) and
 * propose load only this; the full check loads when the summary does not vouch.
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../model/json.ts";
import { fingerprint, lstatOrNull, readBytesOrNull, replaceDerived } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { LoadPending, type Store } from "../store/store.ts";
import { BimriError } from "../errors.ts";
import { RUN_ID } from "../model/ids.ts";
import {
  activeKey,
  folderPrints,
  loadSummaryText,
  type Summary,
  SUMMARY_SCHEMA,
  summaryMatches,
  summaryPath,
} from "./summary.ts";
import { decodeUtf8Strict, sha256Hex } from "../model/text.ts";
import {
  type AuthorityKind,
  isStub,
  KIND_FOLDER,
  recordProblems,
  recordRelPath,
  stubProblems,
} from "./schemas.ts";

/** One damaged authority record. */
export type AuthorityIssue = { kind: string; id: string; path: string; problem: string };

/** The facts of one authority file that the graph checks need. */
export type RecordFacts = {
  /** lstat fingerprint the facts were computed for. */
  fp: string;
  /** Why the file is unusable (unsafe, unreadable, invalid), or null. */
  problem: string | null;
  /** True for a quarantine stub (valid or not). */
  stub: boolean;
  /** Proposals only: SHA-256 of the file bytes (conflict candidate hashes). */
  sha?: string;
  /** Proposal: its base revision. */
  baseRevision?: number;
  /** Decision: outcome, revision, conflict and (once an owner answer finalized it) resolution. */
  outcome?: string;
  revision?: number | null;
  conflictId?: string | null;
  resolutionId?: string | null;
  /** Conflict: candidates and their hashes. */
  proposalIds?: string[];
  proposalHashes?: Record<string, string>;
  /** Resolution: status, the revision it was asked at and the one it names once resolved. */
  status?: string;
  revisionBefore?: number | null;
  revisionAfter?: number | null;
};

/**
 * Facts of one run log: proposal markers, closure and (status counts it) the
 * first outcome; `outcome` is absent when the log is not UTF-8.
 */
export type LogFacts = { fp: string; markers: string[]; closed: boolean; outcome?: string | null };

/** The facts cache file: per-record facts keyed by `<kind>/<id>`, and per-log facts by run. */
export type CacheDoc = {
  schema: number;
  records: Record<string, RecordFacts>;
  logs: Record<string, LogFacts>;
};

/** 2: logs carry their outcome; decisions, conflicts and resolutions no hash. */
export const CACHE_SCHEMA = 5;
const CACHE_NAME = "audit-integrity-cache.json";

/** `.bimri/audit-integrity-cache.json`, the per-file facts cache (layer 1). */
export function cachePath(paths: StorePaths): string {
  return paths.folder(CACHE_NAME);
}

/** The type bits of a path, from lstat or a directory entry (never followed). */
type NodeKind = { isFile: boolean; isSymlink: boolean };

/** Reads one authority path and derives its facts (never follows a link). */
export function readFactsOfNode(
  path: string,
  kind: AuthorityKind,
  id: string,
  node: NodeKind,
  fp: string,
  options: CollectOptions = {},
): RecordFacts {
  if (node.isSymlink) {
    return {
      fp,
      problem: "cannot be a symbolic link; BIMRI never follows links in authority paths",
      stub: false,
    };
  }
  if (!node.isFile) return { fp, problem: "is not a regular file", stub: false };
  const bytes = options.read ? options.read(path) : readBytesOrNull(path);
  if (bytes === null) return { fp, problem: "disappeared while being read", stub: false };
  return factsFromBytes(bytes, kind, id, fp, options);
}

/**
 * The problem a valid quarantine stub reports. Restore tells a recognized stub
 * (which may stay while a restore is staged) from damage by this exact value.
 */
export const QUARANTINED_PROBLEM =
  "is quarantined; restore a validated replacement with restore-authority";

/** Facts of a record's bytes as if they stood at the record path of `kind`/`id`. */
export function factsFromBytes(
  bytes: Uint8Array,
  kind: AuthorityKind,
  id: string,
  fp = "",
  options: CollectOptions = {},
): RecordFacts {
  // Only conflict candidates' (proposals') hashes are ever compared; a full
  // scan hashes just those afterwards.
  const sha = options.lazySha || kind !== "proposal"
    ? undefined
    : options.hash
    ? options.hash(bytes)
    : sha256Hex(bytes);
  const text = options.decode ? options.decode(bytes) : decodeUtf8Strict(bytes);
  let value: JsonValue;
  try {
    if (text === null) throw new Error("not UTF-8");
    value = JSON.parse(text) as JsonValue;
  } catch {
    // The reference's words for an unreadable record, which scripts look for.
    return {
      fp,
      problem: "is unreadable; BIMRI stopped without resetting it: it is not valid JSON",
      stub: false,
      sha,
    };
  }
  if (!isJsonObject(value)) return { fp, problem: "is not a JSON object", stub: false, sha };
  options.onValue?.(kind, id, value);
  if (isStub(value)) {
    const problems = stubProblems(value, kind, id);
    return {
      fp,
      problem: problems.length > 0
        ? `is an invalid quarantine stub (${problems[0]})`
        : QUARANTINED_PROBLEM,
      stub: true,
      sha,
    };
  }
  const problems = recordProblems(kind, value, id);
  const facts: RecordFacts = {
    fp,
    problem: problems.length > 0 ? `${kind} record is invalid: ${problems.join("; ")}` : null,
    stub: false,
    sha,
  };
  return { ...facts, ...summarize(kind, value) };
}

/** A folder entry's name and type (from a directory listing; never followed). */
export type FolderEntry = { name: string; isFile: boolean; isSymlink: boolean };

/** Options of `collectFacts` for a full audit that shares its work. */
export type CollectOptions = {
  /** Entries of a store folder (one listing per audit; types without lstat). */
  entries?: (folder: string) => Iterable<FolderEntry>;
  /** Reads a file's bytes (the audit reuses one buffer; the result is used at once). */
  read?: (path: string) => Uint8Array | null;
  /** SHA-256 hex of bytes (the audit passes a native digest). */
  hash?: (bytes: Uint8Array) => string;
  /** Strict UTF-8 decoding, null when invalid (the audit passes a faster one). */
  decode?: (bytes: Uint8Array) => string | null;
  /** Skip hashing every record; collectFacts hashes conflict candidates at the end. */
  lazySha?: boolean;
  /** Receives each record's parsed JSON object, before any validation. */
  onValue?: (kind: AuthorityKind, id: string, value: JsonObject) => void;
  /**
   * With a cache: fingerprint closed logs too (instead of trusting their
   * cached facts) and report every log's outcome, so the answers equal a
   * full read (status and review).
   */
  strictLogs?: boolean;
  /**
   * Receives each folder's listing as the check read it (names, and for
   * revisions which are not regular files), to record settled history.
   */
  onListed?: (folder: string, names: string[], nonRegular?: string[]) => void;
};

function summarize(kind: AuthorityKind, value: JsonObject): Partial<RecordFacts> {
  switch (kind) {
    case "proposal":
      return { baseRevision: typeof value.base_revision === "number" ? value.base_revision : 0 };
    case "decision":
      return {
        outcome: String(value.outcome),
        revision: typeof value.revision === "number" ? value.revision : null,
        conflictId: typeof value.conflict_id === "string" ? value.conflict_id : null,
        resolutionId: typeof value.resolution_id === "string" ? value.resolution_id : null,
      };
    case "conflict":
      return {
        proposalIds: Array.isArray(value.proposal_ids) ? value.proposal_ids as string[] : [],
        proposalHashes: isJsonObject(value.proposal_hashes)
          ? value.proposal_hashes as Record<string, string>
          : {},
      };
    case "resolution":
      return {
        status: String(value.status),
        proposalIds: Array.isArray(value.proposal_ids) ? value.proposal_ids as string[] : [],
        revisionBefore: typeof value.revision_before === "number" ? value.revision_before : null,
        revisionAfter: typeof value.revision_after === "number" ? value.revision_after : null,
      };
  }
}

/**
 * The `[PROPOSE:]` markers and closure of a run log, exactly as scanRunLog
 * finds them, but only lines that start with one of those markers are
 * examined (the audit scans every log of the store).
 */
export function scanLogMarkers(
  run: string,
  text: string,
): { proposalMarkers: string[]; closed: boolean; outcome: string | null } {
  const proposalMarkers: string[] = [];
  let closed = false;
  let outcome: string | null = null;
  const closedPrefix = `[CLOSED:${run}`;
  for (let start = 0; start <= text.length;) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl;
    if (text.startsWith("[PROPOSE:", start)) {
      const marker = PROPOSE_MARKER.exec(text.slice(start, end));
      if (marker) proposalMarkers.push(marker[1]);
    } else if (text.startsWith(closedPrefix, start) && start + closedPrefix.length < end) {
      // scanRunLog's `^\[CLOSED:<run>(\s|\])`.
      const next = text[start + closedPrefix.length];
      if (next === "]" || /\s/.test(next)) closed = true;
    } else if (outcome === null && text.startsWith("[OUTCOME:", start)) {
      outcome = OUTCOME_LINE.exec(text.slice(start, end))?.[1] ?? null;
    }
    if (nl < 0) break;
    start = nl + 1;
  }
  return { proposalMarkers, closed, outcome };
}

/** scanRunLog's proposal marker. */
const PROPOSE_MARKER = /^\[PROPOSE:(R[0-9]{6}-Q[0-9]{3})\](\s|$)/;

/** A close outcome line, as status counts them (the first one per log). */
const OUTCOME_LINE = /^\[OUTCOME:(success|partial|overflow|fail)\]/;

/** A run log naming another run's proposal. */
export function foreignMarkerIssue(run: string, id: string): AuthorityIssue {
  return issue(
    "proposal",
    id,
    `is referenced by the log of ${run}, which may only name its own proposals`,
  );
}

/** One issue about record `kind`/`id`. */
export function issue(kind: AuthorityKind, id: string, problem: string): AuthorityIssue {
  return { kind, id, path: recordRelPath(kind, id), problem };
}

// The two deletion-anchor findings use the reference's wording, which scripts look for.

/** A proposal its run's log names, whose record is gone. */
export function missingLoggedProposal(id: string, run: string): AuthorityIssue {
  return issue(
    "proposal",
    id,
    `proposal ${id} is missing despite its durable reference in the log of ${run}`,
  );
}

/** Start of the problem of a required decision that is missing (quarantine anchors on it). */
export function missingDecisionPrefix(id: string): string {
  return `decision ${id} is missing after its proposal was durably processed`;
}

/** A decision the graph requires (its run synced past the proposal or closed), whose record is gone. */
export function missingDecision(id: string, why: string, conflict?: string): AuthorityIssue {
  const candidate = conflict
    ? `; conflict ${conflict} candidate ${id} has no safe decision record`
    : "";
  return issue("decision", id, `${missingDecisionPrefix(id)} (${why})${candidate}`);
}

type HealthBasis = {
  /** A dirty facts cache to persist on success (slow path), else null. */
  cache: CacheDoc | null;
  /** Held decision IDs when the operation began. */
  held: Set<string>;
  /** Applying resolution IDs when the operation began, less those it finished. */
  applying: Set<string>;
};

/** Per loaded store (one per `withStore`): proven healthy, with what the refresh needs. */
export const verified = new WeakMap<Store, HealthBasis>();
/** Held decisions this operation wrote (commit's loop reports them). */
const heldWritten = new WeakMap<Store, Set<string>>();

/** What a matching summary proves: held decisions and applying resolutions as it lists them. */
export function basisFromSummary(summary: Summary): HealthBasis {
  return { cache: null, held: new Set(summary.held), applying: new Set(summary.applying) };
}

/**
 * The conflict IDs whose resolution was `applying` when this operation proved
 * the store healthy (less those it has finished since), or null when it has
 * not proved it: then the caller must read every resolution.
 */
export function knownApplyingResolutions(store: Store): string[] | null {
  const proven = verified.get(store);
  return proven ? [...proven.applying].sort() : null;
}

/** Resolve reports each resolution it writes `applying`, so the list stays exact. */
export function noteResolutionApplying(store: Store, id: string): void {
  verified.get(store)?.applying.add(id);
}

/** Each resolution written `resolved` or `failed` is reported, so the list stays exact. */
export function noteResolutionSettled(store: Store, id: string): void {
  verified.get(store)?.applying.delete(id);
}

/** Commit's loop reports each held decision it writes, so the summary's list stays exact. */
export function noteHeldDecision(store: Store, id: string): void {
  let set = heldWritten.get(store);
  if (!set) heldWritten.set(store, set = new Set());
  set.add(id);
}

/**
 * Validates what an everyday operation reads itself: every active run's log,
 * the proposals its markers name and their decisions (the same facts and
 * graph rules as the full check, restricted to those records).
 */
export function activeRunIssues(store: Store): AuthorityIssue[] {
  const out: AuthorityIssue[] = [];
  for (const [run, active] of Object.entries(store.state.active_runs)) {
    if (!RUN_ID.test(run)) continue;
    const bytes = readBytesOrNull(store.paths.log(run));
    const text = bytes === null ? "" : (decodeUtf8Strict(bytes) ?? "");
    const log = scanLogMarkers(run, text);
    for (const id of log.proposalMarkers) {
      if (!id.startsWith(`${run}-Q`)) {
        out.push(foreignMarkerIssue(run, id));
        continue;
      }
      const p = factsAt(store.paths, "proposal", id);
      if (!p) {
        out.push(
          missingLoggedProposal(id, run),
        );
        continue;
      }
      if (p.problem) out.push(issue("proposal", id, p.problem));
      const d = factsAt(store.paths, "decision", id);
      if (d?.problem) out.push(issue("decision", id, d.problem));
      const decided = log.closed ||
        (!p.problem && !p.stub && active.base_revision > (p.baseRevision ?? 0));
      if (decided && !d) {
        out.push(
          missingDecision(id, "its run synced or closed"),
        );
      }
    }
  }
  return out;
}

function factsAt(paths: StorePaths, kind: AuthorityKind, id: string): RecordFacts | null {
  const path = recordPathOf(paths, kind, id);
  const info = lstatOrNull(path);
  // The graph rules here never compare a proposal's hash, so it is not computed.
  return info ? readFactsOfNode(path, kind, id, info, fingerprint(info), { lazySha: true }) : null;
}

/** Where record `kind`/`id` lives. */
export function recordPathOf(paths: StorePaths, kind: AuthorityKind, id: string): string {
  return `${paths.folder(KIND_FOLDER[kind])}/${id}.json`;
}

/** Saves the facts cache (derived: a failure only costs re-reading next time). */
export function writeFactsCache(paths: StorePaths, cache: CacheDoc): void {
  try {
    // A private derived cache, not a store record: plain JSON keeps it cheap.
    replaceDerived(cachePath(paths), JSON.stringify(cache));
  } catch {
    // A cache that cannot be written only costs re-reading next time.
  }
}

/**
 * Call when the engine baseline is needed by an operation that does not check
 * health itself (propose): proves the summary current before the first write,
 * so `refreshAuthoritySummary` may record the operation's own changes.
 */
export function noteAuthorityBaseline(store: Store): void {
  if (verified.has(store)) return;
  const matched = summaryMatches(store, null);
  if (matched && activeRunIssues(store).length === 0) {
    verified.set(store, basisFromSummary(matched));
  }
}

/**
 * Records the folder fingerprints after the engine's own successful write, if
 * this operation proved the store healthy before writing (a health check or
 * `noteAuthorityBaseline`); otherwise does nothing and the next check takes
 * the slow path. Call last, under the engine lock.
 */
export function refreshAuthoritySummary(store: Store): void {
  const proven = verified.get(store);
  if (!proven) return;
  if (proven.cache) writeFactsCache(store.paths, proven.cache);
  proven.cache = null;
  const prints = folderPrints(store.paths);
  if (!prints) return;
  const summary: Summary = {
    schema: SUMMARY_SCHEMA,
    folders: prints,
    run_count: store.state.run_count,
    conflict_count: store.state.conflict_count,
    active: activeKey(store.state),
    held: [...new Set([...proven.held, ...(heldWritten.get(store) ?? [])])].sort(),
    applying: [...proven.applying].sort(),
  };
  const text = JSON.stringify(summary);
  if (loadSummaryText(store.paths) === text) {
    return;
  }
  try {
    // Written after the operation's durable records, so a crash can only
    // lose it (the next check takes the slow path), never get ahead of them.
    replaceDerived(summaryPath(store.paths), text);
  } catch {
    // Without a summary the next check takes the slow path.
  }
}

/** Refuses a canonical write for `issues` (not empty), printing `notices` first. */
export function refuseForIssues(
  issues: readonly AuthorityIssue[],
  notices: readonly string[] = [],
): never {
  const first = issueLine(issues[0]);
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  const error = new BimriError(
    "authority-recovery-needed",
    `AUTHORITY RECOVERY NEEDED: ${first}${more} authority recovery is required: shared-memory writes are paused until authority is repaired. Run doctor for the full audit; with the owner's approval use quarantine-authority and restore-authority.`,
  );
  error.notices.push(...notices);
  throw error;
}

/** The full check's refusal (authority.ts `requireHealthyAuthority`), registered as authority.ts loads. */
type FullCheck = (store: Store, options: { everyday: true; notices: readonly string[] }) => void;
let fullCheck: FullCheck | null = null;

/** Called by authority.ts as it loads: from then on the everyday gate runs the full check. */
export function registerFullAuthorityCheck(check: FullCheck): void {
  fullCheck = check;
}

/**
 * Throws `LoadPending` unless the full check (authority.ts) is loaded;
 * `load` imports authority.ts (the caller's import: this module may not
 * import the module that imports it). sync and close call it before a write
 * that the summary cannot vouch for (a direct edit of bimri.md raises a
 * review), so the verb stops before writing and runs again under the full check.
 */
export function requireFullAuthorityCheck(load: () => Promise<void>): void {
  if (fullCheck === null) {
    throw new LoadPending("the full authority check (authority.ts)", load);
  }
}

/**
 * The authority gate of sync and close (authority.ts `requireHealthyAuthority`
 * with `everyday`), before their first write of authority. When the summary
 * vouches for the store and the active runs' records are sound (the usual
 * case), that is the whole check and authority.ts stays unloaded; otherwise
 * the verb stops (`LoadPending`; `load` imports authority.ts) and runs again under the full check, which
 * refuses a damaged record exactly as it always has. A process that loaded
 * authority.ts (start, hooks, share) always runs the full check's function.
 */
export function requireEverydayHealth(
  store: Store,
  notices: readonly string[],
  load: () => Promise<void>,
): void {
  if (fullCheck !== null) return fullCheck(store, { everyday: true, notices });
  const matched = summaryMatches(store, null);
  if (matched !== null && activeRunIssues(store).length === 0) {
    verified.set(store, basisFromSummary(matched));
    return;
  }
  requireFullAuthorityCheck(load);
}

/** Text of one issue as the brief and status list it. */
export function issueLine(i: AuthorityIssue): string {
  // A problem worded as a whole sentence about the record names it itself.
  if (i.problem.startsWith(`${i.kind} ${i.id} `)) {
    return `${i.problem.replace(/[.!?]$/, "")} (${i.path}).`;
  }
  const problem = /[.!?]$/.test(i.problem) ? i.problem : `${i.problem}.`;
  // A missing record reads as one sentence about it, as the reference words it.
  if (i.problem.startsWith("is missing")) {
    return `${i.kind} ${i.id} ${problem} Expected at ${i.path}.`;
  }
  return `${i.kind} ${i.id} (${i.path}): ${problem}`;
}

/**
 * True when the summary vouches for every authority folder and the active
 * runs' records are sound: the whole everyday check of a read, which takes
 * the full check (authority.ts `cachedAuthorityIssues`) only when this fails.
 */
export function everydayVouches(store: Store): boolean {
  return summaryMatches(store, null) !== null && activeRunIssues(store).length === 0;
}
