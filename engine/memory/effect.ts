/**
 * What a proposal does to the view, computed purely from a snapshot: the line
 * it writes, the edited view text, and whether current memory already holds
 * its effect. Shared by propose (preflight dry-run) and the commit protocol.
 */
import {
  insertIntoTier,
  linesToText,
  type MemoryEntry,
  normalizeTags,
  renderEntry,
  type Tier2Entry,
} from "../model/hot.ts";
import { splitLines } from "../model/text.ts";
import type { Proposal } from "../records/proposal.ts";
import type { LiveGeneration } from "./residency.ts";

/** The pointer every new Tier 1/2 line carries. */
export function logPointer(run: string): string {
  return `.bimri/log/${run}.md`;
}

/** The memory entry a `set` proposal writes. */
export function proposedEntry(proposal: Proposal): MemoryEntry {
  if (proposal.tier === 3) {
    return {
      tier: 3,
      id: proposal.pattern_id ?? "",
      key: proposal.key,
      confidence: proposal.confidence,
      observations: proposal.observations,
      evidence: [...proposal.evidence],
      text: proposal.text,
      falsifier: proposal.falsifier,
    };
  }
  const claim = {
    id: proposal.entry_id,
    key: proposal.key,
    trust: proposal.trust,
    source: proposal.source,
    tags: [...proposal.tags],
    text: proposal.text,
    pointer: logPointer(proposal.run_id),
  };
  if (proposal.tier === 1) return { ...claim, tier: 1, kind: proposal.kind };
  return {
    ...claim,
    tier: 2,
    importance: proposal.importance,
    status: proposal.status,
    first_run: proposal.first_run || proposal.run_id,
    last_run: proposal.run_id,
  };
}

/** The line a touch by `run` makes of the current Tier 2 generation. */
export function touchedEntry(current: Tier2Entry, run: string): Tier2Entry {
  return {
    ...current,
    tags: normalizeTags(current.tags),
    last_run: run,
    pointer: logPointer(run),
  };
}

/** A proposal as a human resolution commits it: Tier 1/2 claims become confirmed, source stays. */
export function humanConfirmed(proposal: Proposal): Proposal {
  return proposal.tier === 3 ? proposal : { ...proposal, trust: "confirmed" };
}

/** The view after applying `proposal` to `text` whose live generation is `live`. */
export type EffectResult = { text: string; archivedRaw: string | null; effectLine: string | null };

/** Edits the view lines for one proposal (formats 3.5); never writes. */
export function effectContent(
  text: string,
  proposal: Proposal,
  live: LiveGeneration | null,
): EffectResult {
  let lines = splitLines(text);
  if (proposal.operation === "close") {
    if (live === null) return { text, archivedRaw: null, effectLine: null };
    if (live.storage === "hot") {
      lines = [...lines.slice(0, live.line), ...lines.slice(live.line + 1)];
    }
    return { text: linesToText(lines), archivedRaw: live.raw, effectLine: null };
  }
  if (proposal.operation === "touch") {
    if (live === null || live.entry.tier !== 2) {
      throw new Error("touch requires an existing Tier 2 entry.");
    }
    const line = renderEntry(touchedEntry(live.entry, proposal.run_id));
    if (live.storage === "cold") lines = insertIntoTier(lines, 2, line);
    else lines = [...lines.slice(0, live.line), line, ...lines.slice(live.line + 1)];
    return { text: linesToText(lines), archivedRaw: null, effectLine: line };
  }
  const line = renderEntry(proposedEntry(proposal));
  if (live !== null && live.storage === "hot") {
    if (live.entry.tier === proposal.tier) {
      lines = [...lines.slice(0, live.line), line, ...lines.slice(live.line + 1)];
    } else {
      lines = [...lines.slice(0, live.line), ...lines.slice(live.line + 1)];
      lines = insertIntoTier(lines, proposal.tier, line);
    }
  } else {
    lines = insertIntoTier(lines, proposal.tier, line);
  }
  return { text: linesToText(lines), archivedRaw: null, effectLine: line };
}

/** True when two Tier 2 generations share every authority field (a touch only moves `L:`). */
export function sameTier2Authority(a: MemoryEntry | null, b: MemoryEntry | null): boolean {
  if (a === null || b === null || a.tier !== 2 || b.tier !== 2) return false;
  return a.key === b.key && a.text === b.text && a.source === b.source &&
    a.trust === b.trust && a.importance === b.importance && a.status === b.status &&
    a.tags.join(",") === b.tags.join(",") && a.first_run === b.first_run;
}
