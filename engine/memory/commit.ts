/**
 * The commit protocol (protocol section 8): applies a run's pending
 * proposals in file-name order, each through the same numbered durable steps.
 *
 * Exported for other modules:
 *
 * - `applyPendingProposals(store, run, options)`: used by `sync`, `close`
 *   and share imports (`deferView`: one view refresh after the run). Decides
 *   every undecided proposal of `run` (held, noop, contested or accepted),
 *   updates `store.state` and `store.head` in place and returns the summary
 *   counts plus the stdout notices (conflict blocks, then held notices).
 *
 * - `commitProposalEffect(store, proposal, options)`: the resolution path
 *   (H-resolve). Commits one chosen proposal's effect against the current
 *   head without writing any decision: archive rows, cooling, a new revision,
 *   state (`last_revision_reason: accepted <proposal-id>`) and the view. With
 *   `humanConfirmed: true` a Tier 1/2 claim is rendered `T:confirmed` while
 *   its `SRC:` stays. Returns the new revision number. Throws a BimriError
 *   (nothing after the failing step is written) when the effect cannot be
 *   committed, e.g. no eligible resident can cool. Signature is stable.
 *
 * - `plannedRevisionNumber(store)` (engine/store/store.ts): the revision number the next commit will
 *   take (a resolution records it as `intended_revision_after` first).
 *
 * - `finalizeInterruptedCommit(store)`: finishes the one commit a crash can
 *   leave behind the head (see Recovery below).
 *
 * What earlier commits prove (a proposal's base generation, an effect the
 * head already carries, the later writer of a key) is read through
 * commit_evidence.ts; the `sync` verb's operation is sync.ts.
 *
 * Durable steps of one commit, in order (each is on disk before the next;
 * `BIMRI_FAULT=<point>` exits at the named point between them):
 *
 *   1. decision `applying` (exclusive create)      -> after-applying-decision
 *   2. archive rows: replaced/closed, then cooled  -> after-archive
 *   3. new immutable revision V######.md           -> after-revision
 *   4. state.json (head, hash, reason, residency)  -> after-state
 *   5. bimri.md regenerated (failure only warns)   -> after-view
 *   6. decision `accepted` (replaces applying)
 *   7. shared store only: the record in .bimri-share/ (engine/share/export.ts,
 *      reached through the observer the command layer wires: share_observer.ts)
 *
 * Recovery: an `applying` decision whose effect the head already carries is
 * finalized as accepted with `recovered_from_intent`, by its own run's retry
 * or, for the head's own commit, by whichever command next moves the head or
 * starts a run (`finalizeInterruptedCommit`); otherwise the steps are simply
 * repeated (archive appends are idempotent, an orphan revision number is
 * skipped), so every effect lands exactly once.
 */
import { headCommitLeftApplying, registerCommitFinisher } from "./commit_finisher.ts";
import { BimriError } from "../errors.ts";
import { headFacts, type MemoryEntry, type ParsedView, parseViewShared } from "../model/hot.ts";
import { idNumber, revisionName } from "../model/ids.ts";
import { coldRecord, stateToEdit } from "../model/state.ts";
import { lineHash, sha256Hex } from "../model/text.ts";
import { faultPoint } from "../store/fault.ts";
import { noteHeadVerified } from "../store/head_cache.ts";
import { makeHead } from "../store/head_load.ts";
import { createExclusive, lstatOrNull } from "../store/files.ts";
import {
  invalidateAuditWitness,
  plannedRevisionNumber,
  saveState,
  type Store,
} from "../store/store.ts";
import { appendArchive } from "./archive.ts";
import { raiseStaleBaseConflict } from "./conflicts.ts";
import { ownerResolutionInProgress } from "./owner_resolution.ts";
import {
  baseEvidence,
  effectEvidence,
  heldDetail,
  HOLD_MESSAGES,
  writeDecision,
} from "./decision_record.ts";
import { type Decision, readDecision } from "../records/decision.ts";
import { effectContent, humanConfirmed } from "./effect.ts";
import {
  type LoadedProposal,
  type Proposal,
  readProposal,
  requireProposal,
  runProposalIds,
} from "../records/proposal.ts";
import { findLive, type LiveGeneration, planCooling } from "./residency.ts";
import { renderNewConflictNotices } from "./review_render.ts";
import {
  knownApplyingResolutions,
  noteHeldDecision,
  refuseForIssues,
} from "../integrity/everyday.ts";
import { unprovenRunDecisions } from "../integrity/consumed.ts";
import { appendProposeMarker, readRunLog, scanRunLog } from "./run_log.ts";
import { refreshView } from "./view_sync.ts";
import { shareObserver } from "./share_observer.ts";
import {
  acceptedKeyWriterAfter,
  effectReflectedAtHead,
  proposalBaseEntry,
} from "./commit_evidence.ts";

/** What applying a run's pending proposals did. */
export type ApplySummary = {
  applied: number;
  held: number;
  noop: number;
  conflicts: number;
  failures: number;
  /** Lines for stdout printed before the summary (held notices, conflict blocks). */
  notices: string[];
  /** Warnings for stderr. */
  warnings: string[];
};

/** An empty summary. */
export function emptySummary(): ApplySummary {
  return { applied: 0, held: 0, noop: 0, conflicts: 0, failures: 0, notices: [], warnings: [] };
}

/** How one proposal was decided by this command. */
type ApplyResult =
  | { kind: "replayed" }
  | { kind: "applied"; revision: number; warning: string | null }
  | { kind: "held"; reason: string }
  | { kind: "noop" }
  | { kind: "contested"; conflictId: string; newCandidate: boolean };

/** Options of `applyPendingProposals`. */
export type ApplyOptions = {
  /**
   * Leave bimri.md to the caller, who refreshes it once after the whole run
   * (a share import commits hundreds of effects in one sync). Each commit's
   * revision and state are still durable before its decision; a crash before
   * the caller's refresh leaves bimri.md at an older referenced revision,
   * which the next command heals as it does after a crash at `after-state`.
   * The state's derived marks (saveState) wait for the command's last save too.
   */
  deferView?: boolean;
};

/** Applies every undecided proposal of `run`; updates `store.state` and `store.head` in place. */
export function applyPendingProposals(
  store: Store,
  run: string,
  options: ApplyOptions = {},
): ApplySummary {
  const summary = emptySummary();
  const logFacts = scanRunLog(run, readRunLog(store.paths, run));
  const ids = runProposalIds(store.paths, run, logFacts.proposalMarkers);
  const decided = new Map<string, Decision>();
  const pending = ids.filter((id) => {
    const decision = readDecision(store.paths, id);
    if (decision !== null && decision.outcome !== "applying") decided.set(id, decision);
    return decision === null || decision.outcome === "applying";
  });
  // A terminal decision this run has not synced past is taken as decided: prove it first.
  const unproven = unprovenRunDecisions(
    store,
    run,
    decided,
    (id) => requireProposal(store.paths, id).proposal,
  );
  if (unproven.length > 0) refuseForIssues(unproven);
  if (pending.length === 0) return summary;
  shareObserver(store)?.beforeCommit(store);
  // The reference's audit checkpoint must re-prove the store after authority writes.
  invalidateAuditWitness(store.paths);
  // A commit or an owner answer whose effect already made the head (a crash
  // before its final record) is finished before later intents move the key on.
  const finishedHere = finalizeInterruptedCommit(store);
  finishCommittedResolutions(store);
  const markers = new Set(logFacts.proposalMarkers);
  const newConflicts: { conflictId: string; proposalId: string }[] = [];
  const heldNotices: string[] = [];
  for (const id of pending) {
    const loaded = requireProposal(store.paths, id);
    const p = loaded.proposal;
    if (p.run_id !== run) {
      throw new BimriError("store-corrupt", `proposal ${id} names another run; run doctor.`);
    }
    if (!markers.has(id)) {
      // A crash between the proposal file and its marker: restore the deletion anchor first.
      appendProposeMarker(store.paths, run, id, p.operation, p.key, p.base_hash, p.text);
      markers.add(id);
    }
    const result = applyProposal(store, loaded, options.deferView === true);
    switch (result.kind) {
      case "applied":
        summary.applied++;
        if (result.warning) summary.warnings.push(result.warning);
        break;
      case "held":
        summary.held++;
        heldNotices.push(`BIMRI HELD: ${HOLD_MESSAGES[result.reason]}`);
        summary.warnings.push(heldDetail(id, p.key, result.reason));
        break;
      case "noop":
        summary.noop++;
        break;
      case "contested":
        if (result.newCandidate) {
          summary.conflicts++;
          newConflicts.push({ conflictId: result.conflictId, proposalId: id });
        }
        break;
      case "replayed":
        // This run's own commit, finished just above, still counts as applied here.
        if (id === finishedHere) summary.applied++;
        break;
    }
  }
  summary.notices.push(...renderNewConflictNotices(store, newConflicts), ...heldNotices);
  return summary;
}

/** resolve.ts `finalizeCommittedResolutions`, registered as resolve.ts loads. */
let resolutionFinisher: ((store: Store) => string[]) | null = null;

/** Called by resolve.ts as it loads: commits then finish an owner answer's resolution through it. */
export function registerResolutionFinisher(finish: (store: Store) => string[]): void {
  resolutionFinisher = finish;
}

/**
 * True when a commit on `store` would need resolve.ts and it is not loaded:
 * its health check has not proven that no resolution is applying (usually
 * it has, and then there is nothing to finish). sync and close ask before
 * their first write and stop to load it (`LoadPending`); every other caller
 * loads resolve.ts with it (close_run.ts, commit_batch.ts, share pull).
 */
export function resolutionFinisherNeeded(store: Store): boolean {
  return resolutionFinisher === null && (knownApplyingResolutions(store)?.length ?? 1) > 0;
}

/** Finishes the owner answers whose effect made the head (resolve.ts), when any may be applying. */
function finishCommittedResolutions(store: Store): void {
  if (resolutionFinisher !== null) resolutionFinisher(store);
  else if (resolutionFinisherNeeded(store)) throw new Error("internal: resolve.ts is not loaded");
}

/** Decides one proposal (the body of the commit loop). */
function applyProposal(store: Store, loaded: LoadedProposal, deferView: boolean): ApplyResult {
  const proposal = loaded.proposal;
  const id = proposal.proposal_id;
  const existing = readDecision(store.paths, id);
  if (existing !== null && existing.outcome !== "applying") return { kind: "replayed" };
  const head = store.head;
  const live = findLive(head.view, store.state, proposal.key);

  const holdReason = proposal.hold_reason ??
    (ownerResolutionInProgress(store, proposal.key) ? "owner-resolution-in-progress" : null);
  if (holdReason !== null) {
    writeDecision(store.paths, id, "held", {
      reason: holdReason,
      revision: head.revision,
    }, true);
    noteHeldDecision(store, id);
    return { kind: "held", reason: holdReason };
  }

  const reflected = effectReflectedAtHead(store, proposal, live);
  if (existing !== null && reflected) {
    // Interrupted after the state step: the head already carries this effect.
    acceptAtHead(store, proposal);
    return { kind: "applied", revision: head.revision, warning: null };
  }
  if (reflected) {
    writeDecision(store.paths, id, "noop", {
      reason: proposal.operation === "close"
        ? "memory already absent"
        : "current memory already matches",
      revision: head.revision,
      ...effectEvidence(generationOf(live)),
    }, true);
    return { kind: "noop" };
  }

  const liveHash = lineHash(live?.raw ?? null);
  if (proposal.base_hash !== liveHash) {
    return raiseConflict(store, loaded, live);
  }

  const plan = planEffect(store, proposal, live);
  if (plan === null) {
    writeDecision(store.paths, id, "held", {
      reason: "capacity-residency-required",
      revision: head.revision,
    }, true);
    noteHeldDecision(store, id);
    return { kind: "held", reason: "capacity-residency-required" };
  }
  if (plan.text === head.text && live?.storage !== "cold" && plan.cooled.length === 0) {
    writeDecision(store.paths, id, "noop", {
      reason: "proposal produced no memory change",
      revision: head.revision,
      ...effectEvidence(generationOf(live)),
    }, true);
    return { kind: "noop" };
  }
  const { revision, warning } = commitSteps(
    store,
    proposal,
    live,
    plan,
    true,
    existing !== null,
    deferView,
  );
  return { kind: "applied", revision, warning };
}

/** Finishes an interrupted commit whose effect the head carries: accepted at the head. */
function acceptAtHead(store: Store, proposal: Proposal): void {
  const id = proposal.proposal_id;
  if (proposal.operation === "close") {
    const base = proposalBaseEntry(store, proposal);
    if (base) appendArchive(store.paths, id, base.raw, "closed");
  }
  writeDecision(store.paths, id, "accepted", {
    revision: store.head.revision,
    recovered_from_intent: true,
  }, true);
}

/**
 * Finishes the one commit a crash can leave behind the head: the head's
 * reason is `accepted <id>` while that proposal's decision is still
 * `applying`. Called (under the engine lock) before anything moves the head
 * on, as the reference's load does: once a later writer changes the key, that
 * run could no longer prove its effect and could never sync or close.
 * Reads one decision on the everyday path. Returns the finished proposal ID.
 */
export function finalizeInterruptedCommit(store: Store): string | null {
  const id = headCommitLeftApplying(store);
  if (id === null) return null;
  const proposal = readProposal(store.paths, id)?.proposal;
  if (!proposal) return null;
  const live = findLive(store.head.view, store.state, proposal.key);
  if (!effectReflectedAtHead(store, proposal, live)) return null;
  acceptAtHead(store, proposal);
  return id;
}

/** The view edit plus cooling for one proposal against the current head. */
type EffectPlan = {
  text: string;
  /** `text` parsed (and found valid): the new head's view once committed. */
  view: ParsedView;
  archivedRaw: string | null;
  cooled: { raw: string; entry: MemoryEntry }[];
};

function planEffect(
  store: Store,
  proposal: Proposal,
  live: LiveGeneration | null,
): EffectPlan | null {
  const effect = effectContent(store.head.text, proposal, live);
  const cooling = planCooling(effect.text, store.state, proposal.key, store.head.text);
  if (cooling === null) return null;
  const parsed = parseViewShared(cooling.text, store.state.entry_max_chars);
  if (parsed.errors.length > 0) {
    throw new BimriError(
      "refused",
      `proposal ${proposal.proposal_id} cannot be applied safely: ${parsed.errors.join("; ")}`,
    );
  }
  return {
    text: cooling.text,
    view: parsed,
    archivedRaw: effect.archivedRaw,
    cooled: cooling.cooled.map((c) => ({ raw: c.raw, entry: c.entry })),
  };
}

/**
 * The numbered durable steps of one commit. Decisions are written only when
 * `writeDecisions` (the resolution path owns its own records).
 */
function commitSteps(
  store: Store,
  proposal: Proposal,
  live: LiveGeneration | null,
  plan: EffectPlan,
  writeDecisions: boolean,
  retry: boolean,
  deferView = false,
): { revision: number; warning: string | null } {
  const { paths } = store;
  const id = proposal.proposal_id;
  const before = store.head;

  // Step 1: durable intent, with the frozen base generation.
  if (writeDecisions) {
    writeDecision(paths, id, "applying", {
      base_hash: proposal.base_hash,
      revision_before: before.revision,
      ...baseEvidence(generationOf(live)),
    }, false);
  }
  faultPoint("after-applying-decision");

  // Step 2: displaced generations are archived before state can point past them.
  if (plan.archivedRaw !== null) {
    appendArchive(
      paths,
      id,
      plan.archivedRaw,
      proposal.operation === "close" ? "closed" : "replaced",
      retry,
    );
  } else if (proposal.operation === "set" && live !== null) {
    appendArchive(paths, id, live.raw, "replaced", retry);
  }
  const cooledDates = plan.cooled.map((c) => appendArchive(paths, id, c.raw, "cooled", retry));
  faultPoint("after-archive");

  // Step 3: the new immutable revision (a number left by a crashed attempt is skipped).
  const next = stateToEdit(store.state);
  if (live?.storage === "cold") delete next.cold_current[proposal.key];
  plan.cooled.forEach((c, i) => {
    next.cold_current[c.entry.key] = coldRecord(
      c.entry.id,
      c.entry.key,
      c.raw,
      lineHash(c.raw),
      id,
      cooledDates[i],
    );
  });
  if (proposal.tier === 3 && proposal.operation === "set" && proposal.pattern_id) {
    next.pattern_count = Math.max(next.pattern_count, idNumber(proposal.pattern_id));
  }
  const revision = plannedRevisionNumber(store);
  const hash = sha256Hex(plan.text);
  if (!createExclusive(paths.revision(revision), plan.text)) {
    throw new BimriError("io", `revision ${revisionName(revision)} appeared during commit; retry.`);
  }
  // The file now holds exactly the bytes just hashed: the next command need not hash it again.
  const written = lstatOrNull(paths.revision(revision));
  if (written !== null) {
    noteHeadVerified(
      paths,
      revision,
      hash,
      written,
      headFacts(plan.view, store.state.entry_max_chars),
    );
  }
  faultPoint("after-revision");

  // Step 4: the atomic head switch.
  next.head_revision = revision;
  next.head_hash = hash;
  next.last_revision_reason = `accepted ${id}`;
  // A deferred view means more commits follow in this command: the derived
  // marks of the state are written once, by the command's last state save.
  saveState(paths, next, { derived: !deferView });
  store.state = next;
  store.head = makeHead(revision, plan.text, hash, next.entry_max_chars, { view: plan.view });
  faultPoint("after-state");

  // Step 5: the generated view (a failure warns; the next command retries).
  const warning = deferView ? null : refreshView(store);
  faultPoint("after-view");

  // Step 6: the final decision.
  if (writeDecisions) writeDecision(paths, id, "accepted", { revision }, true);

  // Step 7 (shared stores only): the change's record for the other replicas.
  if (writeDecisions) shareObserver(store)?.afterAcceptedCommit(store, id, proposal.actor);
  return { revision, warning };
}

/** Options of `commitProposalEffect`. */
export type CommitEffectOptions = {
  /** Render a Tier 1/2 claim as `T:confirmed` (its source stays): a human chose it. */
  humanConfirmed: boolean;
};

/** Result of `commitProposalEffect`. */
export type CommitEffectResult = {
  /** The revision that holds the effect. */
  revision: number;
  /** A view-refresh warning for stderr, if any. */
  warning: string | null;
};

/**
 * Commits one proposal's effect against the current head without writing any
 * decision (the resolution path). See the module comment.
 */
export function commitProposalEffect(
  store: Store,
  proposal: Proposal,
  options: CommitEffectOptions,
): CommitEffectResult {
  const effective = options.humanConfirmed ? humanConfirmed(proposal) : proposal;
  const live = findLive(store.head.view, store.state, effective.key);
  if (effective.operation !== "set" && live === null) {
    throw new BimriError(
      "refused",
      `${effective.key} is absent from current memory, so ${effective.operation} ${effective.proposal_id} has nothing to act on.`,
    );
  }
  const plan = planEffect(store, effective, live);
  if (plan === null) {
    throw new BimriError(
      "refused",
      "hot memory exceeds its byte ceiling and no eligible Tier 2 resident can cool; close or shorten a current subject first.",
    );
  }
  invalidateAuditWitness(store.paths);
  finalizeInterruptedCommit(store);
  return commitSteps(store, effective, live, plan, false, true);
}

function generationOf(live: LiveGeneration | null) {
  if (live === null) return { raw: null, storage: "absent" as const };
  return {
    raw: live.raw,
    storage: live.storage,
    archiveProposalId: live.archiveProposalId,
    archiveDate: live.archiveDate,
  };
}

/**
 * The five conflict conditions: the candidate's receipt binds its base, an
 * accepted writer from another run committed a later change of the key from
 * the same observed generation, the effect is not already current (checked
 * before), and the post-states differ (the live hash moved). Then the
 * candidate is contested in a stale-base conflict.
 */
function raiseConflict(
  store: Store,
  loaded: LoadedProposal,
  live: LiveGeneration | null,
): ApplyResult {
  const proposal = loaded.proposal;
  if (proposal.operation === "close" && live === null) {
    throw new BimriError(
      "authority-recovery-needed",
      `${proposal.proposal_id}: close target is absent without exact archive provenance; authority recovery is required (run doctor).`,
    );
  }
  if (proposal.preflight_receipt === null) {
    throw new BimriError(
      "refused",
      `legacy proposal ${proposal.proposal_id} has no validated versioned preflight receipt; sync and restage it instead of creating an owner conflict.`,
    );
  }
  const writer = acceptedKeyWriterAfter(store, proposal, null);
  if (writer === null) {
    throw new BimriError(
      "authority-recovery-needed",
      `the later writer of ${proposal.key} cannot be proven from accepted decisions and revisions; no owner conflict was created. Run doctor.`,
    );
  }
  if (writer.writer.run_id === proposal.run_id) {
    throw new BimriError(
      "refused",
      `${proposal.key} was changed by the same run; sync ${proposal.run_id} before submitting another intent.`,
    );
  }
  const raised = raiseStaleBaseConflict(store, proposal.proposal_id, loaded.bytes, proposal.key, {
    line: live?.raw ?? null,
    storage: live?.storage ?? "absent",
    archiveProposalId: live?.archiveProposalId,
    archiveDate: live?.archiveDate,
  });
  writeDecision(store.paths, proposal.proposal_id, "contested", {
    conflict_id: raised.conflictId,
    revision: store.head.revision,
  }, true);
  return { kind: "contested", conflictId: raised.conflictId, newCandidate: true };
}

// Team memory's export finishes an interrupted commit through this hook
// (commit_finisher.ts) whenever this module is loaded.
registerCommitFinisher(finalizeInterruptedCommit);
