/**
 * Settled history: the derived record that lets the full checks of `status`
 * and `review` prove a healthy store without loading every record's facts.
 *
 * The full check (status_check.ts, `strictFacts`) fingerprints every record and
 * run log, loads the facts cache (about 5 MB at 10,000 runs), re-reads what
 * changed and runs the graph checks over every record. Almost all of that
 * is history that cannot change: a closed run's proposals, decisions and log
 * are final. `.bimri/audit-integrity-settled.json` records, after a check
 * found the store healthy, which runs were settled then (every run up to
 * `through` except `open`: the active ones and those whose log was not
 * closed), an order-independent digest of the lstat fingerprints (type,
 * inode, size, mtime, ctime; `fingerprint` in store/fingerprint.ts) of every record and
 * log file of those runs, and the few facts of those files that the rest of
 * the store can still contradict: the conflicts and resolutions their
 * decisions name, the revisions they name, and what status counts from them
 * (outcomes, held decisions, proposal files).
 *
 * A later full check still fingerprints every record and log file (one
 * lstat each, so an old record edited in place, truncated, swapped, linked,
 * added or removed is seen at once), but reads only the files of unsettled
 * runs, every conflict and resolution, and the proposals those name. The
 * store is proven healthy when the settled files' digest and count are
 * unchanged, no settled run is active again, the graph checks pass over
 * what was read, every conflict and resolution a settled decision names
 * still holds it, and every revision settled records name is still present
 * and not beyond the head. Any other outcome (a changed digest, damage
 * anywhere, a missing or foreign record) falls back to the full check,
 * which lists the issues in its usual order; so this record only ever skips
 * work and deleting it changes no answer.
 *
 * What is trusted: a settled file whose fingerprint is unchanged still holds
 * the bytes that were checked (as for every fingerprint cache here; an edit
 * within a coarse-clock window gives a unique print, see `fingerprint`), and
 * a folder whose fingerprint is unchanged still holds the names listed with
 * that fingerprint (any entry added, removed or renamed changes the folder's
 * mtime), so its listing is reused instead of read again.
 *
 * status writes it (under the engine lock); review only reads it. The
 * reference engine ignores every `audit-integrity-*` file.
 */
import {
  fingerprint,
  folderPrint,
  lstatOrNull,
  readBytesOrNull,
  replaceDerived,
} from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import type { State } from "../model/state.ts";
import { CONFLICT_ID, PROPOSAL_ID, RUN_ID } from "../model/ids.ts";
import { decodeUtf8Strict } from "../model/text.ts";
import { type AuthorityKind, KIND_FOLDER } from "./schemas.ts";
import { type AuthorityFacts, emptyRecordFacts } from "./authority_facts.ts";
import type { RecordFacts } from "./everyday.ts";

const SETTLED_NAME = "audit-integrity-settled.json";
/** Schema of the settled record. */
export const SETTLED_SCHEMA = 1;

/** A folder's names as listed right after its fingerprint was taken. */
type Listing = { print: string; names: string[]; nonRegular?: string[] };

/** The settled record (see the header). */
export type SettledDoc = {
  schema: number;
  /** Runs R000001..through are settled, except `open`. */
  through: number;
  open: string[];
  /** Number of settled record and log files, and two sums of their (path, fingerprint) hashes. */
  count: number;
  sum1: number;
  sum2: number;
  /** Settled proposal files. */
  proposals: number;
  /** First outcome of each settled UTF-8 log, counted. */
  outcomes: Record<string, number>;
  /** Settled decisions whose outcome is held, sorted. */
  held: string[];
  /** Settled decisions that name a conflict or a resolution: [decision, conflict, resolution]. */
  links: [string, string | null, string | null][];
  /** Revisions settled records name that must exist, ascending. */
  revisions: number[];
  /** The highest revision any settled record names (-1 when none). */
  maxNamed: number;
  /** Folder listings, reused while the folder's fingerprint holds. */
  listings: Record<string, Listing>;
};

/** What a settled proof gives status beyond "healthy". */
export type SettledProof = {
  /** Facts of the records and logs read (unsettled runs, conflicts, resolutions, candidates). */
  facts: AuthorityFacts;
  /** First-outcome counts over every regular UTF-8 run log. */
  outcomes: Record<string, number>;
  /** Every held decision, sorted (decision-file order). */
  held: string[];
  /** Names in the proposals folder that are proposal files (`R000000-Q000.json`). */
  proposalFiles: number;
  /** Names in the revisions folder that are revision files (`V000000.md`). */
  revisionFiles: number;
  /** Every name in the log folder. */
  logNames: string[];
};

function settledPath(paths: StorePaths): string {
  return paths.folder(SETTLED_NAME);
}

function loadSettled(paths: StorePaths): SettledDoc | null {
  const info = lstatOrNull(settledPath(paths));
  if (!info || !info.isFile) return null;
  try {
    const doc = JSON.parse(Deno.readTextFileSync(settledPath(paths))) as SettledDoc;
    if (
      doc?.schema !== SETTLED_SCHEMA || !Number.isInteger(doc.through) ||
      !Array.isArray(doc.open) || !Array.isArray(doc.held) || !Array.isArray(doc.links) ||
      !Array.isArray(doc.revisions) || typeof doc.listings !== "object" || !doc.listings ||
      typeof doc.outcomes !== "object" || !doc.outcomes
    ) {
      return null;
    }
    return doc;
  } catch {
    return null;
  }
}

/** An empty record: nothing settled, nothing listed. */
function emptyDoc(): SettledDoc {
  return {
    schema: SETTLED_SCHEMA,
    through: 0,
    open: [],
    count: 0,
    sum1: 0,
    sum2: 0,
    proposals: 0,
    outcomes: {},
    held: [],
    links: [],
    revisions: [],
    maxNamed: -1,
    listings: {},
  };
}

/**
 * Two independent 32-bit hashes of `text` (FNV-1a and a multiplicative mix),
 * continuing from `seed` (the pair of the text before it, with a separator).
 */
function hashPair(text: string, seed: [number, number] = [0x811c9dc5, 0x9e3779b9]): [
  number,
  number,
] {
  let a = Math.imul(seed[0] ^ 0x1f, 0x01000193);
  let b = Math.imul(seed[1] ^ 0x1f, 0x85ebca6b);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x85ebca6b);
    b ^= b >>> 13;
  }
  b = Math.imul(b ^ (b >>> 16), 0xc2b2ae35);
  return [a >>> 0, (b ^ (b >>> 16)) >>> 0];
}

/** Digest accumulator over (folder/name, fingerprint) pairs, independent of order. */
class Digest {
  count = 0;
  sum1 = 0;
  sum2 = 0;
  add(folder: string, name: string, fp: string): void {
    const [a, b] = hashPair(fp, hashPair(name, hashPair(folder)));
    this.count++;
    this.sum1 = (this.sum1 + a) >>> 0;
    this.sum2 = (this.sum2 + b) >>> 0;
  }
}

const RECORD_FOLDERS = ["proposals", "decisions"] as const;

function runName(n: number): string {
  return `R${String(n).padStart(6, "0")}`;
}
const PROPOSAL_FILE = /^R[0-9]{6}-Q[0-9]{3}\.json$/;
const REVISION_FILE = /^V[0-9]{6}\.md$/;

/**
 * Lists `folder` (names; for revisions also which are not regular files),
 * reusing the recorded listing while the folder's fingerprint holds.
 */
function listing(paths: StorePaths, folder: string, doc: SettledDoc): Listing | null {
  const print = folderPrint(paths, folder);
  if (print === null) {
    // A missing folder lists as empty, as listNames does; anything else is for the full check.
    return lstatOrNull(paths.folder(folder)) === null ? { print: "", names: [] } : null;
  }
  const known = doc.listings[folder];
  if (known && known.print === print && Array.isArray(known.names)) return known;
  const names: string[] = [];
  const nonRegular: string[] = [];
  for (const entry of Deno.readDirSync(paths.folder(folder))) {
    names.push(entry.name);
    if (folder === "revisions" && (!entry.isFile || entry.isSymlink)) nonRegular.push(entry.name);
  }
  return folder === "revisions" ? { print, names, nonRegular } : { print, names };
}

/** One record or log file read because its run is not settled. */
type FreshFile = { folder: string; name: string; run: string; fp: string };

/**
 * Proves the store healthy from the settled record, reading only unsettled
 * files (see the header). Returns null when it cannot: then the full check
 * decides. `read` derives a record's facts from a path and its lstat; `scan`
 * a log's markers, closure and first outcome; `issues` runs the graph checks.
 * With `persist` (status, under the engine lock) the record is extended to
 * the runs that have closed since and written back.
 */
export function proveSettled(
  paths: StorePaths,
  state: State,
  helpers: {
    /** Facts of one record from its path and lstat (fingerprint included). */
    read: (path: string, kind: AuthorityKind, id: string, info: Deno.FileInfo) => RecordFacts;
    scan: (run: string, text: string) => {
      proposalMarkers: string[];
      closed: boolean;
      outcome: string | null;
    };
    issues: (state: State, facts: AuthorityFacts) => unknown[];
  },
  persist: boolean,
): SettledProof | null {
  const doc = loadSettled(paths);
  // A run count lowered by hand below what was settled is for the full check.
  if (!doc || state.run_count < doc.through) return null;
  const open = new Set(doc.open);
  // Run IDs have one width, so they compare as strings (called once per file).
  const last = runName(doc.through);
  const settled = open.size === 0
    ? (run: string) => run <= last && run !== "R000000"
    : (run: string) => run <= last && run !== "R000000" && !open.has(run);
  for (const run of Object.keys(state.active_runs)) {
    if (RUN_ID.test(run) && settled(run)) return null;
  }
  const listings: Record<string, Listing> = {};
  for (const folder of [...RECORD_FOLDERS, "log", "revisions", "conflicts", "resolutions"]) {
    const list = listing(paths, folder, doc);
    if (!list) return null;
    listings[folder] = list;
  }
  const digest = new Digest();
  const records = emptyRecordFacts();
  const fresh: FreshFile[] = [];
  let proposalFiles = 0;
  for (const folder of RECORD_FOLDERS) {
    const kind: AuthorityKind = folder === "proposals" ? "proposal" : "decision";
    const dir = paths.folder(folder);
    for (const name of listings[folder].names) {
      if (folder === "proposals" && PROPOSAL_FILE.test(name)) proposalFiles++;
      if (!name.endsWith(".json")) continue;
      const id = name.slice(0, -5);
      if (!PROPOSAL_ID.test(id)) continue;
      const path = `${dir}/${name}`;
      const info = lstatOrNull(path);
      if (!info) continue;
      const fp = fingerprint(info);
      const run = id.slice(0, 7);
      if (settled(run)) {
        digest.add(folder, name, fp);
        continue;
      }
      const facts = helpers.read(path, kind, id, info);
      records[kind].set(id, facts);
      fresh.push({ folder, name, run, fp: facts.fp });
    }
  }
  const logs = new Map<string, { markers: string[]; closed: boolean }>();
  const freshOutcomes: Record<string, number> = {};
  const freshLogFacts = new Map<string, { closed: boolean; outcome?: string | null }>();
  const logDir = paths.folder("log");
  for (const name of listings.log.names) {
    const run = name.endsWith(".md") ? name.slice(0, -3) : "";
    if (!RUN_ID.test(run)) continue;
    const path = `${logDir}/${name}`;
    const info = lstatOrNull(path);
    if (!info) continue;
    const fp = fingerprint(info);
    if (settled(run)) {
      digest.add("log", name, fp);
      continue;
    }
    // A linked or special log is damage: the full check names it.
    if (info.isSymlink || !info.isFile) return null;
    const bytes = readBytesOrNull(path);
    const decoded = bytes === null ? null : decodeUtf8Strict(bytes);
    const scanned = helpers.scan(run, decoded ?? "");
    logs.set(run, { markers: scanned.proposalMarkers, closed: scanned.closed });
    const facts: { closed: boolean; outcome?: string | null } = { closed: scanned.closed };
    if (decoded !== null) {
      facts.outcome = scanned.outcome;
      if (scanned.outcome) {
        freshOutcomes[scanned.outcome] = (freshOutcomes[scanned.outcome] ?? 0) + 1;
      }
    }
    freshLogFacts.set(run, facts);
    fresh.push({ folder: "log", name, run, fp });
  }
  if (digest.count !== doc.count || digest.sum1 !== doc.sum1 || digest.sum2 !== doc.sum2) {
    return null;
  }
  // Conflicts and resolutions are few and are always read; so are the proposals they name.
  for (const kind of ["conflict", "resolution"] as const) {
    const folder = KIND_FOLDER[kind];
    for (const name of listings[folder].names) {
      if (!name.endsWith(".json")) continue;
      const id = name.slice(0, -5);
      if (!CONFLICT_ID.test(id)) continue;
      const path = `${paths.folder(folder)}/${name}`;
      const info = lstatOrNull(path);
      if (!info) continue;
      records[kind].set(id, helpers.read(path, kind, id, info));
    }
  }
  for (const c of records.conflict.values()) {
    for (const id of c.proposalIds ?? []) {
      if (records.proposal.has(id) || !PROPOSAL_ID.test(id)) continue;
      const path = `${paths.folder("proposals")}/${id}.json`;
      const info = lstatOrNull(path);
      if (info) records.proposal.set(id, helpers.read(path, "proposal", id, info));
    }
  }
  const present = new Set<number>();
  const nonRegular = new Set(listings.revisions.nonRegular ?? []);
  let revisionFiles = 0;
  for (const name of listings.revisions.names) {
    if (!REVISION_FILE.test(name)) continue;
    revisionFiles++;
    if (!nonRegular.has(name)) present.add(Number(name.slice(1, 7)));
  }
  const facts: AuthorityFacts = { records, logs, dirty: false, revisions: present, unsafeLogs: [] };
  if (helpers.issues(state, facts).length > 0) return null;
  // What the rest of the store could contradict in settled history.
  const head = state.head_revision;
  if (doc.maxNamed > head) return null;
  for (const n of doc.revisions) {
    if (n >= 0 && n < head && !present.has(n)) return null;
  }
  for (const [decision, conflict, resolution] of doc.links) {
    if (conflict !== null) {
      const c = records.conflict.get(conflict);
      if (!c) return null;
      if (!c.problem && !c.stub && !(c.proposalIds ?? []).includes(decision)) return null;
    }
    if (resolution !== null && !records.resolution.has(resolution)) return null;
  }
  const outcomes: Record<string, number> = { ...doc.outcomes };
  for (const [k, v] of Object.entries(freshOutcomes)) outcomes[k] = (outcomes[k] ?? 0) + v;
  const held = [...doc.held];
  for (const [id, d] of records.decision) {
    if (d.outcome === "held" && !settled(id.slice(0, 7))) held.push(id);
  }
  held.sort();
  if (persist) {
    settle(paths, state, doc, listings, fresh, records, freshLogFacts);
  }
  return {
    facts,
    outcomes,
    held,
    proposalFiles,
    revisionFiles,
    logNames: listings.log.names,
  };
}

/** A file of a run that becomes settled, with the facts the record keeps. */
export type SettlingFile = {
  folder: string;
  name: string;
  fp: string;
  /** Record facts (proposals and decisions) or, for a log, its closure and outcome. */
  record?: RecordFacts;
  log?: { closed: boolean; outcome?: string | null };
};

/** Adds one settling file to `doc` (digest, counts and the facts kept). */
function addSettling(
  doc: SettledDoc,
  digest: Digest,
  file: SettlingFile,
  names: Set<number>,
): void {
  digest.add(file.folder, file.name, file.fp);
  if (file.log) {
    const outcome = file.log.outcome;
    if (outcome) doc.outcomes[outcome] = (doc.outcomes[outcome] ?? 0) + 1;
    return;
  }
  const r = file.record!;
  const id = file.name.slice(0, -5);
  if (file.folder === "proposals") {
    if (PROPOSAL_FILE.test(file.name)) doc.proposals++;
    if (typeof r.baseRevision === "number") {
      names.add(r.baseRevision);
      doc.maxNamed = Math.max(doc.maxNamed, r.baseRevision);
    }
    return;
  }
  if (r.outcome === "held") doc.held.push(id);
  if (r.conflictId || r.resolutionId) {
    doc.links.push([id, r.conflictId ?? null, r.resolutionId ?? null]);
  }
  if (r.outcome !== "applying" && typeof r.revision === "number") {
    doc.maxNamed = Math.max(doc.maxNamed, r.revision);
    if (r.outcome === "accepted") names.add(r.revision);
  }
}

/**
 * The runs that may be settled now: every run up to run_count except the
 * active ones and those whose log (`closed`: run -> closure of each log read)
 * is not closed. A run without a log has nothing to wait for.
 */
function openRuns(state: State, closed: Map<string, boolean>): { through: number; open: string[] } {
  const through = state.run_count;
  const last = runName(through);
  const open = new Set<string>();
  for (const run of Object.keys(state.active_runs)) if (RUN_ID.test(run)) open.add(run);
  for (const [run, isClosed] of closed) {
    if (!isClosed && run <= last) open.add(run);
  }
  return { through, open: [...open].sort() };
}

/** Extends the record with the runs closed since it was written, and writes it. */
function settle(
  paths: StorePaths,
  state: State,
  doc: SettledDoc,
  listings: Record<string, Listing>,
  fresh: FreshFile[],
  records: Record<AuthorityKind, Map<string, RecordFacts>>,
  logFacts: Map<string, { closed: boolean; outcome?: string | null }>,
): void {
  const listingsChanged = Object.keys(listings).some((f) =>
    (doc.listings[f]?.print ?? "") !== listings[f].print
  );
  // Nothing new since the record was written: no run can have settled.
  if (fresh.length === 0 && !listingsChanged && state.run_count === doc.through) return;
  // Logs of settled runs were not read: they stay settled (none is active, each is unchanged).
  const { through, open } = openRuns(
    state,
    new Map([...logFacts].map(([run, f]) => [run, f.closed])),
  );
  const stillOpen = new Set(open);
  const next: SettledDoc = {
    ...doc,
    through,
    open,
    held: [...doc.held],
    links: [...doc.links],
    outcomes: { ...doc.outcomes },
    listings: {},
  };
  // Runs settled before stay settled: none is active (checked) and their files are unchanged.
  const digest = new Digest();
  digest.count = doc.count;
  digest.sum1 = doc.sum1;
  digest.sum2 = doc.sum2;
  const names = new Set(doc.revisions);
  let changed = false;
  for (const file of fresh) {
    const n = Number(file.run.slice(1));
    if (n < 1 || n > through || stillOpen.has(file.run)) continue;
    changed = true;
    const id = file.folder === "log" ? file.run : file.name.slice(0, -5);
    addSettling(next, digest, {
      folder: file.folder,
      name: file.name,
      fp: file.fp,
      record: file.folder === "proposals"
        ? records.proposal.get(id)
        : file.folder === "decisions"
        ? records.decision.get(id)
        : undefined,
      log: file.folder === "log" ? logFacts.get(file.run) : undefined,
    }, names);
  }
  next.count = digest.count;
  next.sum1 = digest.sum1;
  next.sum2 = digest.sum2;
  next.held.sort();
  next.revisions = [...names].sort((a, b) => a - b);
  for (const [folder, list] of Object.entries(listings)) {
    if (list.print !== "") next.listings[folder] = list;
  }
  if (
    !changed && !listingsChanged && through === doc.through &&
    open.join(",") === doc.open.join(",")
  ) {
    return;
  }
  writeSettled(paths, next);
}

function writeSettled(paths: StorePaths, doc: SettledDoc): void {
  try {
    replaceDerived(settledPath(paths), JSON.stringify(doc));
  } catch {
    // Without the record the next full check reads every file.
  }
}

/**
 * Writes a fresh record after a full check found the store healthy (status,
 * under the engine lock): `files` are every record and log file with its
 * fingerprint and facts as the check saw them, `prints` the folder
 * fingerprints taken before the check listed them.
 */
export function recordSettled(
  paths: StorePaths,
  state: State,
  files: Iterable<SettlingFile & { run: string }>,
  listed: Record<string, Listing>,
): void {
  const all = [...files];
  const closedLogs = new Map<string, boolean>();
  for (const f of all) if (f.log) closedLogs.set(f.run, f.log.closed);
  const { through, open } = openRuns(state, closedLogs);
  const openSet = new Set(open);
  const doc = emptyDoc();
  doc.through = through;
  doc.open = open;
  const digest = new Digest();
  const names = new Set<number>();
  for (const file of all) {
    const n = Number(file.run.slice(1));
    if (n < 1 || n > through || openSet.has(file.run)) continue;
    addSettling(doc, digest, file, names);
  }
  doc.count = digest.count;
  doc.sum1 = digest.sum1;
  doc.sum2 = digest.sum2;
  doc.held.sort();
  doc.revisions = [...names].sort((a, b) => a - b);
  doc.listings = listed;
  writeSettled(paths, doc);
}

/** Lists `folder` for `recordSettled`, fingerprint first (null for a missing folder). */
export function listForSettled(paths: StorePaths, folder: string): Listing | null {
  return listing(paths, folder, emptyDoc());
}
