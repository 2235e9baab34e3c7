/**
 * Reading the append-only archive month files for retrieval and the index:
 * every record of every month (history), one month for a cold binding, and
 * the reference's rule for collapsing repeated generations.
 */
import { isV4ArchiveRow } from "../model/archive_row.ts";
import { BimriError } from "../errors.ts";
import type { ColdRecord } from "../model/state.ts";
import { decodeUtf8Strict, pyStrip, splitLines } from "../model/text.ts";
import { listNames, lstatOrNull, readBytesOrNull, readLinesContaining } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { linkRefusal } from "../store/link_kind.ts";

/** One `[ARCHIVED:…]` row. */
export type ArchiveRecord = {
  date: string;
  proposalId: string;
  reason: string;
  rawLine: string;
  /** Store-relative path of the month file, e.g. `.bimri/archive/2026-12.md`. */
  file: string;
};

const RECORD =
  /^\[ARCHIVED:([0-9]{4}-[0-9]{2}-[0-9]{2})\] \[BY:(R[0-9]{6}-Q[0-9]{3})\] \[([^\]\r\n]+)\] (.+)$/;

const MONTH_FILE = /^[0-9]{4}-[0-9]{2}\.md$/;

function refuseLinkedMonth(path: string, name: string): void {
  if (lstatOrNull(path)?.isSymlink) {
    throw new BimriError(
      "store-unsafe",
      linkRefusal(
        path,
        `archive file ${name}`,
        "replace it with the regular file, then run doctor.",
      ),
    );
  }
}

function notUtf8(name: string): BimriError {
  return new BimriError("store-corrupt", `archive file ${name} is not valid UTF-8; run doctor.`);
}

function readMonthText(paths: StorePaths, name: string): string {
  const path = `${paths.folder("archive")}/${name}`;
  refuseLinkedMonth(path, name);
  const bytes = readBytesOrNull(path);
  if (bytes === null) return "";
  const text = decodeUtf8Strict(bytes);
  if (text === null) throw notUtf8(name);
  return text;
}

/** Parses the `[ARCHIVED:` rows of one month file's text (other lines are ignored). */
export function parseArchiveText(text: string, file: string): ArchiveRecord[] {
  const records: ArchiveRecord[] = [];
  linesOf(text).forEach((line, index) => {
    if (!line.startsWith("[ARCHIVED:") || isV4ArchiveRow(line)) return;
    const match = RECORD.exec(line);
    const reason = match ? pyStrip(match[3]) : "";
    const rawLine = match ? pyStrip(match[4]) : "";
    if (!match || reason === "" || rawLine === "") {
      throw new BimriError(
        "store-corrupt",
        `archive record ${file}:${index + 1} is malformed; run doctor.`,
      );
    }
    records.push({ date: match[1], proposalId: match[2], reason, rawLine, file });
  });
  return records;
}

/** Line breaks Python's splitlines() honours besides LF; a month written by the engine has none. */
// deno-lint-ignore no-control-regex
export const OTHER_LINE_BREAKS = /[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/** The lines of `text` as Python's splitlines() gives them, by a plain LF split when that is the same. */
function linesOf(text: string): string[] {
  if (OTHER_LINE_BREAKS.test(text)) return splitLines(text);
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Every archive month file (name order) with its validated text and lstat. */
export function readArchiveMonths(
  paths: StorePaths,
): { name: string; text: string; info: Deno.FileInfo }[] {
  const months: { name: string; text: string; info: Deno.FileInfo }[] = [];
  for (const name of listNames(paths.folder("archive"))) {
    if (!name.endsWith(".md")) continue;
    const info = lstatOrNull(`${paths.folder("archive")}/${name}`);
    const text = readMonthText(paths, name);
    if (info !== null) months.push({ name, text, info });
  }
  return months;
}

/** Every archive record, month files in name order, rows in file order. */
export function readAllArchiveRecords(paths: StorePaths): ArchiveRecord[] {
  return readArchiveMonths(paths).flatMap(({ name, text }) =>
    parseArchiveText(text, `.bimri/archive/${name}`)
  );
}

function unboundCold(key: string, month: string): BimriError {
  return new BimriError(
    "store-corrupt",
    `cold-current subject ${key} is not bound to exactly one immutable cooled archive record in .bimri/archive/${month}; run doctor.`,
  );
}

/**
 * Proves one cold-current record against only its own archive month: exactly
 * one `cooled` row by `archived_by` with the identical raw line must exist.
 */
export function verifyColdBinding(paths: StorePaths, key: string, cold: ColdRecord): void {
  const name = `${cold.archived_on.slice(0, 7)}.md`;
  const broken = () => unboundCold(key, name);
  if (!MONTH_FILE.test(name)) throw broken();
  const path = `${paths.folder("archive")}/${name}`;
  refuseLinkedMonth(path, name);
  const lines = readLinesContaining(path, `[BY:${cold.archived_by}] `);
  if (lines === "invalid-utf8") throw notUtf8(name);
  const records = parseArchiveText((lines ?? []).join("\n"), `.bimri/archive/${name}`);
  const exact = records.filter((r) =>
    r.proposalId === cold.archived_by && r.reason === "cooled" && r.rawLine === cold.raw_line
  );
  if (exact.length !== 1) throw broken();
}

/**
 * Proves every cold-current record as `verifyColdBinding` proves one, reading
 * each archive month the records name once.
 */
export function verifyColdBindings(paths: StorePaths, cold: Record<string, ColdRecord>): void {
  const byMonth = new Map<string, [string, ColdRecord][]>();
  for (const [key, record] of Object.entries(cold)) {
    const name = `${record.archived_on.slice(0, 7)}.md`;
    byMonth.set(name, [...(byMonth.get(name) ?? []), [key, record]]);
  }
  for (const [name, records] of byMonth) {
    const broken = (key: string) => unboundCold(key, name);
    if (!MONTH_FILE.test(name)) throw broken(records[0][0]);
    const rows = new Map<string, number>();
    for (const row of parseArchiveText(readMonthText(paths, name), `.bimri/archive/${name}`)) {
      if (row.reason !== "cooled") continue;
      const id = `${row.proposalId} ${row.rawLine}`;
      rows.set(id, (rows.get(id) ?? 0) + 1);
    }
    for (const [key, record] of records) {
      if (rows.get(`${record.archived_by} ${record.raw_line}`) !== 1) throw broken(key);
    }
  }
}

const REASON_RANK: Record<string, number> = { cooled: 0, replaced: 1, closed: 2 };

/** Rank of an archive reason when generations collapse: closed > replaced > cooled; others as replaced. */
export function reasonRank(reason: string): number {
  return Object.hasOwn(REASON_RANK, reason) ? REASON_RANK[reason] : 1;
}

/**
 * Historical generations: one record per distinct raw line, keeping the row
 * with the highest reason rank (closed > replaced > cooled; unknown counts as
 * replaced; the first row wins a tie), and leaving out the rows that are
 * exactly a current cold binding. Order: first appearance.
 */
export function historicalGenerations(
  records: readonly ArchiveRecord[],
  coldCurrent: Record<string, ColdRecord>,
): ArchiveRecord[] {
  const currentCold = new Set(
    Object.values(coldCurrent).map((c) => `${c.archived_by}\n${c.raw_line}`),
  );
  const byLine = new Map<string, ArchiveRecord>();
  for (const record of records) {
    if (record.reason === "cooled" && currentCold.has(`${record.proposalId}\n${record.rawLine}`)) {
      continue;
    }
    const existing = byLine.get(record.rawLine);
    if (
      existing === undefined ||
      reasonRank(record.reason) > reasonRank(existing.reason)
    ) {
      byLine.set(record.rawLine, record);
    }
  }
  return [...byLine.values()];
}
