/**
 * `status`: the store's numbers (engine and format versions, revision, runs,
 * residency against the byte ceiling and soft targets, held candidates,
 * conflicts and review groups, run outcomes) and the orphan candidates in
 * full. It reads decisions, conflicts and logs: not an everyday-path command.
 */
import { decodeUtf8Strict, utf8Length } from "../model/text.ts";
import { listNames, readBytesOrNull } from "../store/files.ts";
import type { Store } from "../store/store.ts";
import { type HeadSummary, headSummary, orphanCandidates } from "./runs.ts";
import { HOLD_MESSAGES } from "./decision_record.ts";
import { classifyReviews, reviewCounts } from "./review.ts";
import { listConflictIds, readCandidate, readResolution } from "../records/conflict.ts";
import { currentEntriesByKey, heldRecords } from "../retrieval/records.ts";
import { fullFactsOf, settledProofOf } from "../integrity/status_check.ts";

/** One held candidate as status lists it. */
export type HeldCandidate = { proposal_id: string; key: string; reason: string };

/** Everything `status` reports. */
export type StatusReport = {
  revision: number;
  runs: number;
  active: { run: string; actor: string }[];
  head: HeadSummary;
  hotBytes: number;
  hotMaxBytes: number;
  coldCurrent: number;
  held: HeldCandidate[];
  openConflicts: number;
  proposals: number;
  revisions: number;
  actionableConflicts: number;
  legacyReviews: number;
  recoveryReviews: number;
  satisfiedCandidates: number;
  outcomes: Record<string, number>;
  orphans: string[];
};

/** Held candidates printed under the count (the rest are counted only). */
export const HELD_LINES_SHOWN = 5;

/** Fallback text for a hold reason the engine does not know. */
const UNKNOWN_HOLD = "Candidate preserved; current unchanged.";

/** The `  held <id> [<key>] <what it means>` line of one held candidate. */
export function heldLine(held: HeldCandidate): string {
  return `  held ${held.proposal_id} [${held.key}] ${HOLD_MESSAGES[held.reason] ?? UNKNOWN_HOLD}`;
}

const OUTCOME_LINE = /^\[OUTCOME:(success|partial|overflow|fail)\]/;

/**
 * Outcome counts over run logs: each log counts once, by its first
 * `[OUTCOME:…]` line (a log closed twice still is one run).
 */
export function countOutcomes(store: Store): Record<string, number> {
  const outcomes: Record<string, number> = {};
  // The status check proved every run log from settled history and read the
  // rest: it counted the outcomes of every log named like a run.
  const proof = settledProofOf(store);
  if (proof) Object.assign(outcomes, proof.outcomes);
  // The status check just read every regular run log: reuse its outcomes.
  const known = fullFactsOf(store)?.outcomes;
  for (const name of proof ? proof.logNames : listNames(store.paths.folder("log"))) {
    if (!/^R[0-9]+\.md$/.test(name)) continue;
    if (proof && /^R[0-9]{6}\.md$/.test(name)) continue;
    if (known?.has(name)) {
      const outcome = known.get(name);
      if (outcome) outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      continue;
    }
    const bytes = readBytesOrNull(`${store.paths.folder("log")}/${name}`);
    const text = bytes === null ? null : decodeUtf8Strict(bytes);
    if (text === null) continue;
    // Line starts as Python's re.MULTILINE sees them: after "\n" only.
    for (const line of text.split("\n")) {
      const match = OUTCOME_LINE.exec(line);
      if (!match) continue;
      outcomes[match[1]] = (outcomes[match[1]] ?? 0) + 1;
      break;
    }
  }
  return outcomes;
}

/** Held decisions whose proposal is not already current, in decision-file order. */
export function heldCandidates(store: Store): HeldCandidate[] {
  // The status check just read every decision: its held ones, in file order.
  const facts = fullFactsOf(store);
  const decisions = facts ? [...facts.records.decision] : [];
  const heldIds = settledProofOf(store)?.held ??
    (facts && decisions.every(([, d]) => !d.problem)
      ? decisions.filter(([, d]) => d.outcome === "held").map(([id]) => id)
      : undefined);
  return heldRecords(store, currentEntriesByKey(store), undefined, heldIds).map((record) => ({
    proposal_id: record.id,
    key: record.key,
    reason: record.reason,
  }));
}

/** POSIX single-quoting of a value inside a printed command. */
function quoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * What `review` says on stderr about held candidates (the reference's review
 * lists only conflicts, so its stdout stays as it is): each held proposal,
 * its key, and the exact command that moves it on. A held candidate is not a
 * conflict: `resolve` does not apply to it.
 */
export function heldReviewNotices(store: Store): string[] {
  return heldCandidates(store).map((held) => {
    const p = readCandidate(store, held.proposal_id);
    const flags = [
      p.tier === 1 ? `--kind ${p.kind}` : "",
      p.tier === 2 ? `--importance ${p.importance}` : "",
    ].filter((f) => f !== "").join(" ");
    const base = `bimri propose --run <run> --key ${held.key}`;
    const fresh = `--new-subject --tier ${p.tier}${flags ? ` ${flags}` : ""}`;
    const next = held.reason === "classification-required"
      ? `if it is a new subject, an agent stages it again: ${base} ${fresh} --text ${
        quoted(p.text)
      }; else reuse the existing key (bimri search)`
      : `if the owner states it, record the owner's own words: ${base}${
        held.reason === "tier1-human-authority-required" ? ` ${fresh}` : ""
      } --source user --trust confirmed --text ${quoted(p.text)}`;
    return `BIMRI: held ${held.proposal_id} [${held.key}] (not a conflict): ${next}.`;
  });
}

/** Conflicts without a `resolved` resolution. */
function openConflictCount(store: Store): number {
  let open = 0;
  for (const id of listConflictIds(store)) {
    const resolution = readResolution(store, id);
    if (resolution === null || resolution.status !== "resolved") open++;
  }
  return open;
}

/** `compute()`, or `fallback` when it fails and damaged authority is already being reported. */
function tolerate<T>(tolerant: boolean, compute: () => T, fallback: T): T {
  if (!tolerant) return compute();
  try {
    return compute();
  } catch {
    return fallback;
  }
}

/**
 * Builds the status report. With `damagedAuthority`, counts that need a
 * damaged record fall back to what can be read (the recovery block says why).
 * `outcomes` may count run outcomes another way (a long-lived reader that
 * remembers closed logs); the default reads them as `status` does.
 */
export function statusReport(
  store: Store,
  damagedAuthority = false,
  outcomes: (store: Store) => Record<string, number> = countOutcomes,
): StatusReport {
  const { paths, state } = store;
  // A settled proof listed both folders already.
  const proof = settledProofOf(store);
  const proposals = proof?.proposalFiles ??
    listNames(paths.folder("proposals")).filter((n) => /^R[0-9]{6}-Q[0-9]{3}\.json$/.test(n))
      .length;
  const revisions = proof?.revisionFiles ??
    listNames(paths.folder("revisions")).filter((n) => /^V[0-9]{6}\.md$/.test(n)).length;
  const held = tolerate(damagedAuthority, () => heldCandidates(store), []);
  const counts = tolerate(damagedAuthority, () => reviewCounts(classifyReviews(store)), {
    concurrent: 0,
    legacy: 0,
    recovery: 0,
    satisfied: 0,
  });
  return {
    revision: state.head_revision,
    runs: state.run_count,
    active: Object.keys(state.active_runs).sort().map((run) => ({
      run,
      actor: state.active_runs[run].actor,
    })),
    head: headSummary(store),
    hotBytes: utf8Length(store.head.text),
    hotMaxBytes: state.hot_max_bytes,
    coldCurrent: Object.keys(state.cold_current).length,
    held,
    openConflicts: tolerate(damagedAuthority, () => openConflictCount(store), 0),
    proposals,
    revisions,
    actionableConflicts: counts.concurrent,
    legacyReviews: counts.legacy,
    recoveryReviews: counts.recovery,
    satisfiedCandidates: counts.satisfied,
    outcomes: outcomes(store),
    orphans: orphanCandidates(state),
  };
}
