/**
 * The proofs an owner's answer must pass before any engine relies on it: the
 * conflict's live snapshot in the residency it recorded, a resolved record's
 * revisions holding its choice, and the head carrying a chosen candidate's
 * effect. Read-only, kept apart from resolve.ts (which writes answers) so
 * integrity (consumed.ts, quarantine.ts) proves answers without the write path.
 */
import { BimriError } from "../errors.ts";
import { parseViewShared } from "../model/hot.ts";
import { revisionName } from "../model/ids.ts";
import type { JsonObject } from "../model/json.ts";
import { lineHash } from "../model/text.ts";
import { listNames, readTextOrNull } from "../store/files.ts";
import { readRevision, type Store } from "../store/store.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import {
  type CandidateProposal,
  candidateSetMatches,
  type ConflictRecord,
  readCandidate,
  readResolution,
} from "./conflict.ts";
import { liveEntry } from "./live_entry.ts";

/**
 * Refuses an answer that neither engine could verify afterwards. The
 * reference proves a v5.1 conflict's live snapshot, at each revision an
 * answer names, in the residency the conflict recorded: a snapshot raised hot
 * must be that exact hot line there, a cold or absent one must not be hot
 * there. A subject cooled (or brought back) since the question was raised
 * keeps its line and hash but not its place, so comparing hashes alone would
 * record an answer the reference reports as damaged authority, pausing every
 * shared write. The reference's own resolve refuses it too.
 */
export function requireRecordedResidency(
  store: Store,
  conflict: ConflictRecord,
  revision: number,
): void {
  if (conflict.raw.bimri_version !== AUTHORITY_FORMAT || conflict.type === "manual-edit") return;
  const hot = hotEntryAt(store, revision, conflict.key, conflict.conflict_id);
  const holds = conflict.extra.current_storage === "hot"
    ? hot !== undefined && hot.raw === conflict.current_line
    : hot === undefined;
  if (holds) return;
  throw new BimriError(
    "refused",
    `${conflict.key} moved between hot memory and cold-current after ${conflict.conflict_id} was raised (its value is unchanged), so no answer to it can be verified by either engine. Nothing was written; the live value stands. Ask the agent to review the latest state.`,
  );
}

/** The hot entry of `key` at `revision` (undefined when absent); fails closed on a missing revision. */
function hotEntryAt(store: Store, revision: number, key: string, owner: string) {
  let view = store.head.view;
  if (revision !== store.head.revision) {
    const text = readRevision(store.paths, revision);
    if (text === null) {
      throw new BimriError(
        "store-corrupt",
        `${owner} names revision ${revisionName(revision)}, which is missing; run doctor.`,
      );
    }
    view = parseViewShared(text, store.state.entry_max_chars);
  }
  return view.entries.find((e) => e.entry.key === key);
}

/**
 * A resolved record is proven before a repeated resolve finalizes decisions
 * from it (as the reference validates an answer's effect): its revisions are
 * in order and reached, and the revision it names holds the choice (the live
 * value kept, or the chosen candidate's effect). A record that fails is
 * damaged authority: nothing is written. (Revisions before a candidate's base
 * are a graph issue, refused by resolve's full check before this runs.)
 */
export function requireProvenResolvedAnswer(
  store: Store,
  conflict: ConflictRecord,
  record: JsonObject,
): void {
  const id = conflict.conflict_id;
  const before = record.revision_before;
  const after = record.revision_after;
  const head = store.state.head_revision;
  const damaged = (why: string) =>
    new BimriError(
      "store-corrupt",
      `resolution ${id} is not proven: ${why}. Nothing was written; run doctor.`,
    );
  if (typeof before !== "number" || typeof after !== "number" || after > head || before > after) {
    throw damaged("its revisions are missing, out of order or beyond the head");
  }
  const choice = record.choice;
  if (choice === "current" || choice === "dismiss") {
    requireRecordedResidency(store, conflict, before);
    requireRecordedResidency(store, conflict, after);
    return;
  }
  if (typeof choice !== "string" || !conflict.proposal_ids.includes(choice)) {
    throw damaged("it chose no candidate of the conflict");
  }
  const candidate = readCandidate(store, choice);
  const found = hotEntryAt(store, after, conflict.key, `resolution ${id}`);
  let holds: boolean;
  if (candidate.operation === "close") holds = found === undefined;
  else if (candidate.operation === "touch") {
    holds = found !== undefined && found.entry.tier === 2 &&
      found.entry.last_run === candidate.run_id;
  } else {
    // A chosen set may have landed cold (cooled by its own commit): absent proves nothing either way.
    const expectedId = candidate.tier === 3 ? candidate.raw.pattern_id : candidate.raw.entry_id;
    // Another run may have made the same value current first (the answer then names its line).
    holds = found === undefined || found.entry.id === expectedId ||
      candidateSetMatches(candidate, found.entry);
  }
  if (!holds) {
    throw damaged(
      `resolved conflict ${id} names revision ${
        revisionName(after)
      }, but that revision does not contain the chosen proposal's effect`,
    );
  }
}

/**
 * Why the resolved answer to `conflict` is not proven (the same proof a
 * repeated resolve makes before finalizing from it), or null when it is or
 * when the conflict has no resolved answer. Reads that answer's record and
 * the revisions it names only.
 */
export function unprovenAnswerProblem(store: Store, conflict: ConflictRecord): string | null {
  const record = readResolution(store, conflict.conflict_id);
  if (!record || record.status !== "resolved") return null;
  try {
    requireProvenResolvedAnswer(store, conflict, record);
    return null;
  } catch (error) {
    if (!(error instanceof BimriError)) throw error;
    return error.message.replace(/ Nothing was written; run doctor\.$/, "");
  }
}

/** True when an archive month holds `[BY:<proposal>] [closed] <raw>`. */
function archivedClosedBy(store: Store, proposalId: string, raw: string): boolean {
  const suffix = ` [BY:${proposalId}] [closed] ${raw}`;
  for (const name of listNames(store.paths.folder("archive"))) {
    if (!/^[0-9]{4}-[0-9]{2}\.md$/.test(name)) continue;
    const text = readTextOrNull(store.paths.archiveMonth(name.slice(0, 7))) ?? "";
    for (const line of text.split("\n")) {
      if (
        /^\[ARCHIVED:[0-9]{4}-[0-9]{2}-[0-9]{2}\]$/.test(line.slice(0, 21)) &&
        line.slice(21) === suffix
      ) {
        return true;
      }
    }
  }
  return false;
}

/**
 * True when the loaded head already carries the effect that choosing
 * `candidate` produces. While a resolution is applying, later intents on the
 * key are held, so the head's generation of the key can only carry this
 * effect if the chosen commit happened.
 */
export function chosenEffectAtHead(
  store: Store,
  conflict: ConflictRecord,
  candidate: CandidateProposal,
): boolean {
  const live = liveEntry(store, conflict.key);
  if (candidate.operation === "close") {
    return live === null && conflict.current_line !== null &&
      archivedClosedBy(store, candidate.proposal_id, conflict.current_line);
  }
  if (live === null || lineHash(live.raw) === conflict.current_hash) return false;
  if (candidate.operation === "touch") {
    const snapshotId = /^\[([^\]]+)\]/.exec(conflict.current_line ?? "")?.[1];
    return live.entry.tier === 2 && live.entry.last_run === candidate.run_id &&
      live.entry.id === snapshotId;
  }
  const expectedId = candidate.tier === 3 ? candidate.raw.pattern_id : candidate.raw.entry_id;
  return live.entry.id === expectedId && candidateSetMatches(candidate, live.entry);
}
