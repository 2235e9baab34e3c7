/**
 * The full per-file authority check of status and review (authority.ts,
 * `strictFacts`): every record and log fingerprinted, only what changed read,
 * and closed runs' history proven from the settled record (settled.ts) while
 * its digest holds. Kept apart from authority.ts so the everyday writers
 * (start, sync, close) do not load settled history.
 */
import type { StorePaths } from "../store/paths.ts";
import type { Store } from "../store/store.ts";
import type { State } from "../model/state.ts";
import { forgetSummary, WATCHED_FOLDERS } from "./summary.ts";
import { fingerprint, folderPrint } from "../store/files.ts";
import { unprovenAnswerIssues } from "./consumed_answers.ts";
import { proveSettled, recordSettled, type SettledProof, type SettlingFile } from "./settled.ts";
import type { AuthorityKind } from "./schemas.ts";

import {
  type AuthorityIssue,
  type CacheDoc,
  readFactsOfNode,
  scanLogMarkers,
  writeFactsCache,
} from "./everyday.ts";

import { type AuthorityFacts, collectFacts, loadCache } from "./authority_facts.ts";
import { authorityIssues } from "./authority_graph.ts";
import { recoveryBlock } from "./authority.ts";

/**
 * The full per-file check of review (read-only: the facts cache is used but
 * never written). Same answers as reading every file; see `strictFacts`.
 */
export function fullAuthorityIssues(paths: StorePaths, state: State): AuthorityIssue[] {
  if (proveSettled(paths, state, SETTLED_HELPERS, false)) return [];
  return authorityIssues(state, strictFacts(paths, state, false));
}

/**
 * Facts of every authority record and run log, equal to a full read: every
 * file is fingerprinted (lstat) and only files whose fingerprint matches the
 * facts cache are not read again (closed logs included, unlike the everyday
 * check). With `persist` (callers hold the engine lock) a changed cache is
 * written back.
 */
function strictFacts(paths: StorePaths, state: State, persist: boolean): AuthorityFacts {
  const cache = loadCache(paths);
  const active = new Set(Object.keys(state.active_runs));
  // With persist (status), folder prints are taken before the check lists
  // each folder, so settled history can reuse the listing while they hold.
  const prints: Record<string, string | null> = {};
  if (persist) {
    for (const folder of SETTLED_FOLDERS) prints[folder] = folderPrint(paths, folder);
  }
  const listed: Record<string, { print: string; names: string[]; nonRegular?: string[] }> = {};
  const facts = collectFacts(paths, cache, active, {
    strictLogs: true,
    onListed: persist
      ? (folder, names, nonRegular) => {
        const print = prints[folder];
        if (print) listed[folder] = nonRegular ? { print, names, nonRegular } : { print, names };
      }
      : undefined,
  });
  if (persist && facts.dirty) writeFactsCache(paths, cache);
  if (persist) {
    const issues = authorityIssues(state, facts);
    checkedIssues.set(facts, issues);
    if (issues.length === 0) recordSettled(paths, state, settlingFiles(facts, cache), listed);
  }
  return facts;
}

/** The issues a persisting strict check already computed for its facts. */
const checkedIssues = new WeakMap<AuthorityFacts, AuthorityIssue[]>();

/** The folders whose listings settled history keeps: the ones the summary watches. */
const SETTLED_FOLDERS = WATCHED_FOLDERS;

/** Every proposal, decision and log file a strict check saw, for `recordSettled`. */
function* settlingFiles(
  facts: AuthorityFacts,
  cache: CacheDoc,
): Iterable<SettlingFile & { run: string }> {
  for (const [folder, kind] of [["proposals", "proposal"], ["decisions", "decision"]] as const) {
    for (const [id, record] of facts.records[kind]) {
      yield { folder, name: `${id}.json`, fp: record.fp, record, run: id.slice(0, 7) };
    }
  }
  for (const [run, log] of facts.logs) {
    const cached = cache.logs[run];
    if (!cached) continue;
    yield {
      folder: "log",
      name: `${run}.md`,
      fp: cached.fp,
      log: "outcome" in cached
        ? { closed: log.closed, outcome: cached.outcome }
        : { closed: log.closed },
      run,
    };
  }
}

/** Settled proofs (settled.ts) of the status checks that took them, per loaded store. */
const settledProofs = new WeakMap<Store, SettledProof>();

/** The settled proof status's check took for `store` (then `fullFactsOf` has none). */
export function settledProofOf(store: Store): SettledProof | undefined {
  return settledProofs.get(store);
}

/** How settled.ts reads records, scans logs and runs the graph checks. */
const SETTLED_HELPERS = {
  read: (path: string, kind: AuthorityKind, id: string, info: Deno.FileInfo) =>
    readFactsOfNode(path, kind, id, info, fingerprint(info)),
  scan: scanLogMarkers,
  issues: (state: State, facts: AuthorityFacts) => authorityIssues(state, facts),
};

/** Facts of the full check `authorityStatusLines` ran on this loaded store (status reuses them). */
const statusFacts = new WeakMap<Store, AuthorityFacts>();

/** The facts the full status check collected for `store`, if it ran. */
export function fullFactsOf(store: Store): AuthorityFacts | undefined {
  return statusFacts.get(store);
}

/** The full status report block (every issue; the per-file check of `strictFacts`). */
export function authorityStatusLines(store: Store): { lines: string[]; issues: AuthorityIssue[] } {
  const proof = proveSettled(store.paths, store.state, SETTLED_HELPERS, true);
  if (proof) {
    settledProofs.set(store, proof);
    return { lines: [], issues: [] };
  }
  const facts = strictFacts(store.paths, store.state, true);
  statusFacts.set(store, facts);
  const issues = [
    ...(checkedIssues.get(facts) ?? authorityIssues(store.state, facts)),
    ...unprovenAnswerIssues(store, facts),
  ];
  if (issues.length > 0) forgetSummary(store.paths);
  return { lines: recoveryBlock(issues, Number.MAX_SAFE_INTEGER), issues };
}
