/**
 * The archive row grammar: `[ARCHIVED:<date>] [BY:<proposal>] [<reason>] <raw line>`,
 * and the v4 rows that readers skip; a month file's text parsed into its rows.
 * Pure, so readers of the archive need not load the code that appends to it.
 */
import { BimriError } from "../errors.ts";
import { pyStrip, splitLines } from "./text.ts";

/** One parsed archive row. */
export type ArchiveRow = { date: string; proposalId: string; reason: string; rawLine: string };

const ROW =
  /^\[ARCHIVED:([0-9]{4}-[0-9]{2}-[0-9]{2})\] \[BY:(R[0-9]{6}-Q[0-9]{3})\] \[([^\]\r\n]+)\] (.+)$/;

/** Parses an archive row; null for a line that is not one. */
export function parseArchiveRow(line: string): ArchiveRow | null {
  const m = ROW.exec(line);
  return m ? { date: m[1], proposalId: m[2], reason: m[3], rawLine: m[4] } : null;
}

/**
 * A row written by a v4 engine (`[ARCHIVED:R003 2026-04-03] [status:closed] ...`).
 * Migration keeps v4 archives in place as inert history: readers skip these
 * rows instead of treating them as damaged v5 records.
 */
export function isV4ArchiveRow(line: string): boolean {
  return /^\[ARCHIVED:R[0-9]+ [0-9]{4}-[0-9]{2}-[0-9]{2}\]/.test(line);
}

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
