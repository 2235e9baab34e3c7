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
import { fingerprint } from "../integrity/summary.ts";
import { atomicReplace, listNames, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { entryRecord, type RetrievalRecord } from "./records.ts";
import { foldedLength, type SearchFields } from "./ranking.ts";
import { foldText, isAscii } from "./tokenize.ts";
import { casefold } from "./casefold.ts";
import { type ArchiveRecord, parseArchiveText, reasonRank } from "./archive_read.ts";
import type { ColdRecord } from "../model/state.ts";
import { BimriError } from "../errors.ts";

const DIGEST_NAME = "audit-integrity-history.tsv";
const CHECKPOINT_NAME = "audit-integrity-history.json";
const SCHEMA = 1;

/** The searchable fields a digest line carries (reason and location are added at query time). */
export const DIGEST_FIELDS = ["key", "tags", "id", "text", "falsifier", "trust", "source"] as const;

/**
 * One archive row as the digest describes it: the tab-separated cells of its
 * digest line, read through the column constants below. Kept as the split
 * line, because a search over ten thousand rows reads only a few cells of each.
 */
export type DigestRow = readonly string[];

/** Column of the month file name (`2026-12.md`). */
export const MONTH = 0;
/** Column of the row's byte offset in its month file. */
export const OFFSET = 1;
/** Column of the row's byte length (without its LF). */
export const LENGTH = 2;
/** Column of the archiving proposal ID. */
export const PROPOSAL = 3;
/** Column of the archive reason. */
export const REASON = 4;
/** Column of the generation identity: the first 128 bits of lineHash of the raw line. */
export const LINE_KEY = 5;
/** Column of a `cooled` row's raw-line check value (see coldCheck), else empty. */
export const COLD_CHECK = 6;
/** Column of the folded term counts of DIGEST_FIELDS, comma-separated. */
export const LENGTHS = 7;
/** Column of the case-folded searchable text. */
export const PLAIN = 8;
/** Column of the NFC-normalized fold when it differs, else empty. */
export const NORMALIZED = 9;
const COLUMNS = 10;

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

type Checkpoint = { schema: number; digest: string; months: Record<string, string> };

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
    return typeof doc.digest === "string" ? doc : null;
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
  if (entry === null) return null;
  const record: RetrievalRecord = entryRecord(entry, "HISTORY", reason);
  return {
    key: record.key,
    tags: record.tags.join(" "),
    id: record.id,
    text: record.text,
    falsifier: record.falsifier,
    reason: record.reason,
    location: record.location,
    trust: record.trust,
    source: record.source,
  };
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
    month,
    offset,
    length,
    proposalId,
    reason,
    lineHash(rawLine).slice(0, 32),
    reason === "cooled" ? coldCheck(rawLine) : "",
    values.map(foldedLength).join(","),
    flat(plain),
    flat(normalized),
  ].join("\t");
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
      checkpoint = { schema: SCHEMA, digest: digestPrint ?? "", months: {} };
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

// Python's splitlines() also breaks at these; offsets here count LF-separated lines.
// deno-lint-ignore no-control-regex
const OTHER_LINE_BREAKS = /[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/**
 * True when the checkpoint vouches for every archive month file as it is now
 * (same names, same lstat fingerprints) and for the digest file itself.
 */
function digestVouchesForArchive(paths: StorePaths): boolean {
  const checkpoint = readCheckpoint(paths);
  if (checkpoint === null) return false;
  const names = monthNames(paths);
  if (names.length !== Object.keys(checkpoint.months).length) return false;
  for (const name of names) {
    const info = lstatOrNull(`${paths.folder("archive")}/${name}`);
    if (info === null || checkpoint.months[name] !== fingerprint(info)) return false;
  }
  const info = lstatOrNull(digestPath(paths));
  return info !== null && info.isFile && fingerprint(info) === checkpoint.digest;
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
  if (!digestVouchesForArchive(paths)) rebuildHistoryDigest(paths, readMonths());
}

/**
 * The digest rows in archive order (months by name, rows by offset), or null
 * when the digest does not vouch for the archive as it is now.
 */
export function loadHistoryDigest(paths: StorePaths): DigestRow[] | null {
  if (!digestVouchesForArchive(paths)) return null;
  let text: string;
  try {
    text = Deno.readTextFileSync(digestPath(paths));
  } catch {
    return null;
  }
  const rows: DigestRow[] = [];
  let sorted = true;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const row = line.split("\t");
    if (row.length !== COLUMNS) return null;
    const last = rows.length > 0 ? rows[rows.length - 1] : null;
    if (last !== null && compareRowOrder(last, row) > 0) sorted = false;
    rows.push(row);
  }
  // Appends interleave months at a month boundary; the archive order is by month, then offset.
  return sorted ? rows : rows.sort(compareRowOrder);
}

function compareRowOrder(a: DigestRow, b: DigestRow): number {
  return a[MONTH] < b[MONTH] ? -1 : a[MONTH] > b[MONTH] ? 1 : Number(a[OFFSET]) - Number(b[OFFSET]);
}

/** The folded term counts of DIGEST_FIELDS for one row. */
export function digestLengths(row: DigestRow): number[] {
  return row[LENGTHS].split(",").map(Number);
}

/** The digest rows that are historical generations (the rule of historicalGenerations). */
export function digestGenerations(
  rows: readonly DigestRow[],
  coldCurrent: Record<string, ColdRecord>,
): DigestRow[] {
  // A cooled row that is exactly a current cold binding is current, not history.
  const currentCold = new Set(
    Object.values(coldCurrent).map((cold) => `${cold.archived_by}\n${coldCheck(cold.raw_line)}`),
  );
  const byLine = new Map<string, DigestRow>();
  for (const row of rows) {
    if (row[REASON] === "cooled" && currentCold.has(`${row[PROPOSAL]}\n${row[COLD_CHECK]}`)) {
      continue;
    }
    const existing = byLine.get(row[LINE_KEY]);
    if (existing === undefined || reasonRank(row[REASON]) > reasonRank(existing[REASON])) {
      byLine.set(row[LINE_KEY], row);
    }
  }
  return [...byLine.values()];
}

/**
 * The archive row a digest row points at, read back and checked against the
 * digest (a row that no longer matches means the archive changed underneath).
 */
export function readDigestRow(
  paths: StorePaths,
  row: DigestRow,
  months: Map<string, Uint8Array>,
): ArchiveRecord {
  let bytes = months.get(row[MONTH]);
  if (bytes === undefined) {
    bytes = readBytesOrNull(`${paths.folder("archive")}/${row[MONTH]}`) ?? new Uint8Array();
    months.set(row[MONTH], bytes);
  }
  const offset = Number(row[OFFSET]);
  const line = decodeUtf8Strict(bytes.subarray(offset, offset + Number(row[LENGTH])));
  const found = line === null ? [] : parseArchiveText(line, `.bimri/archive/${row[MONTH]}`);
  if (
    found.length !== 1 || found[0].proposalId !== row[PROPOSAL] ||
    found[0].reason !== row[REASON] || !lineHash(found[0].rawLine).startsWith(row[LINE_KEY])
  ) {
    throw new BimriError(
      "store-corrupt",
      "the archive changed while it was searched; run the search again, or run index if this repeats.",
    );
  }
  return found[0];
}
