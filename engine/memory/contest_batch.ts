/**
 * Raises many stale-base candidates at once (a share pull's deferred
 * questions): every conflict record, then the conflict count, then every
 * `contested` decision, each group made durable once instead of once per
 * candidate.
 *
 * The order of the durable steps is the one a single raise takes (conflict
 * record, state, decision), group by group, so a crash between groups leaves
 * only states a crash inside single raises can leave: conflicts naming
 * candidates without their decision, which the candidates' sync contests
 * again into the same conflict (same key and live hash), never a second one.
 */
import { BimriError } from "../errors.ts";
import { conflictId } from "../model/ids.ts";
import type { JsonObject } from "../model/json.ts";
import { lineHash, sha256Hex } from "../model/text.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { faultPoint } from "../store/fault.ts";
import { createExclusiveMany, pathExists, syncDir } from "../store/files.ts";
import { readRecord, replaceRecord } from "../store/records.ts";
import { saveState, type Store } from "../store/store.ts";
import { readDecision } from "../records/decision.ts";
import { type LiveGeneration, staleBaseRecord } from "./conflicts.ts";
import { readProposalMentions, recordScannedMentions } from "./proposal_mentions.ts";
import { decisionRecord } from "./decision_record.ts";

/** One staged candidate to contest against the key's live generation. */
export type ContestCandidate = {
  candidateId: string;
  /** The proposal file's exact bytes (its hash is recorded in the conflict). */
  candidateBytes: Uint8Array;
  key: string;
  live: LiveGeneration;
};

/** Where a candidate went: its conflict, and whether this batch created that conflict. */
export type ContestOutcome = { conflictId: string; created: boolean };

/**
 * Contests `candidates` in order. `known(key, currentHash)` names the open
 * stale-base conflict a candidate joins (the caller's index of open
 * conflicts); candidates of one key and live hash in this batch share one
 * new conflict. Each decision records `revision` (the head at decision time).
 */
export function contestCandidates(
  store: Store,
  candidates: ContestCandidate[],
  known: (key: string, currentHash: string) => { id: string; n: number } | null,
): ContestOutcome[] {
  const { paths } = store;
  const revision = store.head.revision;
  /** Conflicts this batch writes, by ID: new ones created, existing ones grown. */
  const written = new Map<string, { record: JsonObject; created: boolean }>();
  const fresh = new Map<string, string>();
  const outcomes: ContestOutcome[] = [];
  let next = store.state.conflict_count + 1;
  let highest = store.state.conflict_count;
  for (const c of candidates) {
    const currentHash = lineHash(c.live.line);
    const hash = sha256Hex(c.candidateBytes);
    const at = `${c.key}\n${currentHash}`;
    const existing = fresh.get(at) ?? known(c.key, currentHash)?.id ?? null;
    if (existing !== null) {
      let entry = written.get(existing);
      if (entry === undefined) {
        const record = readRecord(paths.conflict(existing), `conflict ${existing}`)!.value;
        entry = { record, created: false };
        written.set(existing, entry);
      }
      const ids = (entry.record.proposal_ids as string[]) ?? [];
      if (!ids.includes(c.candidateId)) {
        entry.record = {
          ...entry.record,
          proposal_ids: [...ids, c.candidateId],
          proposal_hashes: {
            ...(entry.record.proposal_hashes as JsonObject),
            [c.candidateId]: hash,
          },
        };
      }
      highest = Math.max(highest, Number(existing.slice(1)));
      outcomes.push({ conflictId: existing, created: false });
      continue;
    }
    while (next <= 999999 && pathExists(paths.conflict(conflictId(next)))) next++;
    if (next > 999999) throw new BimriError("refused", "the store has used every conflict number.");
    const id = conflictId(next++);
    highest = Math.max(highest, Number(id.slice(1)));
    written.set(id, {
      record: staleBaseRecord(id, c.key, c.live, { [c.candidateId]: hash }),
      created: true,
    });
    fresh.set(at, id);
    outcomes.push({ conflictId: id, created: true });
  }
  if (candidates.length === 0) return outcomes;
  // Each file is synced as it is written; the folder once, before the count and decisions name them.
  const creates: { id: string; path: string; data: string }[] = [];
  for (const [id, { record, created }] of written) {
    if (!created) replaceRecord(paths.conflict(id), record);
    else creates.push({ id, path: paths.conflict(id), data: canonicalJson(record) });
  }
  const taken = createExclusiveMany(creates);
  if (taken >= 0) {
    throw new BimriError("io", `conflict ${creates[taken].id} appeared while raising; retry.`);
  }
  syncDir(paths.folder("conflicts"));
  faultPoint("after-conflict-created");
  if (highest > store.state.conflict_count) {
    store.state.conflict_count = highest;
    saveState(paths, store.state);
  }
  const decided = new Set<string>();
  let decisions: { path: string; data: string }[] = [];
  for (const [i, c] of candidates.entries()) {
    if (decided.has(c.candidateId) || readDecision(paths, c.candidateId) !== null) continue;
    decided.add(c.candidateId);
    const decision = decisionRecord(c.candidateId, "contested", {
      conflict_id: outcomes[i].conflictId,
      revision,
    });
    decisions.push({ path: paths.decision(c.candidateId), data: canonicalJson(decision) });
  }
  // A decision already there (decided meanwhile) is kept; the others are still written.
  for (let taken = 0; taken >= 0; decisions = decisions.slice(taken + 1)) {
    taken = createExclusiveMany(decisions);
  }
  syncDir(paths.folder("decisions"));
  // The derived cache of proposal numbers named in conflicts, read afresh once for the batch.
  recordScannedMentions(paths, readProposalMentions(paths));
  return outcomes;
}
