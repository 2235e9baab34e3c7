/**
 * Layer 1 of the authority check (see authority.ts): the per-file facts of
 * every authority record and run log, read once and memoized in the derived
 * facts cache by lstat fingerprint.
 */
import { isJsonObject, type JsonValue } from "../model/json.ts";
import { fingerprint, listNames, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { RUN_ID } from "../model/ids.ts";
import { decodeUtf8Strict, sha256Hex } from "../model/text.ts";
import { AUTHORITY_KINDS, type AuthorityKind, idGrammar, KIND_FOLDER } from "./schemas.ts";
import {
  CACHE_SCHEMA,
  type CacheDoc,
  cachePath,
  type CollectOptions,
  type LogFacts,
  readFactsOfNode,
  type RecordFacts,
  recordPathOf,
  scanLogMarkers,
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

/** An empty facts map of every authority kind. */
export function emptyRecordFacts(): AuthorityFacts["records"] {
  return {
    proposal: new Map(),
    decision: new Map(),
    conflict: new Map(),
    resolution: new Map(),
  } as Record<AuthorityKind, Map<string, RecordFacts>>;
}

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
  const records = emptyRecordFacts();
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
