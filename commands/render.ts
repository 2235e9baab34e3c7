/** Shared text renderers for command output (the brief and run summaries). */
import type { HeadSummary, StartResult } from "../engine/memory/runs.ts";
import type { ApplySummary } from "../engine/memory/commit.ts";
import { revisionName } from "../engine/model/ids.ts";

/** `Memory revision V000001 | ~167 tokens | T1 0 (soft target 20) | ...`. */
export function headLine(head: HeadSummary, prefix = "Memory revision"): string {
  const [t1, t2, t3] = head.tiers;
  const [s1, s2, s3] = head.softTargets;
  return `${prefix} ${
    revisionName(head.revision)
  } | ~${head.tokens} tokens | T1 ${t1} (soft target ${s1}) | T2 ${t2} (soft target ${s2}) | T3 ${t3} (soft target ${s3})`;
}

/** The orphan-candidates brief line: every candidate, or the count and the five newest in ID order. */
export function orphanLine(orphans: string[]): string | null {
  if (orphans.length === 0) return null;
  if (orphans.length <= 5) return `ORPHAN CANDIDATES (never auto-closed): ${orphans.join(", ")}`;
  const newest = orphans.slice(-5);
  return `ORPHAN CANDIDATES (never auto-closed): ${orphans.length} runs inactive over 24h; newest ${
    newest.join(", ")
  }; full list: status`;
}

/**
 * The start brief, with the handle marker for a new run. Line order is the
 * reference's (scripts read briefs by position): header, revision, resume
 * note, authority recovery (`recoveryLines`), orphan candidates, the head's
 * validation errors, run handle.
 */
export function renderBrief(result: StartResult, recoveryLines: string[] = []): string {
  const lines: string[] = [];
  if (!result.resumed) lines.push(`BIMRI RUN HANDLE: ${result.run}`);
  lines.push(`=== BIMRI BRIEF ${result.run} | ${result.date} | ${result.actor} ===`);
  lines.push(headLine(result.head));
  if (result.resumed) lines.push("Resumed existing run handle for this harness session.");
  lines.push(...recoveryLines);
  const orphans = orphanLine(result.orphans);
  if (orphans) lines.push(orphans);
  if (result.head.validationErrors.length > 0) {
    lines.push("VALIDATION NEEDED:", ...result.head.validationErrors.map((e) => `  - ${e}`));
  }
  lines.push(
    `Run handle: ${result.run}. Journal and propose through bimri; close explicitly with --run ${result.run}.`,
  );
  lines.push("=== END BRIEF ===");
  return lines.join("\n") + "\n";
}

/** Non-zero memory counts, `; `-separated, for the close summary. */
export function memoryCounts(summary: ApplySummary): string {
  const parts: string[] = [];
  if (summary.applied) parts.push(`applied ${summary.applied}`);
  if (summary.held) parts.push(`held candidates ${summary.held}`);
  if (summary.noop) parts.push(`already satisfied/no change ${summary.noop}`);
  if (summary.conflicts) parts.push(`new concurrent conflicts ${summary.conflicts}`);
  if (summary.failures) parts.push(`agent-action failures ${summary.failures}`);
  return parts.join("; ");
}

/** Full counts line used by sync. */
export function syncCounts(summary: ApplySummary): string {
  return `applied ${summary.applied}, held candidates ${summary.held}, already satisfied/no change ${summary.noop}, new concurrent conflicts ${summary.conflicts}, agent-action failures ${summary.failures}`;
}

/** JSON form of an apply summary. */
export function summaryJson(summary: ApplySummary): Record<string, number> {
  return {
    applied: summary.applied,
    held: summary.held,
    noop: summary.noop,
    conflicts: summary.conflicts,
    failures: summary.failures,
  };
}
