/**
 * Damaged-authority detection and the degraded mode of protocol 9.5.
 *
 * A malformed, unsafe or dangling proposal, decision, conflict or resolution
 * pauses every canonical write (sync, close, resolve, maintain, index), while
 * `start` still opens runs and prints AUTHORITY RECOVERY NEEDED and journaling
 * and proposal staging continue.
 *
 * Why a cache, and why this one. Detecting damage anywhere in the store means
 * looking at every authority record, and reading and parsing every record on
 * each `start`/`sync`/`close` would make the everyday path grow with history.
 * So the health check works on two layers:
 *
 * 1. Per-file facts (intrinsic validity plus the few fields the graph needs:
 *    proposal hash and base, decision outcome and conflict, conflict
 *    candidates, resolution status; run-log proposal markers, closure and
 *    first outcome) are kept in a derived cache,
 *    `.bimri/audit-integrity-cache.json`, keyed by
 *    each file's lstat fingerprint (inode, size, mtime, ctime). A file whose
 *    fingerprint is unchanged is not read again; any other change, including
 *    an out-of-band truncation or a link swapped in, changes the fingerprint
 *    and the file is re-read and re-validated. Entries for vanished files are
 *    dropped. The cache is never authority: it holds no verdict on the store,
 *    only memoized per-file facts, so deleting it (or it being unreadable or
 *    of another schema) just means every file is read once more and the
 *    answers are identical. It lives in the `audit-*` namespace with the other
 *    derived audit caches and is ignored by everything else. `start` and
 *    `hook-start` write it, and sync and close after a successful write (a
 *    refused command must leave the store as it was), and status (under the
 *    engine lock); other commands use it read-only and re-read what changed
 *    since. The everyday check trusts a closed log's cached facts without an
 *    lstat (a closed log is final); status and review do not (`strictFacts`):
 *    they fingerprint every record and log, so their answers equal a full
 *    read (tests/cli/status_cache_test.ts). doctor never uses it: it reads
 *    every file (with one reused buffer, see bulk_read.ts).
 * 2. The graph checks (deletion anchors from run logs and the conflict
 *    counter, candidate hashes, decision/conflict/resolution links, failed
 *    resolutions, quarantine stubs) are recomputed in memory from those facts
 *    on every call; they cost a few map look-ups per record.
 *
 * 3. The everyday fast path (O(1) in history; its code is everyday.ts, which
 *    reads and propose load without this module). A second derived record,
 *    `.bimri/audit-integrity-summary.json`, holds the lstat fingerprints
 *    (inode, size, mtime, ctime) of the five authority folders (proposals,
 *    decisions, conflicts, resolutions, log) and of revisions/ plus run_count, conflict_count,
 *    the active runs with their bases, the IDs of held decisions (which
 *    retrieval lists without reading every decision while the decisions
 *    folder is unchanged; see summary.ts) and of applying resolutions (which
 *    sync and close finish without reading every resolution), written only
 *    when a check found the
 *    store healthy and the engine's own successful write (start, propose,
 *    sync, close) then refreshed it before releasing the lock. A check whose
 *    folder fingerprints and state facts all match trusts that no record was
 *    added, removed, renamed or swapped since, and validates only what the
 *    operation itself reads: every active run's log and the proposals and
 *    decisions its markers name. Any unexplained difference (another
 *    command, a crash, an out-of-band edit, a copied store, a deleted or
 *    unreadable summary) falls back to layer 1+2 above, so the summary only
 *    ever skips work; deleting it gives identical answers. `start` explains its
 *    own new log (run_count + 1, one new active run at the head) before the
 *    comparison.
 *
 * Trade-off of the fast path: an in-place edit (truncation, `echo > file`) of
 * an old record that the operation does not read changes no folder entry, so
 * start/sync/close do not see it; the full per-file checks of doctor, status,
 * review, index, maintain and resolve do (as does any command after an
 * unexplained folder change). Damage that adds, removes, renames or links a
 * record, or touches a record of an active run, is still refused at once.
 * Without the fast path the check costs one listing per folder and one lstat
 * per record (close to a second at 10,000 runs on the 2-core machine); with
 * it, six lstats, one small read and the active runs' own records. Only sync
 * and close ask for it (`everyday`); index, maintain and resolve always check
 * every file.
 * Semantic effect checks (revision bindings of decisions, base snapshots)
 * belong to the full audit in doctor.ts, except for the few records a command
 * consumes without deciding them itself (consumed.ts): the slow path here
 * proves answers whose decisions are not finalized yet.
 */
import { BimriError } from "../errors.ts";
import { isJsonObject, type JsonValue } from "../model/json.ts";
import { listNames, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import type { Store } from "../store/store.ts";
import type { State } from "../model/state.ts";
import { conflictId, revisionName, RUN_ID } from "../model/ids.ts";
import { forgetSummary } from "./summary.ts";
import { fingerprint } from "../store/fingerprint.ts";
import { decodeUtf8Strict, sha256Hex } from "../model/text.ts";
import { unprovenAnswerIssues } from "./consumed.ts";
import { AUTHORITY_KINDS, type AuthorityKind, idGrammar, KIND_FOLDER } from "./schemas.ts";

import {
  activeRunIssues,
  type AuthorityIssue,
  basisFromSummary,
  CACHE_SCHEMA,
  type CacheDoc,
  cachePath,
  type CollectOptions,
  foreignMarkerIssue,
  issue,
  issueLine,
  type LogFacts,
  missingDecision,
  missingLoggedProposal,
  readFactsOfNode,
  type RecordFacts,
  recordPathOf,
  refreshAuthoritySummary,
  scanLogMarkers,
  summaryMatches,
  verified,
  writeFactsCache,
} from "./everyday.ts";
// The everyday layer (everyday.ts) as this module's callers have always imported it.
export {
  factsFromBytes,
  issueLine,
  knownApplyingResolutions,
  missingDecisionPrefix,
  noteAuthorityBaseline,
  noteHeldDecision,
  noteResolutionApplying,
  noteResolutionSettled,
  proveBeforeStart,
  QUARANTINED_PROBLEM,
  refreshAuthoritySummary,
  scanLogMarkers,
  unchangedSinceHealthyWrite,
} from "./everyday.ts";
export type {
  AuthorityIssue,
  CacheDoc,
  CollectOptions,
  FolderEntry,
  LogFacts,
  RecordFacts,
} from "./everyday.ts";

/** The facts cache (layer 1), or an empty one when it is missing, unreadable or of another schema. */
export function loadCache(paths: StorePaths): CacheDoc {
  const empty: CacheDoc = { schema: CACHE_SCHEMA, records: {}, logs: {} };
  const info = lstatOrNull(cachePath(paths));
  if (!info || !info.isFile) return empty;
  try {
    const doc = JSON.parse(Deno.readTextFileSync(cachePath(paths))) as CacheDoc;
    if (doc?.schema !== CACHE_SCHEMA || !isJsonObject(doc.records as unknown as JsonValue)) {
      return empty;
    }
    return { schema: CACHE_SCHEMA, records: doc.records, logs: doc.logs ?? {} };
  } catch {
    return empty;
  }
}

/** Hashes the conflict candidates a lazy (`lazySha`) collection left unhashed. */
export function hashCandidates(
  paths: StorePaths,
  records: AuthorityFacts["records"],
  options: CollectOptions = {},
): void {
  for (const c of records.conflict.values()) {
    for (const id of c.proposalIds ?? []) {
      const p = records.proposal.get(id);
      if (!p || p.sha !== undefined || !idGrammar("proposal").test(id)) continue;
      const path = recordPathOf(paths, "proposal", id);
      const bytes = options.read ? options.read(path) : readBytesOrNull(path);
      if (bytes !== null) p.sha = options.hash ? options.hash(bytes) : sha256Hex(bytes);
    }
  }
}

/** Everything the graph checks need, per kind: ID -> facts. */
export type AuthorityFacts = {
  records: Record<AuthorityKind, Map<string, RecordFacts>>;
  /** Run -> proposal IDs referenced by `[PROPOSE:]` markers, and closure. */
  logs: Map<string, { markers: string[]; closed: boolean }>;
  /**
   * With `strictLogs`: log file name -> its first `[OUTCOME:]` value (or
   * null), for every UTF-8 run log (status counts outcomes from it).
   */
  outcomes?: Map<string, string | null>;
  /**
   * The revision numbers whose files exist, when the check lists them (the
   * cached everyday and status checks; doctor checks revisions itself).
   */
  revisions?: Set<number>;
  /** Runs whose log is a symbolic link or not a regular file (the cached checks list them). */
  unsafeLogs?: string[];
  /** True when the cache given to `collectFacts` was updated. */
  dirty: boolean;
};

/**
 * Collects the facts of every authority record and run log. With `cache`,
 * files whose fingerprint is unchanged are not read again and the cache is
 * updated in place; without it every file is read.
 */
export function collectFacts(
  paths: StorePaths,
  cache: CacheDoc | null,
  activeRuns: ReadonlySet<string> = new Set(),
  options: CollectOptions = {},
): AuthorityFacts {
  // Without a cache no fingerprint is needed: directory entries give the types.
  const direct = cache === null && options.entries !== undefined;
  let dirty = false;
  const records = {
    proposal: new Map(),
    decision: new Map(),
    conflict: new Map(),
    resolution: new Map(),
  } as Record<AuthorityKind, Map<string, RecordFacts>>;
  // Entries for the updated cache, turned into its objects only when something changed.
  const nextRecords: [string, RecordFacts][] = [];
  for (const kind of AUTHORITY_KINDS) {
    const folder = paths.folder(KIND_FOLDER[kind]);
    const grammar = idGrammar(kind);
    if (direct) {
      for (const entry of options.entries!(KIND_FOLDER[kind])) {
        const id = entry.name.endsWith(".json") ? entry.name.slice(0, -5) : "";
        if (!grammar.test(id)) continue;
        records[kind].set(
          id,
          readFactsOfNode(`${folder}/${entry.name}`, kind, id, entry, "", options),
        );
      }
      continue;
    }
    const listed = listNames(folder);
    options.onListed?.(KIND_FOLDER[kind], listed);
    for (const name of listed) {
      if (!name.endsWith(".json")) continue;
      const id = name.slice(0, -5);
      if (!grammar.test(id)) continue;
      const path = `${folder}/${name}`;
      const info = lstatOrNull(path);
      if (!info) continue;
      const cacheKey = `${kind}/${id}`;
      const cached = cache?.records[cacheKey];
      const fp = fingerprint(info);
      const same = cached !== undefined && cached.fp === fp;
      // An active run's proposals and decisions are what sync and close act
      // on next, so they are always read: a print cannot see an edit made in
      // the second it was taken (ctime has whole seconds), the bytes can.
      const live = (kind === "proposal" || kind === "decision") && activeRuns.has(id.slice(0, 7));
      let facts = same && !live ? cached : readFactsOfNode(path, kind, id, info, fp);
      // Unchanged facts keep the cache entry, so the cache is not rewritten for nothing.
      if (same && live && JSON.stringify(facts) === JSON.stringify(cached)) facts = cached;
      if (facts !== cached) dirty = true;
      records[kind].set(id, facts);
      nextRecords.push([cacheKey, facts]);
    }
  }
  const logs = new Map<string, { markers: string[]; closed: boolean }>();
  const nextLogs: [string, LogFacts][] = [];
  const logFolder = paths.folder("log");
  if (direct) {
    for (const entry of options.entries!("log")) {
      const run = entry.name.endsWith(".md") ? entry.name.slice(0, -3) : "";
      if (!RUN_ID.test(run) || !entry.isFile || entry.isSymlink) continue;
      const path = `${logFolder}/${entry.name}`;
      const bytes = options.read ? options.read(path) : readBytesOrNull(path);
      const decode = options.decode ?? decodeUtf8Strict;
      const decoded = bytes === null ? null : decode(bytes);
      const scanned = scanLogMarkers(run, decoded ?? "");
      logs.set(run, { markers: scanned.proposalMarkers, closed: scanned.closed });
    }
    if (options.lazySha) hashCandidates(paths, records, options);
    return { records, logs, dirty: false };
  }
  const outcomes = options.strictLogs ? new Map<string, string | null>() : undefined;
  const unsafeLogs: string[] = [];
  const logNames = listNames(logFolder);
  options.onListed?.("log", logNames);
  for (const name of logNames) {
    const run = name.endsWith(".md") ? name.slice(0, -3) : "";
    if (!RUN_ID.test(run)) continue;
    let facts = cache?.logs[run];
    if (facts?.closed && !activeRuns.has(run) && !options.strictLogs) {
      // A closed log is final (append-only until its [CLOSED:] line): its markers
      // are cached; doctor's full check still re-reads it.
      logs.set(run, { markers: facts.markers, closed: true });
      nextLogs.push([run, facts]);
      continue;
    }
    const path = `${logFolder}/${name}`;
    const info = lstatOrNull(path);
    if (!info) continue;
    if (info.isSymlink || !info.isFile) {
      // A link could show another run's history (or none): the log is unusable.
      unsafeLogs.push(run);
      continue;
    }
    const fp = fingerprint(info);
    if (!facts || facts.fp !== fp || (options.strictLogs && !("outcome" in facts))) {
      dirty = true;
      const bytes = readBytesOrNull(path);
      const decoded = bytes === null ? null : decodeUtf8Strict(bytes);
      const scanned = scanLogMarkers(run, decoded ?? "");
      facts = { fp, markers: scanned.proposalMarkers, closed: scanned.closed };
      if (decoded !== null) facts.outcome = scanned.outcome;
    }
    logs.set(run, { markers: facts.markers, closed: facts.closed });
    if (outcomes && facts.outcome !== undefined) outcomes.set(name, facts.outcome);
    nextLogs.push([run, facts]);
  }
  if (cache) {
    // Vanished files also change the cache. Unless something changed, every
    // entry was reused under its own key, so the cache already holds exactly these.
    dirty ||= Object.keys(cache.records).length !== nextRecords.length ||
      Object.keys(cache.logs).length !== nextLogs.length;
    if (dirty) {
      cache.records = Object.fromEntries(nextRecords);
      cache.logs = Object.fromEntries(nextLogs);
    }
  }
  // Only a regular file is a revision: a link could show any bytes, so it counts as missing.
  const revisions = new Set<number>();
  const revisionNames: string[] = [];
  const nonRegular: string[] = [];
  try {
    for (const entry of Deno.readDirSync(paths.folder("revisions"))) {
      revisionNames.push(entry.name);
      if (!entry.isFile || entry.isSymlink) nonRegular.push(entry.name);
      const m = /^V([0-9]{6})\.md$/.exec(entry.name);
      if (m && entry.isFile && !entry.isSymlink) revisions.add(Number(m[1]));
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  options.onListed?.("revisions", revisionNames, nonRegular);
  return outcomes
    ? { records, logs, dirty, outcomes, revisions, unsafeLogs }
    : { records, logs, dirty, revisions, unsafeLogs };
}

/** The graph checks over collected facts: every reason canonical writes must pause. */
export function authorityIssues(state: State, facts: AuthorityFacts): AuthorityIssue[] {
  const out: AuthorityIssue[] = [];
  const { proposal, decision, conflict, resolution } = facts.records;
  for (const kind of AUTHORITY_KINDS) {
    for (const [id, f] of facts.records[kind]) if (f.problem) out.push(issue(kind, id, f.problem));
  }
  const usable = (f: RecordFacts | undefined) => f !== undefined && !f.problem && !f.stub;
  const marked = new Set<string>();
  // A missing decision of a conflict candidate also names its conflict.
  const candidateOf = new Map<string, string>();
  for (const [id, c] of conflict) {
    if (usable(c)) { for (const candidate of c.proposalIds ?? []) candidateOf.set(candidate, id); }
  }
  // Deletion anchors: run-log proposal markers and the conflict counter.
  for (const [run, log] of facts.logs) {
    const active = state.active_runs[run];
    for (const id of log.markers) {
      if (!id.startsWith(`${run}-Q`)) {
        out.push(foreignMarkerIssue(run, id));
        continue;
      }
      marked.add(id);
      const p = proposal.get(id);
      if (!p) {
        out.push(
          missingLoggedProposal(id, run),
        );
        continue;
      }
      const decided = log.closed ||
        (active !== undefined && usable(p) && active.base_revision > (p.baseRevision ?? 0));
      if (decided && !decision.has(id)) {
        out.push(missingDecision(id, "its run synced or closed", candidateOf.get(id)));
      }
    }
  }
  // A proposal file without its marker is a propose cut short before the log
  // line: harmless while its run is open, since the run's next sync or close
  // decides every proposal file it has. Once the run has synced past it or
  // closed, its decision must exist like any other.
  for (const [id, p] of proposal) {
    if (marked.has(id) || !usable(p)) continue;
    const run = id.slice(0, 7);
    const active = state.active_runs[run];
    const decided = facts.logs.get(run)?.closed === true ||
      (active !== undefined && active.base_revision > (p.baseRevision ?? 0));
    if (decided && !decision.has(id)) {
      out.push(
        missingDecision(
          id,
          "its run synced or closed after this proposal, which its log does not name",
          candidateOf.get(id),
        ),
      );
    }
  }
  for (let n = 1; n <= state.conflict_count; n++) {
    const id = conflictId(n);
    if (!conflict.has(id)) {
      out.push(
        issue("conflict", id, `is missing although conflict_count is ${state.conflict_count}`),
      );
    }
  }
  for (const [id, d] of decision) {
    if (!usable(d)) continue;
    if (!proposal.has(id)) out.push(issue("decision", id, "has no proposal record"));
    if (d.conflictId) {
      const c = conflict.get(d.conflictId);
      if (!c) out.push(issue("decision", id, `names conflict ${d.conflictId}, which is missing`));
      else if (usable(c) && !(c.proposalIds ?? []).includes(id)) {
        out.push(issue("decision", id, `is not a candidate of conflict ${d.conflictId}`));
      }
    }
    if (d.resolutionId && !resolution.has(d.resolutionId)) {
      out.push(
        issue(
          "decision",
          id,
          `was decided by resolution ${d.resolutionId}, whose record is missing`,
        ),
      );
    }
  }
  for (const [id, c] of conflict) {
    if (!usable(c)) continue;
    for (const candidate of c.proposalIds ?? []) {
      const p = proposal.get(candidate);
      if (!p) out.push(issue("conflict", id, `candidate ${candidate} is missing`));
      else if (usable(p) && p.sha !== c.proposalHashes?.[candidate]) {
        out.push(
          issue("conflict", id, `candidate ${candidate} no longer matches its recorded hash`),
        );
      }
    }
  }
  for (const [id, r] of resolution) {
    if (!usable(r)) continue;
    const c = conflict.get(id);
    if (!c) out.push(issue("resolution", id, "answers a conflict that is missing"));
    else if (usable(c) && (c.proposalIds ?? []).join(",") !== (r.proposalIds ?? []).join(",")) {
      out.push(issue("resolution", id, "candidate list differs from its conflict"));
    }
    if (r.status === "failed") {
      out.push(issue("resolution", id, "resolution status is failed; explicit retry is required."));
    }
    // An answer cannot predate what it answers: every candidate was staged on its base.
    const bases = (c && usable(c) ? c.proposalIds ?? [] : [])
      .map((candidate) => proposal.get(candidate))
      .filter((p): p is RecordFacts => p !== undefined && usable(p))
      .map((p) => p.baseRevision ?? 0);
    const highestBase = Math.max(-1, ...bases);
    for (
      const [field, value] of [["revision_before", r.revisionBefore], [
        "revision_after",
        r.status === "resolved" ? r.revisionAfter : null,
      ]] as const
    ) {
      if (typeof value === "number" && value < highestBase) {
        out.push(
          issue(
            "resolution",
            id,
            field === "revision_before"
              // The reference's words: the conflict's snapshot of the live
              // value cannot be in a revision older than a candidate's base.
              ? "conflict hot snapshot is not present in its recorded revision: resolution revision_before precedes a candidate proposal's base revision"
              : `resolution ${field} precedes a candidate proposal's base revision`,
          ),
        );
      }
    }
  }
  for (const run of facts.unsafeLogs ?? []) {
    out.push({
      kind: "run log",
      id: run,
      path: `.bimri/log/${run}.md`,
      problem: "run log cannot be a symbolic link or anything but a regular file",
    });
  }
  out.push(...revisionBindingIssues(state, facts));
  return out;
}

/** A revision a usable record names, and how the two checks below read it. */
type RevisionBinding = {
  kind: AuthorityKind;
  id: string;
  revision: number | null | undefined;
  /** The field, as the beyond-the-head issue names it. */
  field: string;
  /** Only an accepted decision's revision must still exist (a proposal's base and an answer's always). */
  mustExist: boolean;
};

/** The revisions history names: proposal bases, decided decisions, resolved answers. */
function revisionBindings(facts: AuthorityFacts): RevisionBinding[] {
  const usable = (f: RecordFacts) => !f.problem && !f.stub;
  const out: RevisionBinding[] = [];
  for (const [id, p] of facts.records.proposal) {
    if (usable(p)) {
      out.push({
        kind: "proposal",
        id,
        revision: p.baseRevision,
        field: "base revision",
        mustExist: true,
      });
    }
  }
  // An applying decision names no revision yet.
  for (const [id, d] of facts.records.decision) {
    if (usable(d) && d.outcome !== "applying") {
      out.push({
        kind: "decision",
        id,
        revision: d.revision,
        field: "revision",
        mustExist: d.outcome === "accepted",
      });
    }
  }
  for (const [id, r] of facts.records.resolution) {
    if (usable(r) && r.status === "resolved") {
      out.push({
        kind: "resolution",
        id,
        revision: r.revisionAfter,
        field: "revision_after",
        mustExist: true,
      });
    }
  }
  return out;
}

/**
 * History that names a revision the head has not reached (a forged or
 * misplaced record), then, where the check lists the revision files, one
 * whose file is gone (the genesis snapshot included; the head itself is
 * checked when it is loaded). The reference pauses writes on both.
 */
function revisionBindingIssues(state: State, facts: AuthorityFacts): AuthorityIssue[] {
  const head = state.head_revision;
  const present = facts.revisions;
  const beyond: AuthorityIssue[] = [];
  const missing: AuthorityIssue[] = [];
  if (present && head > 0 && !present.has(0)) {
    // Every history starts from the genesis snapshot (a link to it counts as missing).
    missing.push({
      kind: "revision",
      id: "V000000",
      path: ".bimri/revisions/V000000.md",
      problem: "missing or unsafe revision V000000",
    });
  }
  for (const b of revisionBindings(facts)) {
    const n = b.revision;
    if (typeof n !== "number") continue;
    if (n > head) {
      beyond.push(issue(b.kind, b.id, `${b.field} ${n} is beyond the current canonical head`));
    } else if (present && b.mustExist && n >= 0 && n < head && !present.has(n)) {
      missing.push(
        issue(
          b.kind,
          b.id,
          b.kind === "proposal"
            ? `its base revision ${revisionName(n)} is missing`
            : `names revision ${revisionName(n)}, which is missing`,
        ),
      );
    }
  }
  return [...beyond, ...missing];
}

/** A store folder's entries in name order (types from the listing: no lstat per file). */
export function sortedEntries(paths: StorePaths, folder: string): Deno.DirEntry[] {
  const list: Deno.DirEntry[] = [];
  try {
    for (const entry of Deno.readDirSync(paths.folder(folder))) list.push(entry);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function heldOf(facts: AuthorityFacts): Set<string> {
  const held = new Set<string>();
  for (const [id, d] of facts.records.decision) if (d.outcome === "held") held.add(id);
  return held;
}

function applyingOf(facts: AuthorityFacts): Set<string> {
  const applying = new Set<string>();
  for (const [id, r] of facts.records.resolution) if (r.status === "applying") applying.add(id);
  return applying;
}

/**
 * Everyday check. Fast path: the summary matches, so only the active runs'
 * records are validated. Otherwise the cached per-file facts plus the graph
 * checks (layers 1 and 2). With `persist` (start), the refreshed facts cache
 * and, when healthy, the summary are written at once (callers hold the engine
 * lock); canonical writes persist them only on success, through
 * `refreshAuthoritySummary`, since a refused command must leave the store as
 * it was. Without `fastPath` (index, maintain, resolve) every file is checked.
 */
export function cachedAuthorityIssues(
  store: Store,
  persist = false,
  ownStart: string | null = null,
  fastPath = true,
): AuthorityIssue[] {
  const matched = fastPath ? summaryMatches(store, ownStart) : null;
  if (matched && activeRunIssues(store).length === 0) {
    verified.set(store, basisFromSummary(matched));
    if (persist) refreshAuthoritySummary(store);
    return [];
  }
  // Slow path, also whenever the fast path found damage: the full list, in the usual order.
  const cache = loadCache(store.paths);
  const facts = collectFacts(store.paths, cache, new Set(Object.keys(store.state.active_runs)));
  const issues = [...authorityIssues(store.state, facts), ...unprovenAnswerIssues(store, facts)];
  if (issues.length === 0) {
    verified.set(store, {
      cache: facts.dirty ? cache : null,
      held: heldOf(facts),
      applying: applyingOf(facts),
    });
  }
  if (persist) {
    if (facts.dirty) writeFactsCache(store.paths, cache);
    if (issues.length === 0) {
      verified.get(store)!.cache = null;
      refreshAuthoritySummary(store);
    }
  }
  return issues;
}

const BRIEF_LIMIT = 5;

/** The AUTHORITY RECOVERY NEEDED block for a list of issues (empty when none). */
export function recoveryBlock(issues: AuthorityIssue[], limit = BRIEF_LIMIT): string[] {
  if (issues.length === 0) return [];
  const lines = ["AUTHORITY RECOVERY NEEDED — shared-memory writes are paused:"];
  for (const i of issues.slice(0, limit)) lines.push(`  - ${issueLine(i)}`);
  if (issues.length > limit) lines.push(`  - … and ${issues.length - limit} more (see doctor).`);
  lines.push(
    "  Run `doctor` for the full audit. With the owner's explicit approval, use `quarantine-authority` to preserve a damaged record before restoring a validated replacement.",
  );
  return lines;
}

/** The brief lines and issues for damaged authority (empty when healthy). */
export function authorityBriefLines(store: Store): { lines: string[]; issues: AuthorityIssue[] } {
  // Called right after startRun: the newest run's fresh log is this start's own change.
  const newest = `R${String(store.state.run_count).padStart(6, "0")}`;
  const issues = cachedAuthorityIssues(store, true, newest);
  forgetSummaryOnDamage(store, issues, newest);
  return { lines: recoveryBlock(issues), issues };
}

/**
 * Once a writer has seen damage, the summary must stop vouching for the store:
 * a check that read every file (index, maintain, resolve) or the active runs'
 * records found what the folder fingerprints cannot show (a record edited in
 * place), and the next everyday write would otherwise pass on the summary
 * alone. Writers only, under the engine lock; status does the same.
 */
function forgetSummaryOnDamage(
  store: Store,
  issues: readonly AuthorityIssue[],
  ownStart: string | null = null,
): void {
  // Only when the fast path would still vouch: otherwise the summary already
  // leads to the full check, and a refused command leaves every file as it was.
  if (
    issues.length > 0 && summaryMatches(store, ownStart) !== null &&
    activeRunIssues(store).length === 0
  ) {
    forgetSummary(store.paths);
  }
}

/** Options of `requireHealthyAuthority`. */
export type HealthOptions = {
  /** A resolve retrying this conflict may proceed past its own failed resolution. */
  retryConflict?: string;
  /**
   * sync and close: the O(1) summary check (layer 3) may vouch for the store.
   * Other canonical writes (index, maintain, resolve) always check every file.
   */
  everyday?: boolean;
  /**
   * stderr notices of what the command already did (a direct edit of bimri.md
   * preserved before the check): a refusal still prints them.
   */
  notices?: readonly string[];
};

/**
 * Refuses a canonical write while any authority record is damaged
 * (protocol 9.5). Call first in every canonical write path, before any write.
 */
export function requireHealthyAuthority(store: Store, options: HealthOptions = {}): void {
  const found = cachedAuthorityIssues(store, false, null, options.everyday === true);
  forgetSummaryOnDamage(store, found);
  const issues = found.filter((i) =>
    !(options.retryConflict && i.kind === "resolution" && i.id === options.retryConflict &&
      i.problem.startsWith("resolution status is failed"))
  );
  if (issues.length === 0) return;
  refuseForIssues(issues, options.notices);
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
