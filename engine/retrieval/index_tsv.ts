/**
 * `.bimri/index.tsv`: the derived eight-column export of hot memory, cold
 * current memory, journal entries and archived generations (FORMATS section
 * 12). It is never read as authority: retrieval builds its results from the
 * head, the state, the archive and the decisions.
 */
import { parseAnyEntry } from "../model/hot.ts";
import type { MemoryEntry } from "../model/hot.ts";
import { compareCodePoints, pyStrip, sliceCodePoints, splitLines } from "../model/text.ts";
import { BimriError } from "../errors.ts";
import { atomicReplaceChunks, linkRefusal, listNames, lstatOrNull } from "../store/files.ts";
import type { Store } from "../store/store.ts";
import { historicalGenerations } from "./archive_read.ts";
import { readAllArchiveRecords, readArchiveMonths } from "../store/archive_month.ts";
import { refreshHistoryDigest } from "./history_digest.ts";
import { BulkReader, decodeUtf8Fast } from "../integrity/bulk_read.ts";

/** The header line of index.tsv. */
export const INDEX_HEADER = "id\tkey\tloc\ttrust\tsource\tstatus\tfile\theadline";

/** Headlines keep at most this many code points. */
export const HEADLINE_CHARS = 160;

/** One index row: id, key, loc, trust, source, status, file, headline. */
export type IndexRow = [string, string, string, string, string, string, string, string];

const LOG_ENTRY = /^\[ID:(R[0-9]+-E[0-9]+)\]/;
const LOG_FILE = /^R[0-9]+\.md$/;

/** A copy of `text` that shares no memory with the (larger) string it was cut from. */
function own(text: string): string {
  return (" " + text).slice(1);
}

function headline(text: string): string {
  return sliceCodePoints(text, HEADLINE_CHARS);
}

/** trust, source and status columns of a memory entry. */
function entryColumns(entry: MemoryEntry): [string, string, string] {
  if (entry.tier === 1) return [entry.trust, entry.source, entry.kind];
  if (entry.tier === 2) return [entry.trust, entry.source, entry.status];
  return ["", "", entry.confidence];
}

function readLogText(store: Store, name: string, reader: BulkReader): string {
  const path = `${store.paths.folder("log")}/${name}`;
  if (lstatOrNull(path)?.isSymlink) {
    throw new BimriError(
      "store-unsafe",
      linkRefusal(path, `run log ${name}`, "replace it with the regular file, then run doctor."),
    );
  }
  // One reused buffer for ten thousand logs: a fresh buffer per file leaves
  // megabytes of dead external memory that the collector frees late.
  const bytes = reader.read(path);
  if (bytes === null) return "";
  const text = decodeUtf8Fast(bytes);
  if (text === null) {
    throw new BimriError("store-corrupt", `run log ${name} is not valid UTF-8; run doctor.`);
  }
  return text;
}

/** Computes every index row (sorted by id, loc, file) from the store's authority. */
export function indexRows(store: Store): IndexRow[] {
  const reader = new BulkReader();
  const rows: IndexRow[] = [];
  for (const { entry } of store.head.view.entries) {
    const [trust, source, status] = entryColumns(entry);
    rows.push([
      entry.id,
      entry.key,
      `T${entry.tier}`,
      trust,
      source,
      status,
      "bimri.md",
      headline(entry.text),
    ]);
  }
  const cold = store.state.cold_current;
  for (const key of Object.keys(cold).sort()) {
    const entry = parseAnyEntry(cold[key].raw_line);
    if (!entry) continue;
    const [trust, source, status] = entryColumns(entry);
    rows.push([
      entry.id,
      key,
      "cold",
      trust,
      source,
      status,
      ".bimri/state.json",
      headline(entry.text),
    ]);
  }
  for (const name of listNames(store.paths.folder("log"))) {
    if (!LOG_FILE.test(name)) continue;
    const file = `.bimri/log/${name}`;
    for (const rawLine of splitLines(readLogText(store, name, reader))) {
      const line = pyStrip(rawLine);
      const match = LOG_ENTRY.exec(line);
      if (!match) continue;
      // Own copies: a slice would keep the whole log text alive until the export is written.
      rows.push([own(match[1]), "", "log", "", "", "detail", file, own(headline(line))]);
    }
  }
  const history = historicalGenerations(readAllArchiveRecords(store.paths), cold);
  for (const record of history) {
    const entry = parseAnyEntry(record.rawLine);
    if (!entry) continue;
    const [trust, source] = entryColumns(entry);
    rows.push([
      entry.id,
      entry.key,
      "archive",
      trust,
      source,
      record.reason,
      record.file,
      headline(record.rawLine),
    ]);
  }
  // Trimmed in place: a trimmed copy of thirty thousand rows doubled the peak.
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) row[i] = pyStrip(row[i]);
  }
  // Array.prototype.sort is stable, so rows with equal (id, loc, file) keep their order.
  return rows.sort((a, b) =>
    compareCodePoints(a[0], b[0]) || compareCodePoints(a[2], b[2]) ||
    compareCodePoints(a[6], b[6])
  );
}

/** The exact text of index.tsv for `rows`. */
export function renderIndex(rows: readonly IndexRow[]): string {
  return [...indexChunks(rows)].join("");
}

/** index.tsv for `rows` in pieces of about 64 KB, so a large export is never one string. */
export function* indexChunks(rows: readonly IndexRow[]): Generator<string> {
  let chunk = INDEX_HEADER + "\n";
  for (const row of rows) {
    chunk += row.join("\t") + "\n";
    if (chunk.length >= 65536) {
      yield chunk;
      chunk = "";
    }
  }
  if (chunk) yield chunk;
}

/**
 * Rebuilds `.bimri/index.tsv` from authority (atomic replace) and returns the
 * number of rows, header excluded. Call it under the engine lock.
 */
export function rebuildIndex(store: Store): number {
  const count = writeIndexFile(store);
  // The index rows are garbage by now; a digest pass over the archive (only
  // when the digest no longer vouches for it) does not add to their peak.
  refreshHistoryDigest(store.paths, () => readArchiveMonths(store.paths));
  return count;
}

function writeIndexFile(store: Store): number {
  if (lstatOrNull(store.paths.index)?.isSymlink) {
    throw new BimriError(
      "store-unsafe",
      linkRefusal(store.paths.index, ".bimri/index.tsv", "delete it and run index again."),
    );
  }
  const rows = indexRows(store);
  atomicReplaceChunks(store.paths.index, indexChunks(rows));
  return rows.length;
}
