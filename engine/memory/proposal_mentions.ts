/**
 * Proposal numbers mentioned in conflict and resolution records, for
 * proposal-ID allocation (formats section 2), and their derived cache
 * `.bimri/audit-integrity-mentions.json`.
 *
 * A run's next proposal number is one above every number it has used: its
 * proposal and decision files, its log markers, and every word-bounded
 * `<run>-Q<nnn>` in any `conflicts/*.json` or `resolutions/*.json` file (the
 * reference reads those bytes too, so a number named only there, after a
 * quarantine or a hand edit, is never handed out again).
 *
 * Reading every conflict and resolution on each propose would make the
 * everyday path grow with history (about 0.1 s per thousand records here), so
 * the highest number per run is kept in a derived record together with the
 * lstat fingerprints of both folders. While both fingerprints match, the
 * record answers; any other folder state (a record added, replaced or removed
 * by another engine, quarantine, restore or a hand edit, a copied store) is
 * read in full once. Each conflict or resolution bimri writes moves the
 * record along (`trackMentions`), but only when it matched the folders right
 * before the write, so a change nobody explained is never absorbed.
 *
 * Derived data only: a missing, unreadable, foreign or stale record gives the
 * same numbers as a full read, with one exception that can only raise a
 * number: a number that disappears when bimri replaces a record (a failed
 * resolution's error text, rewritten as resolved) stays counted until the
 * next full read. A skipped number is harmless; a reused one never happens.
 * The reference engine ignores the file.
 */
import {
  folderPrint,
  listNames,
  lstatOrNull,
  readBytesOrNull,
  replaceDerived,
} from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";

const CACHE_NAME = "audit-integrity-mentions.json";
const CACHE_SCHEMA = 1;
const FOLDERS = ["conflicts", "resolutions"] as const;
/** What the reference matches, per run: `\b<run>-Q(\d{3})\b` over the raw bytes. */
const MENTION = /\b(R[0-9]{6})-Q([0-9]{3})\b/g;

/** Per run ID, the highest proposal number mentioned. */
export type Highest = Record<string, number>;
type MentionRecord = { prints: string; highest: Highest };

function cachePath(paths: StorePaths): string {
  return paths.folder(CACHE_NAME);
}

/** Both folders' fingerprints as one string, or null when either is not a real folder. */
function foldersPrint(paths: StorePaths): string | null {
  const prints: string[] = [];
  for (const folder of FOLDERS) {
    const print = folderPrint(paths, folder);
    if (print === null) return null;
    prints.push(print);
  }
  return prints.join("|");
}

/** Adds every mention in `bytes` to `highest`. */
export function addMentions(highest: Highest, bytes: Uint8Array): void {
  // Latin-1 keeps one character per byte: non-ASCII bytes are non-word
  // characters, as in the reference's bytes pattern.
  const text = new TextDecoder("latin1").decode(bytes);
  for (const m of text.matchAll(MENTION)) {
    const n = Number(m[2]);
    if (n > (highest[m[1]] ?? 0)) highest[m[1]] = n;
  }
}

/** Reads every regular `*.json` file of both folders (the reference's glob). */
function scanMentions(paths: StorePaths): Highest {
  const highest: Highest = Object.create(null);
  for (const folder of FOLDERS) {
    const dir = paths.folder(folder);
    for (const name of listNames(dir)) {
      if (!name.endsWith(".json") || name.startsWith(".")) continue;
      const info = lstatOrNull(`${dir}/${name}`);
      if (!info || !info.isFile) continue;
      const bytes = readBytesOrNull(`${dir}/${name}`);
      if (bytes !== null) addMentions(highest, bytes);
    }
  }
  return highest;
}

/** The cached record when it describes the folders as they are (`prints`), else null. */
function cachedRecord(paths: StorePaths, prints: string | null): MentionRecord | null {
  if (prints === null) return null;
  try {
    const doc = JSON.parse(Deno.readTextFileSync(cachePath(paths))) as {
      schema?: unknown;
      prints?: unknown;
      highest?: unknown;
    };
    if (doc?.schema !== CACHE_SCHEMA || doc.prints !== prints) return null;
    const highest = doc.highest;
    if (highest === null || typeof highest !== "object" || Array.isArray(highest)) return null;
    const out: Highest = Object.create(null);
    for (const [run, n] of Object.entries(highest)) {
      if (!/^R[0-9]{6}$/.test(run) || !Number.isInteger(n) || (n as number) < 1) return null;
      out[run] = n as number;
    }
    return { prints, highest: out };
  } catch {
    return null;
  }
}

function writeRecord(paths: StorePaths, record: MentionRecord): void {
  try {
    replaceDerived(
      cachePath(paths),
      JSON.stringify({ schema: CACHE_SCHEMA, prints: record.prints, highest: record.highest }) +
        "\n",
    );
  } catch {
    // Derived: a record that could not be written is stale and is re-read next time.
  }
}

/** The highest proposal number per run named in the two folders as they were read. */
export type ProposalMentions = {
  /** The folders' fingerprints when read, or null when either is not a real folder. */
  prints: string | null;
  highest: Highest;
  /** True when every file was read (the cache did not match): worth recording. */
  scanned: boolean;
};

/**
 * Every run's highest proposal number named in a conflict or resolution
 * file: from the cache when it matches the folders, else a full read. Writes
 * nothing (see `recordScannedMentions`).
 */
export function readProposalMentions(paths: StorePaths): ProposalMentions {
  const prints = foldersPrint(paths);
  const cached = cachedRecord(paths, prints);
  if (cached) return { prints, highest: cached.highest, scanned: false };
  return { prints, highest: scanMentions(paths), scanned: true };
}

/** The highest proposal number of `run` in `mentions` (0 for none). */
export function highestMentionOf(mentions: ProposalMentions, run: string): number {
  return mentions.highest[run] ?? 0;
}

/**
 * Records a full read for the next allocation, if the folders still have
 * the fingerprints it was made under. Call after the command's own durable
 * write succeeded (a refused command leaves every file as it was), under the
 * engine lock.
 */
export function recordScannedMentions(paths: StorePaths, mentions: ProposalMentions): void {
  if (!mentions.scanned || mentions.prints === null) return;
  if (foldersPrint(paths) !== mentions.prints) return;
  writeRecord(paths, { prints: mentions.prints, highest: mentions.highest });
}

/**
 * Runs `write`, which creates or replaces the conflict or resolution record
 * at `path`, and moves the cache along with it when the cache described the
 * folders right before. Call under the engine lock.
 */
export function trackMentions<T>(paths: StorePaths, path: string, write: () => T): T {
  const before = cachedRecord(paths, foldersPrint(paths));
  const result = write();
  if (before !== null) {
    const prints = foldersPrint(paths);
    const bytes = readBytesOrNull(path);
    if (prints !== null && bytes !== null) {
      addMentions(before.highest, bytes);
      writeRecord(paths, { prints, highest: before.highest });
    }
  }
  return result;
}
