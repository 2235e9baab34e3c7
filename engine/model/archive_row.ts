/**
 * The archive row grammar: `[ARCHIVED:<date>] [BY:<proposal>] [<reason>] <raw line>`,
 * and the v4 rows that readers skip. Pure, so readers of the archive need not
 * load the code that appends to it.
 */

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
