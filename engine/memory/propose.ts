/**
 * `propose` (protocol section 6): stage one intended memory change after a
 * full preflight under the lock against the accepted head. Nothing is written
 * unless every check passes; a same-run retry of the same intent returns the
 * existing proposal ID and writes nothing.
 *
 * Reads: state, the head, the run's base revision (when older than the head),
 * the run's own log and proposals/decisions, and the resolutions folder.
 */
import { BimriError } from "../errors.ts";
import { type MemoryEntry, parseAnyEntry, type ParsedView, parseViewShared } from "../model/hot.ts";
import {
  ANY_ENTRY_ID,
  cleanScalar,
  entryId,
  proposalId as formatProposalId,
  requireKey,
  requireRunId,
  TAG,
  validateFixedId,
} from "../model/ids.ts";
import { coldRecordOf, type State } from "../model/state.ts";
import { codePointLength, lineHash, pyStrip, sha256Hex } from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import { faultPoint } from "../store/fault.ts";
import { noteAuthorityBaseline, refreshAuthoritySummary } from "../integrity/everyday.ts";
import { appendLine, lstatOrNull } from "../store/files.ts";
import { createRecord } from "../store/records.ts";
import { invalidateAuditWitness, readRevision, saveState, type Store } from "../store/store.ts";
import { AUTHORITY_FORMAT, ENGINE_COMPAT_RELEASE } from "../versions.ts";
import { ownerResolutionInProgress } from "./owner_resolution.ts";
import {
  highestMentionOf,
  type ProposalMentions,
  readProposalMentions,
  recordScannedMentions,
} from "./proposal_mentions.ts";
import {
  afterProposalWrite,
  beforeProposalWrite,
  nextPatternIdFrom,
  type ProposalPatterns,
  proposalPatterns,
} from "./pattern_ids.ts";
import { readDecision } from "../records/decision.ts";
import { effectContent } from "./effect.ts";
import {
  type Proposal,
  proposalEquivalent,
  proposalToJson,
  readProposal,
  runProposalIds,
  sameIntent,
} from "../records/proposal.ts";
import { findLive, type LiveGeneration, planCooling } from "./residency.ts";
import { readRunLog, scanRunLog } from "./run_log.ts";
import { requireActiveRun } from "./run_input.ts";
import { syncViewOnDemand } from "./view_on_demand.ts";
import { nextBatchNumber, type ProposalBatch } from "./proposal_batch.ts";
import type { TextScreen } from "../model/unsafe_text.ts";
import { proposalProblems } from "../integrity/schemas.ts";

/** Caller-authored flags of a proposal (strings as given on the command line). */
export type ProposeInput = {
  run: string;
  operation?: string;
  newSubject?: boolean;
  tier?: string;
  key: string;
  target?: string;
  kind?: string;
  importance?: string;
  status?: string;
  trust?: string;
  source?: string;
  tags?: string;
  text?: string;
  rationale?: string;
  confidence?: string;
  observations?: string;
  evidence?: string;
  falsifier?: string;
  needsHuman?: boolean;
  question?: string;
};

/** Result of `propose`. */
export type ProposeResult = {
  proposal_id: string;
  /** False for an idempotent same-run retry (nothing written). */
  created: boolean;
  /** Set when preflight already knows the proposal will be held. */
  hold_reason: string | null;
  /** stderr lines from view synchronization. */
  notices: string[];
};

/** How a caller that stages many proposals in one locked operation (a share import) may stage. */
export type ProposeOptions = {
  /**
   * The caller guarantees the run holds no proposal for this key yet (an
   * import run takes each key once), so the same-run scan, which reads every
   * earlier proposal of the run, is skipped.
   */
  freshKey?: boolean;
  /**
   * Leave state.json to the caller's next save. The proposal and its log
   * markers are the durable record; the state would only gain the run's
   * `last_activity_at`, which the caller's commit saves.
   */
  deferStateSave?: boolean;
  /**
   * Stage into `batch` instead of writing: the log lines and the proposal
   * file are written for the whole batch by `writeProposalBatch` (implies
   * `deferStateSave`). Not for a Tier 3 subject that needs a new pattern ID,
   * which is allocated from the proposal files on disk.
   */
  batch?: ProposalBatch;
};

const OPERATIONS = ["set", "touch", "close"];
const KINDS = ["decision", "fact", "pref", "rule"];
const STATUSES = ["active", "watch", "closed"];
const CONFIDENCES = ["emerging", "developing", "established"];

/** Normalizes a tag list as the reference does: each tag cleaned, lowercase and valid; unique; at most 12. */
export function cleanTags(value: string | string[]): string[] {
  if (value.length === 0) return [];
  const parts = Array.isArray(value) ? value : value.split(",");
  const out: string[] = [];
  for (const raw of parts) {
    const tag = cleanScalar(raw, "tag", 40).toLowerCase();
    if (!TAG.test(tag)) throw invalid(`invalid tag: ${tag}`);
    if (!out.includes(tag)) out.push(tag);
  }
  if (out.length > 12) throw invalid("a memory entry may have at most 12 unique tags.");
  return out;
}

function invalid(message: string): BimriError {
  return new BimriError("invalid-input", message);
}

/** Validates the flags that need no store access; returns the cleaned key. */
export function validateProposeFlags(input: ProposeInput): string {
  requireRunId(input.run);
  const operation = input.operation ?? "set";
  if (!OPERATIONS.includes(operation)) throw invalid(`unsupported operation: ${operation}`);
  const key = requireKey(input.key);
  const trust = input.trust ?? "working";
  const source = input.source ?? "agent";
  if (trust === "contested") {
    throw invalid(
      "contested trust is derived from a conflict record and cannot be authored; use working, or confirmed for a direct human statement.",
    );
  }
  if (trust === "confirmed" && source !== "user" && source !== "system") {
    throw invalid("only directly human-stated or system memory may be confirmed.");
  }
  if (input.target !== undefined && !/^(R[0-9]+-E[0-9]+|P[0-9]+)$/.test(input.target)) {
    throw invalid(`invalid target ID: ${input.target}`);
  }
  return key;
}

/** The key's generation as the run observed it (its base revision plus cold state). */
function baseGeneration(
  store: Store,
  baseRevision: number,
  baseView: ParsedView,
  key: string,
): LiveGeneration | null {
  const hot = baseView.entries.find((e) => e.entry.key === key);
  if (hot) return { entry: hot.entry, raw: hot.raw, storage: "hot", line: hot.line };
  const cold = coldRecordOf(store.state, key);
  if (!cold) return null;
  if (baseRevision !== store.head.revision) {
    // The record is the key's current cold generation; it counts as observed only
    // if the commit that cooled it is not newer than the run's base.
    const cooling = readDecision(store.paths, cold.archived_by);
    if (
      !cooling || cooling.outcome !== "accepted" || typeof cooling.revision !== "number" ||
      cooling.revision > baseRevision
    ) {
      return null;
    }
  }
  const entry = parseAnyEntry(cold.raw_line);
  if (entry === null) return null;
  return {
    entry,
    raw: cold.raw_line,
    storage: "cold",
    line: -1,
    archiveProposalId: cold.archived_by,
    archiveDate: cold.archived_on,
  };
}

/**
 * Next proposal number of `run` (formats section 2), with the conflict and
 * resolution mentions it read (to record once the proposal is written).
 */
function nextProposalId(
  store: Store,
  run: string,
  markers: string[],
): { id: string; mentions: ProposalMentions } {
  let highest = 0;
  for (const id of runProposalIds(store.paths, run, markers)) {
    highest = Math.max(highest, Number(id.slice(-3)));
  }
  for (const id of markers) {
    if (id.startsWith(`${run}-Q`)) highest = Math.max(highest, Number(id.slice(-3)));
  }
  // Decisions without a proposal file (quarantine leftovers) still hold their number.
  for (let n = highest + 1; n <= 999; n++) {
    if (lstatOrNull(store.paths.decision(formatProposalId(run, n))) === null) break;
    highest = n;
  }
  // Every word-bounded mention in conflicts and resolutions (a derived cache
  // answers while neither folder changed; see proposal_mentions.ts).
  const mentions = readProposalMentions(store.paths);
  highest = Math.max(highest, highestMentionOf(mentions, run));
  const n = highest + 1;
  if (n > 999) {
    throw new BimriError(
      "refused",
      `${run} has exhausted its 999 proposal IDs; close it and start a new run.`,
    );
  }
  return { id: formatProposalId(run, n), mentions };
}

/**
 * Next pattern ID for a new Tier 3 subject (formats section 2): above
 * pattern_count, the Tier 3 lines of the run's base and of the head, and the
 * pattern_id of every proposal file (`known`, see pattern_ids.ts).
 */
function nextPatternId(store: Store, baseView: ParsedView, known: ProposalPatterns): string {
  const tier3: string[] = [];
  for (const { entry } of [...baseView.entries, ...store.head.view.entries]) {
    if (entry.tier === 3) tier3.push(entry.id);
  }
  return nextPatternIdFrom(store.state.pattern_count, tier3, known.highest);
}

/** Same-run rules (formats 6.4): identical intent -> existing ID; a different pending intent -> refused. */
function sameRunDuplicate(
  store: Store,
  candidate: Proposal,
  existingIds: string[],
): string | null {
  const run = candidate.run_id;
  const runBase = store.state.active_runs[run].base_revision;
  for (const id of existingIds) {
    const existing = readProposal(store.paths, id)?.proposal;
    if (!existing || existing.key !== candidate.key) continue;
    const decision = readDecision(store.paths, id);
    const same = sameIntent(existing, candidate);
    const pendingMessage =
      `${id} is already pending for ${candidate.key}; sync ${run} before submitting a different intent.`;
    if (decision === null || decision.outcome === "applying" || decision.outcome === "contested") {
      if (same) return id;
      throw new BimriError("refused", pendingMessage);
    }
    const revision = typeof decision.revision === "number" ? decision.revision : 0;
    if (revision > runBase) {
      if (same) return id;
      throw new BimriError(
        "refused",
        `${id} was decided after this run's base; sync ${run} before submitting another intent for ${candidate.key}.`,
      );
    }
  }
  return null;
}

/** Stages a proposal (must run under the engine lock); `screen` refuses unsafe authored text. */
export function propose(
  store: Store,
  input: ProposeInput,
  screen: TextScreen,
  options: ProposeOptions = {},
): ProposeResult {
  const key = validateProposeFlags(input);
  const operation = (input.operation ?? "set") as Proposal["operation"];
  const trust = input.trust ?? "working";
  const source = input.source ?? "agent";
  const sync = syncViewOnDemand(store);
  const run = requireActiveRun(store.state, input.run);
  const runMeta = store.state.active_runs[run];
  const baseRevision = runMeta.base_revision;
  // An older base is read only as the regular file it must be: never through a link.
  const baseInfo = baseRevision === store.head.revision
    ? null
    : lstatOrNull(store.paths.revision(baseRevision));
  const baseText = baseRevision === store.head.revision
    ? store.head.text
    : baseInfo?.isFile && !baseInfo.isSymlink
    ? readRevision(store.paths, baseRevision)
    : null;
  if (baseText === null) {
    throw new BimriError(
      "store-corrupt",
      `${run} base revision V${
        String(baseRevision).padStart(6, "0")
      } is missing or unsafe (it must be a regular file, not a link); nothing was staged. Run doctor.`,
    );
  }
  const baseView = baseRevision === store.head.revision
    ? store.head.view
    : parseViewShared(baseText, store.state.entry_max_chars);
  if (baseView.errors.length > 0) {
    throw new BimriError(
      "store-corrupt",
      `repair the run's base memory before proposing: ${baseView.errors.join("; ")}`,
    );
  }
  let base = baseGeneration(store, baseRevision, baseView, key);
  if (input.target !== undefined) {
    // As the reference resolves a target: a hot subject is found by its key
    // (a target naming no entry does not override it, one naming another
    // key's entry is refused); a cold subject must carry the target's ID.
    const named = baseView.entries.find((e) => e.entry.id === input.target);
    if (named && named.entry.key !== key) {
      throw invalid(
        `target ${input.target} belongs to key ${named.entry.key}, not ${key}; name that key or drop --target.`,
      );
    }
    if (base?.storage === "cold" && base.entry.id !== input.target) base = null;
    if (base === null) {
      throw invalid(`target ${input.target} does not exist in the run's base memory.`);
    }
  }
  if (input.newSubject && operation !== "set") {
    throw invalid("--new-subject is valid only with set.");
  }
  if (input.newSubject && base !== null) {
    throw invalid(`${key} already exists; omit --new-subject to update it.`);
  }
  if (operation !== "set" && base === null) {
    throw invalid(`${operation} requires an existing key or target.`);
  }
  if (operation === "touch" && base!.entry.tier !== 2) {
    throw invalid("only Tier 2 entries can be touched.");
  }

  const log = scanRunLog(run, readRunLog(store.paths, run));
  if (log.closed) {
    // A close that was interrupted after its closure markers but before the
    // state freed the handle: the run is over. A proposal staged now would be
    // one its closed log says must already be decided, which pauses shared
    // writes for every agent until the owner repairs authority.
    throw new BimriError(
      "refused",
      `${run} is already closed in its log (its close was interrupted); run close --run ${run} to finish closing it, then start a new run.`,
    );
  }
  const batch = options.batch;
  if (batch !== undefined && batch.run !== run) {
    throw new BimriError(
      "invalid-input",
      `a proposal batch of ${batch.run} cannot stage for ${run}.`,
    );
  }
  const existingIds = options.freshKey ? [] : runProposalIds(store.paths, run, log.proposalMarkers);
  // Within a batch, numbers follow the first allocation (made against every
  // reservation the rules name); the batch's own entries are not in the log yet.
  const allocated = batch !== undefined && batch.lastNumber > 0
    ? { id: formatProposalId(run, nextBatchNumber(store, batch)), mentions: null }
    : nextProposalId(store, run, log.proposalMarkers);
  const { id: proposalId, mentions } = allocated;
  const entryNumber = log.maxEntry + 1 + (batch?.entries.length ?? 0);
  if (entryNumber > 999) {
    throw new BimriError(
      "refused",
      `${run} has exhausted its 999 journal entry IDs; close it and start a new run.`,
    );
  }
  const newEntryId = entryId(run, entryNumber);
  const baseEntry: MemoryEntry | null = base?.entry ?? null;

  const tierNumber = input.tier !== undefined ? Number(input.tier) : baseEntry?.tier;
  if (tierNumber !== 1 && tierNumber !== 2 && tierNumber !== 3) {
    // A new key has no tier to inherit: name the missing flag (issue 45).
    throw invalid(
      input.tier === undefined
        ? `${key} is a new key, so --tier is required: add --tier 1, 2 or 3.`
        : "tier must be 1, 2 or 3.",
    );
  }
  const tier = tierNumber as 1 | 2 | 3;
  if ((operation === "touch" || operation === "close") && tier !== baseEntry!.tier) {
    // The reference rejects such a record on audit: it would act on a tier the
    // base entry is not in (a close "--tier 2" could remove a Tier 3 pattern).
    throw invalid(
      `proposal ${operation} tier does not match its immutable base entry (Tier ${
        baseEntry!.tier
      }); omit --tier.`,
    );
  }
  const kind = input.kind ?? (baseEntry?.tier === 1 ? baseEntry.kind : "fact");
  const importance = input.importance !== undefined
    ? Number(input.importance)
    : (baseEntry?.tier === 2 ? baseEntry.importance : 3);
  const status = input.status ?? (baseEntry?.tier === 2 ? baseEntry.status : "active");
  const tags = input.tags !== undefined
    ? cleanTags(input.tags)
    : cleanTags(baseEntry && baseEntry.tier !== 3 ? baseEntry.tags : []);
  const confidence = input.confidence ??
    (baseEntry?.tier === 3 ? baseEntry.confidence : "emerging");
  let observations = baseEntry?.tier === 3 ? baseEntry.observations : 1;
  if (input.observations !== undefined) {
    if (!/^-?[0-9]+$/.test(input.observations.trim())) {
      throw invalid("--observations must be a positive integer.");
    }
    observations = Number(input.observations);
  }
  if (tier === 1 && !KINDS.includes(kind)) throw invalid("Tier 1 requires a valid --kind.");
  if (tier === 2 && !STATUSES.includes(status)) throw invalid("Tier 2 requires a valid --status.");
  if (!Number.isInteger(importance) || importance < 1 || importance > 5) {
    throw invalid("importance must be 1 through 5.");
  }

  let text: string;
  if (operation === "touch" || operation === "close") {
    text = baseEntry!.text;
    if (codePointLength(text) > store.state.entry_max_chars) {
      // Touch and close author no text; keep the proposal within the cap while base_hash binds the exact line.
      const descriptor = `${operation} inherited ${baseEntry!.id} sha256:${sha256Hex(text)}`;
      text = [...descriptor].slice(0, store.state.entry_max_chars).join("");
    }
  } else {
    text = cleanScalar(input.text ?? "", "memory text", store.state.entry_max_chars);
  }
  const rationale = cleanScalar(input.rationale || text, "proposal rationale", 4000);
  // Touch and close carry the base entry's text, already in memory: only authored text is checked.
  if (operation !== "touch" && operation !== "close") screen.refuseUnsafe(text, "memory text");
  if (input.rationale) screen.refuseUnsafe(rationale, "proposal rationale");

  let evidence: string[] = [];
  let pattern: string | null = null;
  let knownPatterns: ProposalPatterns | null = null;
  let falsifierInput = input.falsifier;
  if (tier === 3) {
    if (operation !== "set") throw invalid("Tier 3 currently supports set proposals only.");
    if (!CONFIDENCES.includes(confidence)) throw invalid("Tier 3 requires a valid --confidence.");
    if (!Number.isInteger(observations) || observations < 1) {
      throw invalid("--observations must be a positive integer.");
    }
    falsifierInput = input.falsifier || (baseEntry?.tier === 3 ? baseEntry.falsifier : undefined);
    if (!falsifierInput) throw invalid("Tier 3 requires --falsifier.");
    const evidenceInput = input.evidence ||
      (baseEntry?.tier === 3 ? baseEntry.evidence.join(",") : newEntryId);
    evidence = evidenceInput.split(",").map((item) =>
      validateFixedId(pyStrip(item), ANY_ENTRY_ID, "evidence ID")
    );
    if (evidence.length > 24) throw invalid("a pattern may cite at most 24 evidence IDs.");
    if (baseEntry?.tier === 3) pattern = baseEntry.id;
    else {
      if (batch !== undefined) {
        throw new BimriError(
          "invalid-input",
          "a new Tier 3 pattern takes its ID from the proposal files: stage it outside a batch.",
        );
      }
      knownPatterns = proposalPatterns(store.paths);
      pattern = nextPatternId(store, baseView, knownPatterns);
    }
  }
  if (!Number.isInteger(observations) || observations < 1) {
    // Every tier stores observations; the reference refuses a record with fewer than one.
    throw invalid("proposal observations must be a positive integer.");
  }
  const question = cleanScalar(input.question ?? "", "question", 1000, true);
  const falsifier = cleanScalar(falsifierInput ?? "", "falsifier", 500, true);
  screen.refuseUnsafe(question, "question");
  if (falsifier !== (baseEntry?.tier === 3 ? baseEntry.falsifier : "")) {
    screen.refuseUnsafe(falsifier, "falsifier");
  }
  if (tier === 3 && (text.includes(" | Falsify: ") || falsifier.includes(" | Falsify: "))) {
    throw invalid(
      "Tier 3 text and falsifier cannot contain the reserved delimiter ' | Falsify: '.",
    );
  }

  const proposal: Proposal = {
    bimri_version: AUTHORITY_FORMAT,
    proposal_id: proposalId,
    run_id: run,
    actor: runMeta.actor,
    created_at: utcTimestamp(),
    operation,
    new_subject: Boolean(input.newSubject),
    tier,
    key,
    target_id: base ? base.entry.id : (input.target ?? null),
    entry_id: newEntryId,
    kind,
    importance,
    status,
    trust,
    source,
    tags,
    text,
    rationale,
    needs_human: Boolean(input.needsHuman),
    question,
    confidence,
    observations,
    evidence,
    falsifier,
    pattern_id: pattern,
    first_run: baseEntry?.tier === 2 ? baseEntry.first_run : run,
    base_revision: baseRevision,
    base_hash: lineHash(base?.raw ?? null),
    base_storage: base ? base.storage : "absent",
    base_archive_proposal_id: base?.storage === "cold" ? base.archiveProposalId ?? null : null,
    hold_reason: null,
    preflight_receipt: null,
  };

  const duplicate = sameRunDuplicate(store, proposal, existingIds);
  if (duplicate !== null) {
    return { proposal_id: duplicate, created: false, hold_reason: null, notices: sync.notices };
  }
  // Proves the derived summary current before anything is read or written, so
  // the checks below may use what it knows (the applying resolutions).
  noteAuthorityBaseline(store);
  preflight(store, proposal);
  const record = proposalToJson(proposal);
  // The record is immutable once written and every later command audits it:
  // one that the audit would reject must never be written.
  const problems = proposalProblems(record, proposalId);
  if (problems.length > 0) throw invalid(`proposal would be invalid: ${problems.join("; ")}.`);

  const marker =
    `[PROPOSE:${proposalId}] [${operation}] [K:${key}] [BASE:${proposal.base_hash}] ${text}`;
  if (batch !== undefined) {
    batch.entries.push(`[ID:${newEntryId}] [I:${importance}] ${rationale}`);
    batch.files.push({ id: proposalId, record });
    batch.markers.push(marker);
    batch.lastNumber = Number(proposalId.slice(-3));
    store.state.active_runs[run].last_activity_at = utcTimestamp();
    return {
      proposal_id: proposalId,
      created: true,
      hold_reason: proposal.hold_reason,
      notices: [],
    };
  }
  // Durable writes: the rationale entry, the immutable proposal, then its marker.
  invalidateAuditWitness(store.paths);
  const logPath = store.paths.log(run);
  appendLine(logPath, `[ID:${newEntryId}] [I:${importance}] ${rationale}`);
  faultPoint("after-propose-entry");
  const patternsBefore = beforeProposalWrite(store.paths, knownPatterns);
  if (!createRecord(store.paths.proposal(proposalId), record)) {
    throw new BimriError("io", `proposal ${proposalId} appeared while staging; retry propose.`);
  }
  afterProposalWrite(store.paths, patternsBefore, pattern);
  if (mentions !== null) recordScannedMentions(store.paths, mentions);
  faultPoint("after-proposal-file");
  appendLine(logPath, marker);
  store.state.active_runs[run].last_activity_at = utcTimestamp();
  if (!options.deferStateSave) {
    saveState(store.paths, store.state);
    refreshAuthoritySummary(store);
  }
  return {
    proposal_id: proposalId,
    created: true,
    hold_reason: proposal.hold_reason,
    notices: sync.notices,
  };
}

/**
 * Preflight against the accepted head (protocol 6): the key-specific base,
 * authority policy, hold reasons, receipt, and a dry run of the byte effect
 * including residency. Fills the base/receipt/hold fields of `proposal`.
 */
function preflight(store: Store, proposal: Proposal): void {
  const head = store.head;
  const state: State = store.state;
  const live = findLive(head.view, state, proposal.key);
  const liveHash = lineHash(live?.raw ?? null);
  if (proposal.base_hash !== liveHash) {
    if (proposal.operation === "set" && proposalEquivalent(proposal, live?.entry ?? null)) {
      throw new BimriError(
        "stale-base",
        `${proposal.key} already has the requested value; sync ${proposal.run_id} before proposing again.`,
      );
    }
    throw new BimriError(
      "stale-base",
      `${proposal.key} changed after this run observed it; sync ${proposal.run_id} before proposing against that key.`,
    );
  }
  if (proposal.source === "system") {
    throw invalid(
      "public proposals cannot use system provenance; use user, agent, or external for the actual source.",
    );
  }
  if (proposal.needs_human) {
    throw invalid(
      "semantic uncertainty is not a memory conflict; ask the owner conversationally, then submit the chosen memory change.",
    );
  }
  const ownerStated = proposal.source === "user" && proposal.trust === "confirmed";
  let hold: string | null = null;
  if (proposal.operation === "set" && live === null && !proposal.new_subject) {
    hold = "classification-required";
  }
  if (proposal.tier === 1 && (live === null || live.entry.tier !== 1) && !ownerStated) {
    hold = "tier1-human-authority-required";
  }
  if (
    live !== null && live.entry.tier !== 3 && live.entry.trust === "confirmed" &&
    (proposal.operation === "set" || proposal.operation === "close") && !ownerStated
  ) {
    hold = "confirmed-user-authority-required";
  }
  if (ownerResolutionInProgress(store, proposal.key)) hold = "owner-resolution-in-progress";

  proposal.base_revision = head.revision;
  proposal.base_hash = liveHash;
  proposal.base_storage = live ? live.storage : "absent";
  proposal.base_archive_proposal_id = live?.storage === "cold"
    ? live.archiveProposalId ?? null
    : null;
  if (live !== null) proposal.target_id = live.entry.id;
  proposal.preflight_receipt = {
    engine_release: ENGINE_COMPAT_RELEASE,
    observed_head_revision: head.revision,
    observed_head_hash: head.hash,
    observed_key_hash: liveHash,
  };
  proposal.hold_reason = hold;
  if (hold !== null) return;

  const effect = effectContent(head.text, proposal, live);
  const plan = planCooling(effect.text, state, proposal.key, head.text);
  if (plan === null) {
    proposal.hold_reason = "capacity-residency-required";
    return;
  }
  const parsed = parseViewShared(plan.text, state.entry_max_chars);
  if (parsed.errors.length > 0) {
    throw invalid(`proposal would create invalid memory: ${parsed.errors.join("; ")}`);
  }
  // A line that cannot be rendered back identically would break the grammar round trip.
  if (effect.effectLine !== null && parseAnyEntry(effect.effectLine) === null) {
    throw invalid("proposal would create a memory line that does not match the grammar.");
  }
}
