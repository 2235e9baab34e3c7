/**
 * Evidence about earlier commits, for the commit protocol (commit.ts): the
 * generation a proposal observed at its base, whether the head already
 * carries a proposal's effect, and which accepted writer changed its key
 * since. Read only when a proposal's base moved or a commit was interrupted.
 */
import { type MemoryEntry, parseAnyEntry, parseViewShared } from "../model/hot.ts";
import { PROPOSAL_ID } from "../model/ids.ts";
import { coldRecordOf } from "../model/state.ts";
import { lineHash } from "../model/text.ts";
import { localDate } from "../model/time.ts";
import { listNames, lstatOrNull } from "../store/files.ts";
import { readRevision, type Store } from "../store/store.ts";
import { previousMonth, readArchiveMonth, recentMonths } from "./archive.ts";
import { type Decision, readDecision } from "../records/decision.ts";
import { sameTier2Authority } from "./effect.ts";
import {
  type Proposal,
  proposalEquivalent,
  readProposal,
  runProposalIds,
} from "../records/proposal.ts";
import type { LiveGeneration } from "./residency.ts";
import { readConflict } from "../records/conflict.ts";
import { readRunLog, scanRunLog } from "./run_log.ts";

/** The generation a proposal observed at its base (hot line of its base revision, or cold record). */
export function proposalBaseEntry(
  store: Store,
  proposal: Proposal,
): { raw: string; entry: MemoryEntry } | null {
  if (proposal.base_hash === "absent") return null;
  if (proposal.base_storage === "cold") {
    const cold = coldRecordOf(store.state, proposal.key);
    if (
      cold && cold.archived_by === proposal.base_archive_proposal_id &&
      lineHash(cold.raw_line) === proposal.base_hash
    ) {
      const entry = parseAnyEntry(cold.raw_line);
      return entry ? { raw: cold.raw_line, entry } : null;
    }
    for (const month of monthsSince(proposal.created_at)) {
      const by = `[BY:${proposal.base_archive_proposal_id}] `;
      for (const row of readArchiveMonth(store.paths, month, by)) {
        if (
          row.reason === "cooled" && row.proposalId === proposal.base_archive_proposal_id &&
          lineHash(row.rawLine) === proposal.base_hash
        ) {
          const entry = parseAnyEntry(row.rawLine);
          if (entry) return { raw: row.rawLine, entry };
        }
      }
    }
    return null;
  }
  let entries = store.head.view.entries;
  if (proposal.base_revision !== store.head.revision) {
    const text = readRevision(store.paths, proposal.base_revision);
    if (text === null) return null;
    entries = parseViewShared(text, store.state.entry_max_chars).entries;
  }
  const found = entries.find((e) => e.entry.key === proposal.key);
  return found && lineHash(found.raw) === proposal.base_hash
    ? { raw: found.raw, entry: found.entry }
    : null;
}

/** Archive months from the one before `createdAt` (local) up to this month. */
function monthsSince(createdAt: string): string[] {
  const start = previousMonth(localDate(new Date(Date.parse(createdAt))).slice(0, 7));
  const months = recentMonths();
  const out: string[] = [];
  let month = months[0];
  while (month >= start && out.length < 240) {
    out.push(month);
    month = previousMonth(month);
  }
  return out;
}

/** True when the head already holds exactly this proposal's effect. */
export function effectReflectedAtHead(
  store: Store,
  proposal: Proposal,
  live: LiveGeneration | null,
): boolean {
  if (proposal.operation === "set") return proposalEquivalent(proposal, live?.entry ?? null);
  const base = proposalBaseEntry(store, proposal);
  if (proposal.operation === "close") {
    if (live !== null || base === null) return false;
    return closedByAcceptedProposal(store, proposal, base.raw);
  }
  if (!sameTier2Authority(base?.entry ?? null, live?.entry ?? null)) return false;
  if (live!.entry.tier === 2 && live!.entry.last_run === proposal.run_id) return true;
  // Only another run's touch can have moved L: while every authority field stayed.
  if (lineHash(live!.raw) === proposal.base_hash) return false;
  return acceptedKeyWriterAfter(store, proposal, "touch") !== null;
}

/** True when an accepted close (this proposal's own, or another run's) archived `raw`. */
function closedByAcceptedProposal(store: Store, proposal: Proposal, raw: string): boolean {
  for (const month of monthsSince(proposal.created_at)) {
    for (const row of readArchiveMonth(store.paths, month, raw)) {
      if (row.reason !== "closed" || row.rawLine !== raw) continue;
      if (row.proposalId === proposal.proposal_id) return true;
      const decision = readDecision(store.paths, row.proposalId);
      if (
        decision?.outcome === "accepted" &&
        typeof decision.revision === "number" && decision.revision <= store.head.revision
      ) {
        const closer = readProposal(store.paths, row.proposalId)?.proposal;
        if (closer?.operation === "close" && closer.key === proposal.key) return true;
      }
    }
  }
  return false;
}

/** An accepted writer of a key, with the revision its decision names. */
export type KeyWriter = { writer: Proposal; revision: number };

/**
 * The latest accepted proposal (of any run) that changed `proposal.key`
 * after its base, from the same observed generation. Runs only when a
 * proposal's base has moved. Bounded by what happened since the base: the
 * revisions after it that carry the key name the writing runs (entry ID and
 * `L:`), the archive months since the proposal name closers and replacers,
 * and only those runs' own proposals and decisions are read.
 */
export function acceptedKeyWriterAfter(
  store: Store,
  proposal: Proposal,
  operation: string | null,
): KeyWriter | null {
  const runs = new Set<string>();
  const marker = `[K:${proposal.key}]`;
  let patternSeen = proposal.tier === 3;
  const addEntryRuns = (entry: MemoryEntry) => {
    if (entry.tier === 3) {
      patternSeen = true;
      return;
    }
    runs.add(entry.id.split("-")[0]);
    if (entry.tier === 2) runs.add(entry.last_run);
  };
  for (let n = proposal.base_revision + 1; n <= store.head.revision; n++) {
    const text = n === store.head.revision ? store.head.text : readRevision(store.paths, n);
    if (text === null || !text.includes(marker)) continue;
    const found = parseViewShared(text, store.state.entry_max_chars).entries.find((e) =>
      e.entry.key === proposal.key
    );
    if (found) addEntryRuns(found.entry);
  }
  const cold = coldRecordOf(store.state, proposal.key);
  const coldEntry = cold ? parseAnyEntry(cold.raw_line) : null;
  if (coldEntry) addEntryRuns(coldEntry);
  for (const month of monthsSince(proposal.created_at)) {
    for (const row of readArchiveMonth(store.paths, month, marker)) {
      if (row.rawLine.includes(marker)) runs.add(row.proposalId.slice(0, 7));
    }
  }
  // Pattern lines carry no run; only then are all decisions consulted.
  if (patternSeen) return scanAllDecisionsForWriter(store, proposal, operation);
  let best: KeyWriter | null = null;
  for (const run of [...runs].sort()) {
    if (!/^R[0-9]{6}$/.test(run) || lstatOrNull(store.paths.log(run)) === null) continue;
    const markers = scanRunLog(run, readRunLog(store.paths, run)).proposalMarkers;
    for (const id of runProposalIds(store.paths, run, markers)) {
      if (id === proposal.proposal_id) continue;
      best = betterWriter(best, writerCandidate(store, proposal, operation, id));
    }
  }
  return best;
}

/** The writer evidence of proposal `id` if it qualifies, else null. */
function writerCandidate(
  store: Store,
  proposal: Proposal,
  operation: string | null,
  id: string,
): KeyWriter | null {
  let decision: Decision | null;
  try {
    decision = readDecision(store.paths, id);
  } catch {
    return null;
  }
  if (decision?.outcome !== "accepted" || typeof decision.revision !== "number") return null;
  const revision = decision.revision;
  if (!(proposal.base_revision < revision && revision <= store.head.revision)) return null;
  const writer = readProposal(store.paths, id)?.proposal;
  if (!writer || writer.key !== proposal.key) return null;
  if (operation !== null && writer.operation !== operation) return null;
  if (writer.base_hash === proposal.base_hash) return { writer, revision };
  // The owner's answer to a conflict commits a candidate staged from its own,
  // older base. It displaced exactly the generation this proposal observed
  // when that conflict was raised on it: the later writer is then proven.
  if (operation === null && typeof decision.resolution_id === "string") {
    const conflict = readConflict(store, decision.resolution_id);
    if (conflict?.key === proposal.key && conflict.current_hash === proposal.base_hash) {
      return { writer, revision };
    }
  }
  return null;
}

function betterWriter(a: KeyWriter | null, b: KeyWriter | null): KeyWriter | null {
  if (a === null) return b;
  if (b === null) return a;
  if (b.revision !== a.revision) return b.revision > a.revision ? b : a;
  return b.writer.proposal_id > a.writer.proposal_id ? b : a;
}

/** Fallback for Tier 3 keys, whose lines do not name a run: every decision is read. */
function scanAllDecisionsForWriter(
  store: Store,
  proposal: Proposal,
  operation: string | null,
): KeyWriter | null {
  let best: KeyWriter | null = null;
  for (const name of listNames(store.paths.folder("decisions"))) {
    const id = name.replace(/\.json$/, "");
    if (!PROPOSAL_ID.test(id) || id === proposal.proposal_id) continue;
    best = betterWriter(best, writerCandidate(store, proposal, operation, id));
  }
  return best;
}
