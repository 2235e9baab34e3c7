/**
 * Governance survives import: pure rules that keep a record from carrying
 * more authority than its replica could have had. A record may name in
 * `resolves` only events it saw (its vector covers them, or they are its own
 * replica's earlier records), and another clone's change to memory the owner
 * confirmed here is not applied silently: it becomes an owner question, as a
 * local agent's proposal against confirmed memory would be held.
 */
import { parseEventId } from "./ids.ts";
import type { SharedEntry, ShareRecord } from "./record.ts";
import { vectorCovers } from "./vector.ts";

/** Why `record` claims more than it could have seen, or null when it does not. */
export function claimProblem(record: ShareRecord): string | null {
  // Its own entry counts the records it wrote before this one, never this one or later.
  const self = record.vector[record.replica];
  if (self !== undefined && self >= record.seq) {
    return `claims in its vector to have seen its own record ${record.replica}:${self}, which it had not written yet (refused)`;
  }
  if (record.replaces !== null) {
    const { replica, seq } = parseEventId(record.replaces);
    const own = replica === record.replica && seq < record.seq;
    if (!own && !vectorCovers(record.vector, record.replaces)) {
      return `claims to replace ${record.replaces}, which its vector shows it never saw (refused: a record replaces only what its replica had seen)`;
    }
  }
  for (const event of record.resolves) {
    const { replica, seq } = parseEventId(event);
    const own = replica === record.replica && seq < record.seq;
    if (!own && !vectorCovers(record.vector, event)) {
      return `claims to answer ${event}, which its vector shows it never saw (refused: only an answer given after seeing a question may close it)`;
    }
  }
  if (record.kind === "resolution" && record.actor !== "user") {
    return "is a resolution not given by the owner (refused)";
  }
  return null;
}

/**
 * True when an imported change (not an owner's answer) would replace or
 * close memory the owner confirmed here: it is put to the owner instead.
 */
export function needsOwner(record: ShareRecord, current: SharedEntry | null): boolean {
  if (record.kind === "resolution" || current === null || current.tier === 3) return false;
  return current.trust === "confirmed";
}

/**
 * True when `record` is an owner's answer: a resolution its replica's owner
 * gave (actor `user`). Only such a record may confirm a claim here as if the
 * owner had answered (a seed or a change carrying `T:confirmed` with an
 * agent's source is put to this clone's owner instead).
 */
export function isOwnerAnswer(record: Pick<ShareRecord, "kind" | "actor">): boolean {
  return record.kind === "resolution" && record.actor === "user";
}
