/**
 * Commits many staged proposals of one run as one commit (a share pull's
 * effects): one revision holding every effect, one state switch, and each
 * proposal's decision `applying` before and `accepted` after, instead of a
 * revision and a state write per proposal.
 *
 * Only plain changes are grouped: each undecided proposal in file order, as long as it
 * holds for no reason, is based on the key's live line
 * (hot or absent) and changes memory (cooling residents when full). The first proposal
 * that is not plain ends the group (so does one whose cooling would cool an
 * effect of the group: its revision must hold every effect it names); the
 * caller groups again from there, and `applyPendingProposals` (commit.ts)
 * decides what is left one by one, as always.
 *
 * Durable steps, in the order of a single commit (commit.ts), group by group:
 *
 *   1. every `applying` decision (each file synced, the folder once)
 *   2. archive rows of the replaced generations
 *   3. the one new revision
 *   4. state.json: head, hash, `last_revision_reason: accepted <last ID>`
 *   5. (bimri.md: the caller refreshes the view once)
 *   6. every `accepted` decision, naming the one revision
 *
 * Recovery is the single commit's: before step 4 the next sync repeats the
 * effects (an orphan revision number is skipped, archive rows are reused);
 * after it the head carries every effect, so each `applying` decision is
 * finalized as accepted at the head (`recovered_from_intent`).
 */
import { headFacts, type MemoryEntry, type ParsedView, parseViewShared } from "../model/hot.ts";
import { coldRecord, stateToEdit } from "../model/state.ts";
import { lineHash, sha256Hex } from "../model/text.ts";
import { BimriError } from "../errors.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { faultPoint } from "../store/fault.ts";
import {
  createExclusive,
  createExclusiveMany,
  lstatOrNull,
  renameOver,
  syncDir,
} from "../store/files.ts";
import { noteHeadVerified } from "../store/head_cache.ts";
import { makeHead } from "../store/head_load.ts";
import { nativePath } from "../store/os_path.ts";
import {
  invalidateAuditWitness,
  plannedRevisionNumber,
  saveState,
  type Store,
} from "../store/store.ts";
import { readDecision } from "../records/decision.ts";
import { type Proposal, requireProposal, runProposalIds } from "../records/proposal.ts";
import { appendArchiveRows, type ArchiveReason } from "./archive.ts";
import { finalizeInterruptedCommit } from "./commit.ts";
import { baseEvidence, decisionRecord } from "./decision_record.ts";
import { effectContent } from "./effect.ts";
import { ownerResolutionInProgress } from "./owner_resolution.ts";
import { findLive, type LiveGeneration, planCooling } from "./residency.ts";
import { finalizeCommittedResolutions } from "./resolve.ts";
import { readRunLog, scanRunLog } from "./run_log.ts";
import { shareObserver } from "./share_observer.ts";

/** One grouped effect: the proposal, the generation it replaces, the lines it archives. */
type Grouped = {
  proposal: Proposal;
  live: LiveGeneration | null;
  archived: string | null;
  cooled: { raw: string; entry: MemoryEntry }[];
};

/**
 * Commits the leading plain proposals of `run` together (see the module
 * comment); returns how many were committed. The view is left to the caller.
 */
export function commitPlainTogether(store: Store, run: string): number {
  const log = scanRunLog(run, readRunLog(store.paths, run));
  const markers = new Set(log.proposalMarkers);
  const group: Grouped[] = [];
  let text = store.head.text;
  let view: ParsedView = store.head.view;
  // The state as the group leaves it: residents cooled by earlier effects are cold here.
  const planned = stateToEdit(store.state);
  for (const id of runProposalIds(store.paths, run, log.proposalMarkers)) {
    // Decided earlier (a previous sync of the run): passed over, as the protocol does.
    if (readDecision(store.paths, id) !== null) continue;
    // A proposal without its marker is the protocol's own case.
    if (!markers.has(id)) break;
    const proposal = requireProposal(store.paths, id).proposal;
    if (proposal.run_id !== run || proposal.hold_reason) break;
    if (group.some((g) => g.proposal.key === proposal.key)) break;
    if (proposal.tier === 3 || proposal.operation === "touch") break;
    if (ownerResolutionInProgress(store, proposal.key)) break;
    const live = findLive(view, planned, proposal.key);
    if (live !== null && live.storage !== "hot") break;
    if (proposal.base_hash !== lineHash(live?.raw ?? null)) break;
    const effect = effectContent(text, proposal, live);
    const cooling = planCooling(effect.text, planned, proposal.key, text);
    if (cooling === null || cooling.text === text) break;
    const parsed = parseViewShared(cooling.text, store.state.entry_max_chars);
    if (parsed.errors.length > 0) break;
    const archived = effect.archivedRaw ??
      (proposal.operation === "set" && live !== null ? live.raw : null);
    const cooled = cooling.cooled.map((c) => ({ raw: c.raw, entry: c.entry }));
    // An effect of this group cooled again before its revision: the revision
    // would not hold it. It starts the next group instead.
    if (cooled.some((c) => group.some((g) => g.proposal.key === c.entry.key))) break;
    // Dated when archived (step 2); planned now so later effects see the key cold.
    for (const c of cooled) planned.cold_current[c.entry.key] = cold(c, proposal, "");
    group.push({ proposal, live, archived, cooled });
    text = cooling.text;
    view = parsed;
  }
  // One effect gains nothing from grouping: the single commit takes it.
  if (group.length < 2) return 0;
  invalidateAuditWitness(store.paths);
  finalizeInterruptedCommit(store);
  finalizeCommittedResolutions(store);
  const { paths } = store;
  const before = store.head.revision;

  // Step 1: every intent, with its frozen base generation.
  const intents = group.map(({ proposal, live }) => ({
    path: paths.decision(proposal.proposal_id),
    data: canonicalJson(decisionRecord(proposal.proposal_id, "applying", {
      base_hash: proposal.base_hash,
      revision_before: before,
      ...baseEvidence(
        live === null ? { raw: null, storage: "absent" } : { raw: live.raw, storage: "hot" },
      ),
    })),
  }));
  const taken = createExclusiveMany(intents);
  if (taken >= 0) {
    throw new BimriError(
      "io",
      `decision ${group[taken].proposal.proposal_id} appeared during commit; retry.`,
    );
  }
  syncDir(paths.folder("decisions"));
  faultPoint("after-applying-decision");

  // Step 2: displaced generations are archived before state can point past them
  // (each effect's replaced or closed line, then the residents it cooled).
  const next = stateToEdit(store.state);
  const rows: { proposalId: string; rawLine: string; reason: ArchiveReason }[] = [];
  for (const { proposal, archived, cooled } of group) {
    const proposalId = proposal.proposal_id;
    if (archived !== null) {
      rows.push({
        proposalId,
        rawLine: archived,
        reason: proposal.operation === "close" ? "closed" : "replaced",
      });
    }
    for (const c of cooled) rows.push({ proposalId, rawLine: c.raw, reason: "cooled" });
  }
  const date = appendArchiveRows(paths, rows);
  for (const { proposal, cooled } of group) {
    for (const c of cooled) next.cold_current[c.entry.key] = cold(c, proposal, date);
  }
  faultPoint("after-archive");

  // Step 3: the one new revision.
  const revision = plannedRevisionNumber(store);
  const hash = sha256Hex(text);
  if (!createExclusive(paths.revision(revision), text)) {
    throw new BimriError("io", `revision V${String(revision).padStart(6, "0")} appeared; retry.`);
  }
  const written = lstatOrNull(paths.revision(revision));
  if (written !== null) {
    noteHeadVerified(paths, revision, hash, written, headFacts(view, store.state.entry_max_chars));
  }
  faultPoint("after-revision");

  // Step 4: the atomic head switch (derived marks wait for the command's last save).
  const last = group[group.length - 1].proposal.proposal_id;
  next.head_revision = revision;
  next.head_hash = hash;
  next.last_revision_reason = `accepted ${last}`;
  saveState(paths, next, { derived: false });
  store.state = next;
  store.head = makeHead(revision, text, hash, next.entry_max_chars, { view });
  faultPoint("after-state");

  // Step 6: the final decisions (the view, step 5, is the caller's): each
  // replaces its `applying` atomically (a synced temp renamed over it), the
  // folder synced once after the last.
  const finals = group.map(({ proposal }) => ({
    final: paths.decision(proposal.proposal_id),
    path: nativePath.join(
      paths.folder("decisions"),
      `.bimri-tmp-${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`,
    ),
    data: canonicalJson(decisionRecord(proposal.proposal_id, "accepted", { revision })),
  }));
  const clash = createExclusiveMany(finals);
  if (clash >= 0) {
    throw new BimriError("io", `${finals[clash].path} appeared during commit; retry.`);
  }
  for (const { path, final } of finals) renameOver(path, final);
  syncDir(paths.folder("decisions"));
  for (const { proposal } of group) {
    shareObserver(store)?.afterAcceptedCommit(store, proposal.proposal_id, proposal.actor);
  }
  return group.length;
}

/** The cold record of resident `c`, cooled by `proposal` on `date`. */
function cold(c: { raw: string; entry: MemoryEntry }, proposal: Proposal, date: string) {
  return coldRecord(c.entry.id, c.entry.key, c.raw, lineHash(c.raw), proposal.proposal_id, date);
}
