/**
 * Proofs of the terminal records a command is about to rely on.
 *
 * The full audit (doctor.ts) proves every decision's and answer's effect
 * against its revision; the everyday check (authority.ts) proves only form
 * and links, since proving every effect means reading history. Two kinds of
 * record are consumed without that proof otherwise, so they are proven where
 * they are consumed, which keeps the cost to the records in question:
 *
 * - A terminal decision (accepted, noop) of a proposal its run has not synced
 *   past: sync and close take it as this proposal's outcome instead of
 *   deciding it. Normally there is none (an undecided proposal has no
 *   decision), or a few after a crash between the decision and the state.
 * - A resolved answer whose candidates' decisions were not finalized from it
 *   yet: the next resolve (and the counts of status) would take the answer as
 *   done. Normally there is none either (finalization follows the answer).
 *   Its proof is in consumed_answers.ts, which only the full checks load.
 *
 * A forgery of either (a record naming a revision that does not hold its
 * effect) is reported in the reference's words and pauses writes.
 */
import { type ParsedView, parseViewShared } from "../model/hot.ts";
import { revisionName } from "../model/ids.ts";
import { coldRecordOf } from "../model/state.ts";
import { lineHash } from "../model/text.ts";
import { lstatOrNull } from "../store/files.ts";
import { readRevision, type Store } from "../store/store.ts";
import type { Decision } from "../records/decision.ts";
import type { Proposal } from "../records/proposal.ts";
import type { AuthorityIssue } from "./everyday.ts";
import { recordRelPath } from "./schemas.ts";

/** The parsed view of revision `n` (the head's own when it is the head), or null when unsafe or missing. */
function viewAt(store: Store, n: number, cache: Map<number, ParsedView | null>): ParsedView | null {
  if (n === store.head.revision) return store.head.view;
  if (cache.has(n)) return cache.get(n)!;
  const info = n >= 0 && n <= store.head.revision ? lstatOrNull(store.paths.revision(n)) : null;
  const text = info?.isFile && !info.isSymlink ? readRevision(store.paths, n) : null;
  const view = text === null ? null : parseViewShared(text, store.state.entry_max_chars);
  cache.set(n, view);
  return view;
}

/**
 * Why `decision` (accepted or noop, not an owner's answer) is not proven by
 * the revision it names, or null when that revision holds the proposal's
 * recorded effect. Lenient where only history could tell (a value that
 * cooled out of the hot view).
 */
function recordedEffectProblem(
  store: Store,
  proposal: Proposal,
  decision: Decision,
  cache: Map<number, ParsedView | null>,
): string | null {
  const revision = decision.revision;
  if (typeof revision !== "number") return null; // The form check reports it.
  const view = viewAt(store, revision, cache);
  const named = `decision ${proposal.proposal_id} names revision ${revisionName(revision)}`;
  if (view === null) return `${named}, which is missing or unsafe`;
  const found = view.entries.find((e) => e.entry.key === proposal.key) ?? null;
  const cold = coldRecordOf(store.state, proposal.key) !== undefined;
  let ok: boolean;
  if (decision.outcome === "noop") {
    const storage = decision.effect_storage;
    if (storage === "hot") ok = found !== null && lineHash(found.raw) === decision.effect_hash;
    else if (storage === "absent") ok = found === null;
    else if (storage === undefined && proposal.operation === "close") ok = found === null;
    else if (storage === undefined && proposal.operation === "set") ok = found !== null || cold;
    else ok = true;
  } else if (proposal.operation === "close") {
    ok = found === null;
  } else if (proposal.operation === "touch") {
    ok = found === null ? cold : found.entry.tier === 2 && found.entry.last_run === proposal.run_id;
  } else if (found === null) {
    ok = cold;
  } else {
    ok = proposal.tier === 3 ? found.entry.tier === 3 : found.entry.id === proposal.entry_id;
  }
  return ok ? null : `${named}, which does not contain the proposal's recorded effect`;
}

/**
 * Proves the terminal decisions `run` is about to take as decided without
 * deciding them (see the module comment); returns the issues (empty when
 * every one holds). `decided` maps the run's proposal IDs to their decisions.
 */
export function unprovenRunDecisions(
  store: Store,
  run: string,
  decided: ReadonlyMap<string, Decision>,
  loadProposal: (id: string) => Proposal,
): AuthorityIssue[] {
  const active = store.state.active_runs[run];
  if (!active) return [];
  const out: AuthorityIssue[] = [];
  const cache = new Map<number, ParsedView | null>();
  for (const [id, decision] of decided) {
    if (decision.outcome !== "accepted" && decision.outcome !== "noop") continue;
    // An owner's answer finalized it: the answer's own proof (resolve) covers it.
    if (typeof decision.resolution_id === "string") continue;
    const proposal = loadProposal(id);
    // A sync of this run since the proposal already took this decision.
    if (proposal.base_revision < active.base_revision) continue;
    const problem = recordedEffectProblem(store, proposal, decision, cache);
    if (problem) out.push({ kind: "decision", id, path: recordRelPath("decision", id), problem });
  }
  return out;
}
