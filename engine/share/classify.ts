/**
 * Pure decisions of an import: what a memory entry's shared content is, and
 * whether an incoming record applies, is already satisfied, or is a
 * concurrent change the owner must decide.
 */
import type { Tier1Entry, Tier2Entry, Tier3Entry } from "../model/hot.ts";
import type { SharedEntry, ShareRecord } from "./record.ts";
import { vectorCovers } from "./vector.ts";
import type { Proposal } from "../records/proposal.ts";

/** What a memory entry (or a proposal) holds per tier, as far as its shared content goes. */
type EntryFields =
  | Pick<Tier1Entry, "tier" | "text" | "kind" | "trust" | "source" | "tags">
  | Pick<Tier2Entry, "tier" | "text" | "importance" | "status" | "trust" | "source" | "tags">
  | Pick<Tier3Entry, "tier" | "text" | "confidence" | "observations" | "evidence" | "falsifier">;

/** The shared content of a local entry (local IDs, pointers and run markers left out). */
export function sharedEntryOf(entry: EntryFields | null): SharedEntry | null {
  if (entry === null) return null;
  if (entry.tier === 1) {
    return {
      tier: 1,
      text: entry.text,
      kind: entry.kind,
      trust: entry.trust,
      source: entry.source,
      tags: [...entry.tags],
    };
  }
  if (entry.tier === 2) {
    return {
      tier: 2,
      text: entry.text,
      importance: entry.importance,
      status: entry.status,
      trust: entry.trust,
      source: entry.source,
      tags: [...entry.tags],
    };
  }
  return {
    tier: 3,
    text: entry.text,
    confidence: entry.confidence,
    observations: entry.observations,
    evidence: [...entry.evidence],
    falsifier: entry.falsifier,
  };
}

/**
 * True when two contents are the same memory: the whole entry (text, tier,
 * importance, status, kind, trust, source, tags; a pattern's fields).
 */
export function sameContent(a: SharedEntry | null, b: SharedEntry | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.tier !== b.tier || a.text !== b.text) return false;
  if (a.tier === 3 && b.tier === 3) {
    return a.confidence === b.confidence && a.observations === b.observations &&
      a.falsifier === b.falsifier && a.evidence.join(",") === b.evidence.join(",");
  }
  if (a.tier === 3 || b.tier === 3) return false;
  if (a.trust !== b.trust || a.source !== b.source || a.tags.join(",") !== b.tags.join(",")) {
    return false;
  }
  if (a.tier === 1 && b.tier === 1) return a.kind === b.kind;
  if (a.tier === 2 && b.tier === 2) return a.importance === b.importance && a.status === b.status;
  return false;
}

/** What the local store holds for a key, in shared terms. */
export type KeyGeneration = {
  /** Shared events whose effect the current generation carries (empty: none known). */
  events: string[];
  /** The current content (null: absent). */
  content: SharedEntry | null;
};

/** How an incoming record relates to the local generation of its key. */
export type Classification =
  /** The record saw the local generation (or replaced it): its effect becomes current. */
  | "apply"
  /** Concurrent, but the effect is already current: nothing to change. */
  | "noop"
  /** Concurrent and different: an ordinary conflict for the owner. */
  | "conflict";

/** Classifies `record` against the key's local generation. */
export function classifyRecord(record: ShareRecord, local: KeyGeneration): Classification {
  const follows = local.events.length === 0
    ? local.content === null
    : record.replaces !== null && local.events.includes(record.replaces);
  if (follows) return "apply";
  if (local.events.length > 0 && local.events.some((e) => vectorCovers(record.vector, e))) {
    return "apply";
  }
  if (sameContent(record.entry, local.content)) return "noop";
  return "conflict";
}

/**
 * True when `entry` is a claim the owner confirmed while its source is not
 * the owner's (an answer to a conflict renders `T:confirmed` and keeps the
 * source): a plain proposal cannot state it, only an owner's answer can.
 */
export function confirmedByAnswer(entry: SharedEntry | null): boolean {
  return entry !== null && entry.tier !== 3 && entry.trust === "confirmed" &&
    entry.source !== "user" && entry.source !== "system";
}

/** A candidate's content as an owner's answer commits it (Tier 1/2: `T:confirmed`). */
export function asAnswered(entry: SharedEntry | null): SharedEntry | null {
  return entry === null || entry.tier === 3 ? entry : { ...entry, trust: "confirmed" };
}

/** The candidate an owner's answer would confirm: `asAnswered` undone (Tier 1/2: `T:working`). */
export function asCandidate(entry: SharedEntry | null): SharedEntry | null {
  return entry === null || entry.tier === 3 ? entry : { ...entry, trust: "working" };
}

/** The content a proposal would write (for matching an answer to a candidate). */
export function proposalContent(p: Proposal): SharedEntry | null {
  if (p.operation === "close") return null;
  // A proposal carries the fields of every tier: read as an entry of its own tier.
  return sharedEntryOf(p as EntryFields);
}
