/** Run logs: the fixed header, appended line kinds and the markers readers recognize. */
import { BimriError } from "../errors.ts";
import { entryId, revisionName } from "../model/ids.ts";
import { appendLine, createExclusive, readTextOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";

/** The exact text of a new run log. */
export function runLogHeader(
  run: string,
  startedAt: string,
  actor: string,
  baseRevision: number,
): string {
  return [
    `# Run ${run} | ${startedAt} | actor:${actor} | base:${revisionName(baseRevision)}`,
    "",
    "## Journal",
    "",
    `<!-- Use the host-only argv_prefix recorded in .bimri/runtime.local.json with \`journal --run ${run} --text "..."\` for durable detail. -->`,
    "",
    "## Proposals",
    "",
    "## Outcome",
    "",
    "",
  ].join("\n");
}

/** Creates a run log exclusively; false when the file already exists. */
export function createRunLog(paths: StorePaths, run: string, header: string): boolean {
  return createExclusive(paths.log(run), header);
}

/** Reads a run's log text; refuses when it is missing. */
export function readRunLog(paths: StorePaths, run: string): string {
  const text = readTextOrNull(paths.log(run));
  if (text === null) {
    throw new BimriError(
      "store-corrupt",
      `the log of ${run} is missing; run doctor before continuing.`,
    );
  }
  return text;
}

/** Facts a run's log holds: entry numbers, proposal markers, closure. */
export type RunLogFacts = {
  maxEntry: number;
  proposalMarkers: string[];
  closed: boolean;
  outcome: string | null;
};

/** Scans a run's log for the markers the protocol recognizes (anchored at line starts). */
export function scanRunLog(run: string, text: string): RunLogFacts {
  const entryPattern = new RegExp(`^\\[ID:${run}-E([0-9]{3})\\](\\s|$)`);
  const proposePattern = /^\[PROPOSE:(R[0-9]{6}-Q[0-9]{3})\](\s|$)/;
  const closedPattern = new RegExp(`^\\[CLOSED:${run}(\\s|\\])`);
  const outcomePattern = /^\[OUTCOME:(success|partial|overflow|fail)\]/;
  let maxEntry = 0;
  const proposalMarkers: string[] = [];
  let closed = false;
  let outcome: string | null = null;
  for (const line of text.split("\n")) {
    const entry = entryPattern.exec(line);
    if (entry) {
      maxEntry = Math.max(maxEntry, Number(entry[1]));
      continue;
    }
    const propose = proposePattern.exec(line);
    if (propose) {
      proposalMarkers.push(propose[1]);
      continue;
    }
    if (closedPattern.test(line)) closed = true;
    const out = outcomePattern.exec(line);
    if (out) outcome = out[1];
  }
  return { maxEntry, proposalMarkers, closed, outcome };
}

/** Allocates the next entry ID of `run` from its log facts. */
export function nextEntryId(run: string, facts: RunLogFacts): string {
  const n = facts.maxEntry + 1;
  if (n > 999) {
    throw new BimriError(
      "refused",
      `${run} has used all 999 entry IDs; close it and start a new run.`,
    );
  }
  return entryId(run, n);
}

/** Appends a journal entry line. */
export function appendJournalLine(
  paths: StorePaths,
  run: string,
  id: string,
  importance: number,
  text: string,
): void {
  appendLine(paths.log(run), `[ID:${id}] [I:${importance}] ${text}`);
}

/** Appends a `[PROPOSE:...]` marker line. */
export function appendProposeMarker(
  paths: StorePaths,
  run: string,
  proposal: string,
  operation: string,
  key: string,
  baseHash: string,
  text: string,
): void {
  appendLine(
    paths.log(run),
    `[PROPOSE:${proposal}] [${operation}] [K:${key}] [BASE:${baseHash}] ${text}`,
  );
}

/**
 * Appends the outcome and closed markers in one write: a close killed
 * between two separate appends left an outcome without its closure, and the
 * retry then appended a second outcome (status counts the first).
 */
export function appendClosure(
  paths: StorePaths,
  run: string,
  outcome: string,
  summary: string,
  closedAt: string,
): void {
  appendLine(paths.log(run), `[OUTCOME:${outcome}] ${summary}\n[CLOSED:${run} ${closedAt}]`);
}
