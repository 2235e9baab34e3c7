/**
 * Archive month files (`.bimri/archive/YYYY-MM.md`): append-only rows
 * `[ARCHIVED:<date>] [BY:<proposal>] [<reason>] <raw line>` recording
 * replaced, closed and cooled generations. Appends are idempotent so a
 * re-applied commit never duplicates a row. Only the month files a caller
 * names are read, never the whole archive.
 */
import { BimriError } from "../errors.ts";
import { localDate, now } from "../model/time.ts";
import { appendLine, lstatOrNull, readTextOrNull, refuseSymlink } from "../store/files.ts";
import { linesContaining, utf8Length } from "../model/text.ts";
import { forgetHistoryDigest, recordArchivedRow } from "../retrieval/history_digest.ts";
import type { StorePaths } from "../store/paths.ts";
import { type ArchiveRow, isV4ArchiveRow, parseArchiveRow } from "../model/archive_row.ts";

/** Archive reasons written by 5.1 commits. */
export type ArchiveReason = "replaced" | "closed" | "cooled";

/**
 * The rows of one month file (empty when the file does not exist). With
 * `containing`, only rows whose line holds that text are parsed: a month can
 * hold thousands of rows and callers look for one proposal, key or line.
 */
export function readArchiveMonth(
  paths: StorePaths,
  month: string,
  containing = "",
): ArchiveRow[] {
  const path = paths.archiveMonth(month);
  refuseSymlink(path, `.bimri/archive/${month}.md`);
  const text = readTextOrNull(path);
  if (text === null) return [];
  const rows: ArchiveRow[] = [];
  for (const line of linesContaining(text, containing)) {
    if (!line.startsWith("[ARCHIVED:") || isV4ArchiveRow(line)) continue;
    const row = parseArchiveRow(line);
    if (row === null) {
      throw new BimriError(
        "store-corrupt",
        `archive ${month}.md holds a malformed row; run doctor.`,
      );
    }
    rows.push(row);
  }
  return rows;
}

/** `YYYY-MM` of the month before `month`. */
export function previousMonth(month: string): string {
  let y = Number(month.slice(0, 4));
  let m = Number(month.slice(5, 7)) - 1;
  if (m === 0) {
    m = 12;
    y -= 1;
  }
  return `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}`;
}

/**
 * The months a commit that is retried now may have written to: this month and
 * the previous one (a crash can straddle a month boundary).
 */
export function recentMonths(): string[] {
  const month = localDate(now()).slice(0, 7);
  return [month, previousMonth(month)];
}

/** Finds the row `[BY:proposal] [reason] raw` in the given months; null when absent. */
export function findExactRow(
  paths: StorePaths,
  months: string[],
  proposalId: string,
  reason: string,
  rawLine: string,
): ArchiveRow | null {
  for (const month of months) {
    for (const row of readArchiveMonth(paths, month, `[BY:${proposalId}] `)) {
      if (row.proposalId === proposalId && row.reason === reason && row.rawLine === rawLine) {
        return row;
      }
    }
  }
  return null;
}

/**
 * Appends `[ARCHIVED:<today>] [BY:proposal] [reason] raw` unless the identical
 * row already exists (then its date is reused). Returns the row's date, which
 * a cold binding must carry. When `retry` (the proposal already had a
 * decision, so an interrupted attempt may have archived), this month's and
 * last month's rows by the proposal are looked up first. A first attempt
 * reads nothing: the commit writes its `applying` decision before any archive
 * row, so a proposal without a decision has none.
 */
export function appendArchive(
  paths: StorePaths,
  proposalId: string,
  rawLine: string,
  reason: ArchiveReason,
  retry = true,
): string {
  if (retry) {
    const existing = findExactRow(paths, recentMonths(), proposalId, reason, rawLine);
    if (existing) return existing.date;
  }
  const date = localDate(now());
  const path = paths.archiveMonth(date.slice(0, 7));
  refuseSymlink(path, `.bimri/archive/${date.slice(0, 7)}.md`);
  const row = `[ARCHIVED:${date}] [BY:${proposalId}] [${reason}] ${rawLine}`;
  const before = lstatOrNull(path);
  appendLine(path, row);
  recordArchivedRow(paths, `${date.slice(0, 7)}.md`, before, {
    offset: before?.size ?? 0,
    length: utf8Length(row),
    proposalId,
    reason,
    rawLine,
  });
  return date;
}

// share: several rows in one durable append (a share pull's grouped commit, commit_batch.ts).
/**
 * Appends rows `[ARCHIVED:<today>] [BY:proposal] [reason] raw`, in order, in
 * one durable append, and returns their date. For first attempts only (as
 * `appendArchive` without `retry`: nothing is looked up). The history
 * digest, which vouches for the month row by row, is dropped instead of
 * extended (its next reader rebuilds it).
 */
export function appendArchiveRows(
  paths: StorePaths,
  rows: { proposalId: string; rawLine: string; reason: ArchiveReason }[],
): string {
  const date = localDate(now());
  if (rows.length === 0) return date;
  const path = paths.archiveMonth(date.slice(0, 7));
  refuseSymlink(path, `.bimri/archive/${date.slice(0, 7)}.md`);
  appendLine(
    path,
    rows.map((r) => `[ARCHIVED:${date}] [BY:${r.proposalId}] [${r.reason}] ${r.rawLine}`).join(
      "\n",
    ),
  );
  forgetHistoryDigest(paths);
  return date;
}
// end share
