/**
 * Conflict records (protocol section 9): allocation of C###### IDs, creation
 * of stale-base and manual-edit conflicts, and growth of an open conflict
 * while no resolution exists.
 */
import { BimriError } from "../errors.ts";
import { conflictId } from "../model/ids.ts";
import { lineHash, sha256Hex } from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import { pathExists } from "../store/files.ts";
import { faultPoint } from "../store/fault.ts";
import type { JsonObject } from "../model/json.ts";
import { createRecord, readRecord, replaceRecord } from "../store/records.ts";
import { saveState, type Store } from "../store/store.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import { trackMentions } from "./proposal_mentions.ts";

/** Key used by manual-edit recovery reviews. */
export const MANUAL_EDIT_KEY = "manual.bimri";
/** Fixed question of a manual-edit conflict. */
export const MANUAL_EDIT_QUESTION =
  "BIMRI found a direct edit to generated hot memory. Review the preserved bytes and re-submit any intended memory as proposals.";

/** Where the live generation of a key was when a conflict was raised. */
export type LiveGeneration = {
  line: string | null;
  storage: "hot" | "cold" | "absent";
  archiveProposalId?: string;
  archiveDate?: string;
};

/** The stale-base question for `key`. */
export function staleBaseQuestion(key: string): string {
  return `Concurrent work changed ${key} after both runs observed the same value. Keep the live value or accept the candidate?`;
}

function allocateConflictId(store: Store): { id: string; n: number } {
  let n = store.state.conflict_count + 1;
  while (n <= 999999 && pathExists(store.paths.conflict(conflictId(n)))) n++;
  if (n > 999999) throw new BimriError("refused", "the store has used every conflict number.");
  return { id: conflictId(n), n };
}

/**
 * The highest conflict number in use: `conflict_count`, or above it the
 * conflict files a commit created before it was cut short, before it could
 * save the count (allocation probes upward from the count, so they follow it
 * without a gap).
 */
function highestConflictNumber(store: Store): number {
  let n = store.state.conflict_count;
  while (n < 999999 && pathExists(store.paths.conflict(conflictId(n + 1)))) n++;
  return n;
}

/**
 * Finds an open (unresolved) conflict of `type` on `key` with `currentHash`,
 * newest first, including one a cut-short commit left above `conflict_count`:
 * its retry must grow that conflict, not ask the owner the same question twice.
 */
export function findOpenConflict(
  store: Store,
  type: string,
  key: string,
  currentHash: string,
  skipDamaged = false,
): { id: string; n: number } | null {
  for (let n = highestConflictNumber(store); n >= 1; n--) {
    const id = conflictId(n);
    if (pathExists(store.paths.resolution(id))) continue;
    let record;
    try {
      record = readRecord(store.paths.conflict(id), `conflict ${id}`);
    } catch (error) {
      if (!skipDamaged || !(error instanceof BimriError)) throw error;
      continue;
    }
    if (!record) continue;
    const v = record.value;
    if (v.type === type && v.key === key && v.current_hash === currentHash) return { id, n };
  }
  return null;
}

/** Counts a conflict found above `conflict_count` (left by a cut-short commit) as allocated. */
function adoptConflictNumber(store: Store, n: number): void {
  if (n <= store.state.conflict_count) return;
  store.state.conflict_count = n;
  saveState(store.paths, store.state);
}

// share: one builder of a new stale-base conflict record, shared with the batch in contest_batch.ts.
/** A new stale-base conflict record on `key` whose candidates are `hashes` (ID -> proposal hash). */
export function staleBaseRecord(
  id: string,
  key: string,
  live: LiveGeneration,
  hashes: Record<string, string>,
): JsonObject {
  const extra: JsonObject = { current_storage: live.storage };
  if (live.storage === "cold") {
    extra.current_archive_proposal_id = live.archiveProposalId ?? null;
    extra.current_archive_date = live.archiveDate ?? null;
  }
  return {
    bimri_version: AUTHORITY_FORMAT,
    conflict_id: id,
    created_at: utcTimestamp(),
    current_hash: lineHash(live.line),
    current_line: live.line,
    extra,
    key,
    proposal_hashes: { ...hashes },
    proposal_ids: Object.keys(hashes),
    question: staleBaseQuestion(key),
    type: "stale-base",
  };
}
// end share

/**
 * Records a contested candidate: appends it to the open conflict with the same
 * key and live hash, or creates a new stale-base conflict (saving conflict_count).
 */
export function raiseStaleBaseConflict(
  store: Store,
  candidateId: string,
  candidateBytes: Uint8Array,
  key: string,
  live: LiveGeneration,
  known?: (currentHash: string) => { id: string; n: number } | null,
): { conflictId: string; created: boolean } {
  const currentHash = lineHash(live.line);
  const candidateHash = sha256Hex(candidateBytes);
  // A caller that indexed the open conflicts (a share pull) answers without a scan.
  const found = known
    ? known(currentHash)
    : findOpenConflict(store, "stale-base", key, currentHash);
  if (found) {
    const existing = found.id;
    const path = store.paths.conflict(existing);
    const record = readRecord(path, `conflict ${existing}`)!.value;
    const ids = (record.proposal_ids as string[]) ?? [];
    if (!ids.includes(candidateId)) {
      const hashes = { ...(record.proposal_hashes as JsonObject), [candidateId]: candidateHash };
      trackMentions(store.paths, path, () =>
        replaceRecord(path, {
          ...record,
          proposal_ids: [...ids, candidateId],
          proposal_hashes: hashes,
        }));
    }
    adoptConflictNumber(store, found.n);
    return { conflictId: existing, created: false };
  }
  const { id, n } = allocateConflictId(store);
  const path = store.paths.conflict(id);
  trackMentions(
    store.paths,
    path,
    () => createRecord(path, staleBaseRecord(id, key, live, { [candidateId]: candidateHash })),
  );
  faultPoint("after-conflict-created");
  store.state.conflict_count = Math.max(store.state.conflict_count, n);
  saveState(store.paths, store.state);
  return { conflictId: id, created: true };
}

/**
 * Records a preserved manual edit: adds the recovery file to the open
 * manual-edit conflict, or creates one (saving conflict_count).
 */
export function raiseManualEditConflict(
  store: Store,
  recoveryFile: string,
): { conflictId: string; created: boolean } {
  // A damaged conflict record cannot be the open review (the reference skips
  // it too): the owner is still asked, under a new ID, while it awaits repair.
  const found = findOpenConflict(store, "manual-edit", MANUAL_EDIT_KEY, "absent", true);
  if (found) {
    const existing = found.id;
    const path = store.paths.conflict(existing);
    const record = readRecord(path, `conflict ${existing}`)!.value;
    const extra = (record.extra ?? {}) as JsonObject;
    const files = [...((extra.recovery_files as string[]) ?? [])];
    if (!files.includes(recoveryFile)) {
      files.push(recoveryFile);
      files.sort();
      trackMentions(store.paths, path, () =>
        replaceRecord(path, {
          ...record,
          extra: { ...extra, recovery_file: files[0], recovery_files: files },
        }));
    }
    adoptConflictNumber(store, found.n);
    return { conflictId: existing, created: false };
  }
  const { id, n } = allocateConflictId(store);
  const path = store.paths.conflict(id);
  trackMentions(store.paths, path, () =>
    createRecord(path, {
      bimri_version: AUTHORITY_FORMAT,
      conflict_id: id,
      created_at: utcTimestamp(),
      current_hash: "absent",
      current_line: null,
      extra: { recovery_file: recoveryFile, recovery_files: [recoveryFile] },
      key: MANUAL_EDIT_KEY,
      proposal_hashes: {},
      proposal_ids: [],
      question: MANUAL_EDIT_QUESTION,
      type: "manual-edit",
    }));
  store.state.conflict_count = Math.max(store.state.conflict_count, n);
  saveState(store.paths, store.state);
  return { conflictId: id, created: true };
}
