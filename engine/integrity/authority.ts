/**
 * Damaged-authority detection and the degraded mode of protocol 9.5: the
 * check every canonical write calls first, joining the three layers below
 * (layer 1 in authority_facts.ts, layer 2 in authority_graph.ts, layer 3 in
 * everyday.ts), and the refusal and brief block it prints.
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
import type { Store } from "../store/store.ts";
import { forgetSummary } from "./summary.ts";
import { unprovenAnswerIssues } from "./consumed_answers.ts";
import { type AuthorityFacts, collectFacts, loadCache } from "./authority_facts.ts";
import { authorityIssues } from "./authority_graph.ts";

import {
  activeRunIssues,
  type AuthorityIssue,
  basisFromSummary,
  issueLine,
  refreshAuthoritySummary,
  refuseForIssues,
  registerFullAuthorityCheck,
  verified,
  writeFactsCache,
} from "./everyday.ts";
import { summaryMatches } from "./summary.ts";
// Layers 1 and 2 as doctor.ts has always imported them (doctor.ts is being split apart).
export { collectFacts, hashCandidates } from "./authority_facts.ts";
export { authorityIssues } from "./authority_graph.ts";
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
  QUARANTINED_PROBLEM,
  refreshAuthoritySummary,
  scanLogMarkers,
} from "./everyday.ts";
// The summary match (summary.ts) as start and hooks have always imported it.
export { proveBeforeStart, unchangedSinceHealthyWrite } from "./summary.ts";
export type {
  AuthorityIssue,
  CacheDoc,
  CollectOptions,
  FolderEntry,
  LogFacts,
  RecordFacts,
} from "./everyday.ts";

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

// sync and close reach this module only when the everyday gate (everyday.ts
// `requireEverydayHealth`) cannot vouch; once loaded it runs the full check.
registerFullAuthorityCheck(requireHealthyAuthority);
