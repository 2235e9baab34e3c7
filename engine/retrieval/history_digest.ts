/**
 * The derived history digest: what a task-language search needs from every
 * archive row, precomputed, so `recall --query` does not re-read and re-parse
 * months of archive on each call.
 *
 * `.bimri/audit-integrity-history.tsv` holds one line per `[ARCHIVED:` row:
 * where it is (month file, byte offset and length), its proposal, reason and
 * line hash (the generation identity), the entry's ID and key, the folded
 * length of each searchable field, and the folded searchable text (case-folded,
 * plus the NFC form when it differs). `.bimri/audit-integrity-history.json`
 * vouches for it: the digest's byte size and the lstat fingerprint of every
 * archive month file as the engine last left it.
 *
 * The engine extends both under the lock each time it appends an archive row
 * (appendArchive), but only when the month file still has the vouched
 * fingerprint; `index` and `maintain` rebuild them from the archive. A search
 * uses the digest only when every fingerprint and the size match; any other
 * change (another engine, an edit, a copy, a crash between the two appends)
 * makes it fall back to reading the archive, with identical results. It is
 * derived data: deleting it changes no answer. Like bimri's other
 * `audit-integrity-*` files, the reference engine ignores it.
 */
import { parseAnyEntry } from "../model/hot.ts";
import { decodeUtf8Strict, lineHash, pyStrip, utf8Length } from "../model/text.ts";
import {
  atomicReplace,
  COARSE_CLOCK_MS,
  fingerprint,
  isRacyPrint,
  listNames,
  lstatOrNull,
  readRangeOrNull,
} from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import type { Store } from "../store/store.ts";
import { entryRecord, parseStored, type RetrievalRecord, searchFieldsOf } from "./lookup.ts";
import { foldedLength, foldText, isAscii, type SearchFields } from "./tokenize.ts";
import { casefold } from "./casefold.ts";
import { reasonRank } from "./archive_read.ts";
import { type ArchiveRecord, OTHER_LINE_BREAKS, parseArchiveText } from "../model/archive_row.ts";
import { readArchiveMonths } from "../store/archive_month.ts";
import type { ColdRecord } from "../model/state.ts";
import { BimriError } from "../errors.ts";

const DIGEST_NAME = "audit-integrity-history.tsv";
const CHECKPOINT_NAME = "audit-integrity-history.json";
const SCHEMA = 3;

/** The searchable fields a digest line carries (reason and location are added at query time). */
export const DIGEST_FIELDS = ["key", "tags", "id", "text", "falsifier", "trust", "source"] as const;

// Columns of a digest line, tab-separated. The identity comes first at a
// fixed width and the folded text last, so a search reads both without
// splitting ten thousand lines into cells.
/** Generation identity: the first 128 bits (32 hex) of lineHash of the raw line. */
const LINE_KEY = 0;
// 1: the archive reason (read by digestReason, right after the fixed-width identity).
/** Archiving proposal ID. */
const PROPOSAL = 2;
/** A `cooled` row's raw-line check value (see coldCheck), else empty. */
const COLD_CHECK = 3;
/** Folded term counts of DIGEST_FIELDS, comma-separated. */
const LENGTHS = 4;
/** Month file name (`2026-12.md`). */
const MONTH = 5;
/** Byte offset of the row in its month file. */
const OFFSET = 6;
/** Byte length of the row (without its LF). */
const LENGTH = 7;
// 8: the case-folded searchable text; 9: its NFC-normalized fold when that differs, else empty.
// Each holds DIGEST_FIELDS in order, separated by FIELD_SEPARATOR when every field folds on its
// own into the fold of the whole and the key and ID can be read back from their folds; else by a
// space (a search then builds that row's record to score it).
/** Separates the fields of a folded text; no term holds it (nor, by check, any field). */
const FIELD_SEPARATOR = "\u001f";
const KEY_WIDTH = 32;

/**
 * A cheap check value of a raw line (length and a 64-bit FNV-1a), compared
 * with a cold binding's raw line to tell whether a cooled row is that
 * binding. Only rows archived by the binding's own proposal are compared.
 */
export function coldCheck(rawLine: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ rawLine.length;
  for (let i = 0; i < rawLine.length; i++) {
    const c = rawLine.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return `${rawLine.length}:${(a >>> 0).toString(16)}${(b >>> 0).toString(16)}`;
}

type Checkpoint = {
  schema: number;
  digest: string;
  rows: number;
  months: Record<string, string>;
};

function digestPath(paths: StorePaths): string {
  return paths.folder(DIGEST_NAME);
}

function checkpointPath(paths: StorePaths): string {
  return paths.folder(CHECKPOINT_NAME);
}

function readCheckpoint(paths: StorePaths): Checkpoint | null {
  try {
    const doc = JSON.parse(Deno.readTextFileSync(checkpointPath(paths))) as Checkpoint;
    if (doc?.schema !== SCHEMA || typeof doc.months !== "object" || doc.months === null) {
      return null;
    }
    return typeof doc.digest === "string" && Number.isInteger(doc.rows) ? doc : null;
  } catch {
    return null;
  }
}

/** Forgets the digest (it no longer describes the archive; searches read the archive). */
export function forgetHistoryDigest(paths: StorePaths): void {
  for (const path of [checkpointPath(paths), digestPath(paths)]) {
    try {
      Deno.removeSync(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
}

function printOf(path: string): string | null {
  const info = lstatOrNull(path);
  return info === null ? null : fingerprint(info);
}

function monthNames(paths: StorePaths): string[] {
  return listNames(paths.folder("archive")).filter((name) => name.endsWith(".md"));
}

/** Searchable values of one archive row's entry, as the search's fields hold them. */
function rowFields(rawLine: string, reason: string): SearchFields | null {
  const entry = parseAnyEntry(rawLine);
  return entry === null ? null : searchFieldsOf(entryRecord(entry, "HISTORY", reason));
}

/** The digest line of one row, or null when its raw line is not a memory line. */
function digestLine(
  month: string,
  offset: number,
  length: number,
  proposalId: string,
  reason: string,
  rawLine: string,
): string | null {
  const fields = rowFields(rawLine, reason);
  if (fields === null) return null;
  const values = DIGEST_FIELDS.map((name) => fields[name]);
  const joined = values.join("\n");
  const plain = casefold(joined);
  const normalized = isAscii(joined) ? "" : foldText(joined);
  // A tab or LF is a separator to the search as much as a space is, and no
  // term holds one, so flattening them keeps every match.
  const flat = (text: string) => text.replace(/[\t\n\r]/g, " ");
  return [
    lineHash(rawLine).slice(0, KEY_WIDTH),
    reason,
    proposalId,
    reason === "cooled" ? coldCheck(rawLine) : "",
    values.map(foldedLength).join(","),
    month,
    offset,
    length,
    ...fieldwiseFolds(fields, values, plain, normalized),
  ].map((cell) => flat(String(cell))).join("\t");
}

/**
 * The two folded texts with FIELD_SEPARATOR between the fields, when that
 * layout is exact: folding each field on its own gives the fold of the whole,
 * and the key and ID are their own folds (the ID upper-cased), so a search can
 * count terms per field and order rows without parsing them. Else the folds
 * as they are, whose fields a search cannot tell apart.
 */
function fieldwiseFolds(
  fields: SearchFields,
  values: readonly string[],
  plain: string,
  normalized: string,
): [string, string] {
  const separate = (fold: (text: string) => string, whole: string): string | null => {
    const parts = values.map(fold);
    return parts.join("\n") === whole ? parts.join(FIELD_SEPARATOR) : null;
  };
  const exact = !values.some((value) => value.includes(FIELD_SEPARATOR)) &&
    casefold(fields.key) === fields.key && casefold(fields.id).toUpperCase() === fields.id;
  const fieldPlain = exact ? separate(casefold, plain) : null;
  const fieldNormalized = normalized === "" ? "" : exact ? separate(foldText, normalized) : null;
  return fieldPlain === null || fieldNormalized === null
    ? [plain, normalized]
    : [fieldPlain, fieldNormalized];
}

/**
 * Extends the digest with a row the engine has just appended to `month` (a
 * month file name), given the month file's lstat from before the append and
 * the row's byte offset. Call under the engine lock, after the append. When
 * the digest does not vouch for that month as it was, it is dropped instead.
 */
export function recordArchivedRow(
  paths: StorePaths,
  month: string,
  before: Deno.FileInfo | null,
  row: { offset: number; length: number; proposalId: string; reason: string; rawLine: string },
): void {
  let checkpoint = readCheckpoint(paths);
  const digestInfo = lstatOrNull(digestPath(paths));
  let digestPrint = digestInfo === null ? null : fingerprint(digestInfo);
  if (checkpoint === null && digestInfo === null && before === null) {
    // A store whose archive starts now: an empty digest describes it exactly.
    const others = monthNames(paths).filter((name) => name !== month);
    if (others.length === 0) {
      atomicReplace(digestPath(paths), "");
      digestPrint = printOf(digestPath(paths));
      checkpoint = { schema: SCHEMA, digest: digestPrint ?? "", rows: 0, months: {} };
    }
  }
  const rawLine = pyStrip(row.rawLine);
  const vouched = checkpoint !== null && digestPrint !== null &&
    checkpoint.digest === digestPrint &&
    checkpoint.months[month] === (before === null ? undefined : fingerprint(before));
  const line = vouched
    ? digestLine(month, row.offset, row.length, row.proposalId, row.reason, rawLine)
    : null;
  const after = lstatOrNull(paths.archiveMonth(month.slice(0, -3)));
  if (checkpoint === null || line === null || after === null) {
    forgetHistoryDigest(paths);
    return;
  }
  const bytes = new TextEncoder().encode(line + "\n");
  const file = Deno.openSync(digestPath(paths), { append: true, create: true });
  try {
    let written = 0;
    while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
  } finally {
    file.close();
  }
  checkpoint.months[month] = fingerprint(after);
  checkpoint.rows += 1;
  checkpoint.digest = printOf(digestPath(paths)) ?? "";
  atomicReplace(checkpointPath(paths), JSON.stringify(checkpoint) + "\n");
}

/**
 * Rebuilds the digest from the archive month texts (already read and
 * validated by the caller, in name order). Call under the engine lock. A
 * month with line breaks other than LF is left to the full read.
 */
export function rebuildHistoryDigest(
  paths: StorePaths,
  months: readonly { name: string; text: string; info: Deno.FileInfo }[],
): void {
  const lines: string[] = [];
  const prints: Record<string, string> = {};
  for (const { name, text, info } of months) {
    if (OTHER_LINE_BREAKS.test(text)) {
      forgetHistoryDigest(paths);
      return;
    }
    prints[name] = fingerprint(info);
    let offset = 0;
    for (const line of text.split("\n")) {
      const length = isAscii(line) ? line.length : utf8Length(line);
      // The reader's own parser, so the digest holds exactly the rows a full read finds.
      for (const row of parseArchiveText(line, `.bimri/archive/${name}`)) {
        const digest = digestLine(name, offset, length, row.proposalId, row.reason, row.rawLine);
        if (digest === null) {
          forgetHistoryDigest(paths);
          return;
        }
        lines.push(digest);
      }
      offset += length + 1;
    }
  }
  const text = lines.map((line) => line + "\n").join("");
  if (alreadyVouched(paths, prints, text)) return; // an idempotent rebuild writes nothing
  atomicReplace(digestPath(paths), text);
  const checkpoint: Checkpoint = {
    schema: SCHEMA,
    digest: printOf(digestPath(paths)) ?? "",
    rows: lines.length,
    months: prints,
  };
  atomicReplace(checkpointPath(paths), JSON.stringify(checkpoint) + "\n");
}

/** True when the checkpoint vouches for exactly these month prints and the digest holds `text`. */
function alreadyVouched(paths: StorePaths, prints: Record<string, string>, text: string): boolean {
  const checkpoint = readCheckpoint(paths);
  if (checkpoint === null || checkpoint.digest !== printOf(digestPath(paths))) return false;
  const names = Object.keys(prints);
  if (names.length !== Object.keys(checkpoint.months).length) return false;
  if (names.some((name) => checkpoint.months[name] !== prints[name])) return false;
  try {
    return Deno.readTextFileSync(digestPath(paths)) === text;
  } catch {
    return false;
  }
}

/**
 * The checkpoint when it vouches for every archive month file as it is now
 * (same names, same lstat fingerprints) and for the digest file itself, else null.
 */
function vouchingCheckpoint(
  paths: StorePaths,
  names: readonly string[] = monthNames(paths),
): Checkpoint | null {
  const checkpoint = readCheckpoint(paths);
  if (checkpoint === null) return null;
  if (names.length !== Object.keys(checkpoint.months).length) return null;
  for (const name of names) {
    const info = lstatOrNull(`${paths.folder("archive")}/${name}`);
    if (info === null || checkpoint.months[name] !== fingerprint(info)) return null;
  }
  const info = lstatOrNull(digestPath(paths));
  return info !== null && info.isFile && fingerprint(info) === checkpoint.digest
    ? checkpoint
    : null;
}

/**
 * Rebuilds the digest unless it already vouches for the archive as it is
 * (then a rebuild would write the same bytes: the engine's appends and the
 * rebuild produce identical lines). `readMonths` is called only to rebuild.
 */
export function refreshHistoryDigest(
  paths: StorePaths,
  readMonths: () => { name: string; text: string; info: Deno.FileInfo }[],
): void {
  if (vouchingCheckpoint(paths) === null) rebuildHistoryDigest(paths, readMonths());
}

/**
 * True when a rebuilt digest would vouch for the archive but the current one
 * does not: there is an archive, the checkpoint no longer matches it (a copy
 * or clone gives every file a new inode; another engine or an editor appends
 * or changes rows), and no month file changed so recently that its print is
 * racy (then no checkpoint could vouch for it yet). A few lstat calls.
 */
function historyDigestIsStale(paths: StorePaths): boolean {
  const names = monthNames(paths);
  if (names.length === 0 || vouchingCheckpoint(paths, names) !== null) return false;
  return names.every((name) => {
    const print = printOf(`${paths.folder("archive")}/${name}`);
    return print !== null && !isRacyPrint(print);
  });
}

/**
 * Rebuilds the digest when it no longer vouches for the archive (see
 * `historyDigestIsStale`), so one `close` pays the archive read that every
 * `recall --query` would otherwise pay until the next `index`. Call under the
 * engine lock, after the command's durable steps. Derived data only: a month
 * that cannot be read, a full disk or any other failure leaves the digest
 * stale and the caller unaffected.
 */
export function renewStaleHistoryDigest(paths: StorePaths): void {
  try {
    if (historyDigestIsStale(paths)) rebuildHistoryDigest(paths, readArchiveMonths(paths));
  } catch {
    // Searches read the archive itself until a later close or index succeeds.
  }
}

/** The digest as read: its text, where each line starts, and the rows in archive order. */
export type LoadedDigest = {
  text: string;
  /** Start offset of each line; one more entry, the text's length, closes the last. */
  starts: number[];
  /** Row numbers in archive order (months by name, rows by offset). */
  order: number[];
};

/**
 * The digest, or null when it does not vouch for the archive as it is now
 * (the search then reads the archive itself).
 */
export function loadHistoryDigest(paths: StorePaths): LoadedDigest | null {
  const checkpoint = vouchingCheckpoint(paths);
  if (checkpoint === null) return null;
  const path = digestPath(paths);
  if (lastLoaded?.path === path && lastLoaded.print === checkpoint.digest) return lastLoaded.digest;
  const info = lstatOrNull(path);
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return null;
  }
  const digest = parseDigest(text, checkpoint);
  // A long-lived process (bimri mcp) keeps the digest it read while its print
  // still names it, sparing each search a multi-megabyte read. Only a print
  // whose change time lies a whole coarse-clock window back: any later edit
  // then gets a later change time, hence another print.
  const settled = info !== null && fingerprint(info) === checkpoint.digest &&
    Date.now() - (info.ctime?.getTime() ?? Infinity) >= COARSE_CLOCK_MS;
  lastLoaded = digest !== null && settled ? { path, print: checkpoint.digest, digest } : null;
  return digest;
}

/** The digest this process last read, with the print that vouched for it (see loadHistoryDigest). */
let lastLoaded: { path: string; print: string; digest: LoadedDigest } | null = null;

/** The digest text split into rows, or null when it does not hold the checkpoint's rows. */
function parseDigest(text: string, checkpoint: Checkpoint): LoadedDigest | null {
  const starts: number[] = [];
  for (let at = 0; at < text.length;) {
    starts.push(at);
    const newline = text.indexOf("\n", at);
    if (newline === -1) return null; // every line ends with LF
    at = newline + 1;
  }
  if (starts.length !== checkpoint.rows) return null;
  starts.push(text.length);
  const digest: LoadedDigest = { text, starts, order: [] };
  // Appends interleave months only across a month boundary; rows within a month are in offset order.
  let sorted = true;
  let previous = "";
  for (let row = 0; row < checkpoint.rows; row++) {
    const month = cell(digest, row, MONTH);
    if (month < previous) sorted = false;
    previous = month;
    digest.order.push(row);
  }
  if (!sorted) {
    digest.order.sort((a, b) => {
      const ma = cell(digest, a, MONTH);
      const mb = cell(digest, b, MONTH);
      return ma < mb
        ? -1
        : ma > mb
        ? 1
        : Number(cell(digest, a, OFFSET)) - Number(cell(digest, b, OFFSET));
    });
  }
  return digest;
}

/** One cell of a row (columns before the folded text). */
function cell(digest: LoadedDigest, row: number, column: number): string {
  let start = digest.starts[row];
  if (column === LINE_KEY) return digest.text.slice(start, start + KEY_WIDTH);
  for (let c = 0; c < column; c++) start = digest.text.indexOf("\t", start) + 1;
  return digest.text.slice(start, digest.text.indexOf("\t", start));
}

/** The archive reason of a row. */
export function digestReason(digest: LoadedDigest, row: number): string {
  const start = digest.starts[row] + KEY_WIDTH + 1;
  return digest.text.slice(start, digest.text.indexOf("\t", start));
}

/** Adds a row's folded term counts of DIGEST_FIELDS to `sums` (read in place, no split). */
export function addDigestLengths(digest: LoadedDigest, row: number, sums: number[]): void {
  const { text } = digest;
  let at = digest.starts[row];
  for (let c = 0; c < LENGTHS; c++) at = text.indexOf("\t", at) + 1;
  let field = 0;
  let value = 0;
  for (;; at++) {
    const code = text.charCodeAt(at);
    if (code >= 0x30 && code <= 0x39) {
      value = value * 10 + code - 0x30;
      continue;
    }
    sums[field] += value;
    if (code !== 0x2c) return; // the tab after the last count
    field++;
    value = 0;
  }
}

/** Where each field of the folded text in [start, end) ends, or null when it is not laid out by field. */
function fieldEnds(text: string, start: number, end: number): number[] | null {
  const ends: number[] = [];
  for (let at = text.indexOf(FIELD_SEPARATOR, start); at !== -1 && at < end;) {
    ends.push(at);
    at = text.indexOf(FIELD_SEPARATOR, at + 1);
  }
  if (ends.length !== DIGEST_FIELDS.length - 1) return null;
  ends.push(end);
  return ends;
}

/** Start and end of a row's two folded texts (the normalized one empty when it is the plain one). */
function foldedTexts(digest: LoadedDigest, row: number) {
  const { text, starts } = digest;
  const lineEnd = starts[row + 1] - 1;
  const normalizedStart = text.lastIndexOf("\t", lineEnd - 1) + 1;
  const plainStart = text.lastIndexOf("\t", normalizedStart - 2) + 1;
  return { plainStart, plainEnd: normalizedStart - 1, normalizedStart, lineEnd };
}

/**
 * The entry key and ID of a row as written (what the output order compares),
 * read back from its folded fields, or null when the row is not laid out by field.
 */
export function digestKeyAndId(
  digest: LoadedDigest,
  row: number,
): { key: string; id: string } | null {
  const { plainStart, plainEnd } = foldedTexts(digest, row);
  const ends = fieldEnds(digest.text, plainStart, plainEnd);
  if (ends === null) return null;
  const id = DIGEST_FIELDS.indexOf("id");
  return {
    key: digest.text.slice(plainStart, ends[0]),
    id: digest.text.slice(ends[id - 1] + 1, ends[id]).toUpperCase(),
  };
}

/** Row numbers of the historical generations, in archive order (the rule of historicalGenerations). */
export function digestGenerations(
  digest: LoadedDigest,
  coldCurrent: Record<string, ColdRecord>,
): number[] {
  // A cooled row that is exactly a current cold binding is current, not history.
  const currentCold = new Set(
    Object.values(coldCurrent).map((cold) => `${cold.archived_by}\n${coldCheck(cold.raw_line)}`),
  );
  const byLine = new Map<string, number>();
  const ranks = new Int8Array(digest.starts.length);
  for (const row of digest.order) {
    const reason = digestReason(digest, row);
    if (reason === "cooled") {
      const binding = `${cell(digest, row, PROPOSAL)}\n${cell(digest, row, COLD_CHECK)}`;
      if (currentCold.has(binding)) continue;
    }
    ranks[row] = reasonRank(reason);
    const start = digest.starts[row];
    const key = digest.text.slice(start, start + KEY_WIDTH);
    const existing = byLine.get(key);
    if (existing === undefined || ranks[row] > ranks[existing]) byLine.set(key, row);
  }
  return [...byLine.values()];
}

/**
 * Which rows hold `term` in their folded searchable text: one native scan of
 * the whole digest instead of a test per row. Occurrences in the leading
 * cells (IDs, offsets, counts) do not count.
 */
export function digestHits(digest: LoadedDigest, term: string): Uint8Array {
  const { text, starts } = digest;
  const rows = starts.length - 1;
  const hits = new Uint8Array(rows);
  let row = 0;
  let at = text.indexOf(term);
  while (at !== -1) {
    while (starts[row + 1] <= at) row++;
    const lineEnd = starts[row + 1] - 1;
    const normalizedStart = text.lastIndexOf("\t", lineEnd - 1) + 1;
    const plainStart = text.lastIndexOf("\t", normalizedStart - 2) + 1;
    if (at >= plainStart && at + term.length <= lineEnd) {
      hits[row] = 1;
      if (row + 1 >= rows) break;
      at = text.indexOf(term, starts[row + 1]);
    } else {
      at = text.indexOf(term, at + 1);
    }
  }
  return hits;
}

/**
 * The archive row a digest row points at, read back (its bytes only, not its
 * month) and checked against the digest's proposal and reason (a row that no
 * longer matches means the archive changed underneath). Its line hash is
 * checked by `confirmDigestRow`, for the rows that will be printed: a search
 * scores every matching row but prints only a few.
 */
export function readDigestRow(paths: StorePaths, digest: LoadedDigest, row: number): ArchiveRecord {
  const month = cell(digest, row, MONTH);
  const bytes = readRangeOrNull(
    `${paths.folder("archive")}/${month}`,
    Number(cell(digest, row, OFFSET)),
    Number(cell(digest, row, LENGTH)),
  ) ?? new Uint8Array();
  const line = decodeUtf8Strict(bytes);
  const found = line === null ? [] : parseArchiveText(line, `.bimri/archive/${month}`);
  if (
    found.length !== 1 || found[0].proposalId !== cell(digest, row, PROPOSAL) ||
    found[0].reason !== digestReason(digest, row)
  ) {
    throw archiveChanged();
  }
  return found[0];
}

/** Throws unless `record` (read by `readDigestRow`) has the line hash the digest row names. */
export function confirmDigestRow(digest: LoadedDigest, row: number, record: ArchiveRecord): void {
  if (!lineHash(record.rawLine).startsWith(cell(digest, row, LINE_KEY))) throw archiveChanged();
}

function archiveChanged(): BimriError {
  return new BimriError(
    "store-corrupt",
    "the archive changed while it was searched; run the search again, or run index if this repeats.",
  );
}

/**
 * Where a row's searchable fold lies, as relevance search scans it: the NFC
 * fold when the row has one, else the plain fold (`start`, `end`), with the
 * end of each of DIGEST_FIELDS (null when the row is not laid out by field),
 * and the span of both folds (`foldStart`, `foldEnd`), where the default mode
 * looks for its terms.
 */
export function digestFoldRegion(
  digest: LoadedDigest,
  row: number,
): { start: number; end: number; ends: number[] | null; foldStart: number; foldEnd: number } {
  const { plainStart, plainEnd, normalizedStart, lineEnd } = foldedTexts(digest, row);
  const [start, end] = normalizedStart < lineEnd
    ? [normalizedStart, lineEnd]
    : [plainStart, plainEnd];
  return {
    start,
    end,
    ends: fieldEnds(digest.text, start, end),
    foldStart: plainStart,
    foldEnd: lineEnd,
  };
}

/**
 * The printed record of a digest row, read back from its month file and
 * checked against the digest (throws when the archive changed underneath).
 */
export function digestRecord(store: Store, digest: LoadedDigest, row: number): RetrievalRecord {
  const archived = readDigestRow(store.paths, digest, row);
  const entry = parseStored(archived.rawLine, `archive record in ${archived.file}`);
  confirmDigestRow(digest, row, archived);
  return entryRecord(entry, "HISTORY", archived.reason);
}
