/**
 * The reference's rule for collapsing repeated archive generations, for
 * retrieval and the index (the month files are read by
 * engine/store/archive_month.ts, their rows parsed by model/archive_row.ts).
 */
import type { ArchiveRecord } from "../model/archive_row.ts";
import type { ColdRecord } from "../model/state.ts";

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
