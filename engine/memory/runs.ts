/**
 * The run lifecycle up to its end: the brief's head numbers, session keys,
 * bounded run dates, orphans, and which run a close addresses. Starting a run
 * lives in start_run.ts and closing one, which applies proposals, in
 * close_run.ts, so a command loads only its own part. Each reads only the
 * state, the head and the run's own log.
 */
import { BimriError } from "../errors.ts";
import { cleanScalar, requireActor } from "../model/ids.ts";
import { lineRunRefs } from "../model/hot.ts";
import type { ActiveRun, State } from "../model/state.ts";
import { codePointLength, pyStrip, sha256Hex } from "../model/text.ts";
import { now, parseTimestamp } from "../model/time.ts";
import type { Store } from "../store/store.ts";
import { requireActiveRun } from "./run_input.ts";

/** Inactivity after which an active run is an orphan candidate. */
const ORPHAN_MS = 24 * 60 * 60 * 1000;

/** The brief's numbers for the accepted head. */
export type HeadSummary = {
  revision: number;
  tokens: number;
  tiers: [number, number, number];
  softTargets: [number, number, number];
  /** The head's first validation errors (the brief's VALIDATION NEEDED block). */
  validationErrors: string[];
};

/** Result of `start`. */
export type StartResult = {
  run: string;
  actor: string;
  resumed: boolean;
  date: string;
  head: HeadSummary;
  orphans: string[];
  notices: string[];
  warnings: string[];
};

/** Numbers describing the head for briefs and status. */
export function headSummary(store: Store): HeadSummary {
  return {
    revision: store.head.revision,
    tokens: Math.floor(codePointLength(store.head.text) / 4),
    tiers: store.head.facts.tiers,
    softTargets: [store.state.tier1_max, store.state.tier2_max, store.state.tier3_max],
    validationErrors: store.head.facts.errors,
  };
}

/** `<actor>:<first 20 hex of sha256(trimmed session)>`. */
export function sessionKey(actor: string, session: string): string {
  return `${actor}:${sha256Hex(pyStrip(session)).slice(0, 20)}`;
}

/**
 * Active runs other than `current` idle for more than 24 hours, oldest number
 * first. The run a brief is printed for is never its own orphan: a session
 * resumed after a long pause would otherwise be invited to recover itself.
 */
export function orphanCandidates(
  state: State,
  current: string | null = null,
  at: Date = now(),
): string[] {
  const limit = at.getTime() - ORPHAN_MS;
  return Object.entries(state.active_runs)
    .filter(([id, run]) => {
      if (id === current) return false;
      const last = lastSeen(run);
      return last === undefined || last < limit;
    })
    .map(([id]) => id)
    .sort();
}

/**
 * When a run was last seen: its `last_activity_at`, else its `started_at`,
 * whichever first reads as a UTC timestamp. A run with neither (a hand-edited
 * entry) has no last-seen time and counts as idle, as in the reference.
 */
function lastSeen(run: ActiveRun): number | undefined {
  for (const value of [run.last_activity_at, run.started_at]) {
    if (typeof value !== "string") continue;
    const at = parseTimestamp(value);
    if (Number.isFinite(at)) return at;
  }
  return undefined;
}

/** A harness session name, checked as the reference checks it; returns it trimmed. */
export function validateSession(session: string): string {
  return cleanScalar(session, "session", 500);
}

/** How many run dates state keeps beyond the ones current memory still needs. */
export const RUN_DATES_KEPT = 500;

/**
 * Keeps run_dates bounded once it exceeds 500 entries: the 500 newest runs plus
 * every run that is active, session-mapped, or named in F:/L: of a current Tier 2 line.
 */
export function trimRunDates(store: Store): void {
  const dates = store.state.run_dates;
  const runs = Object.keys(dates);
  if (runs.length <= RUN_DATES_KEPT) return;
  // Run numbers parsed once (a comparator that parsed both sides would allocate
  // two strings per comparison, enough to cost a collection at 10,000 runs).
  const newestFirst = runs.map((run) => ({ run, n: Number(run.slice(1)) }))
    .sort((a, b) => b.n - a.n);
  const keep = new Set<string>(newestFirst.slice(0, RUN_DATES_KEPT).map((r) => r.run));
  for (const run of Object.keys(store.state.active_runs)) keep.add(run);
  for (const run of Object.values(store.state.session_runs)) keep.add(run);
  for (const run of store.head.facts.tier2Runs) keep.add(run);
  // Parsing every cold line is the costly part: skip it when nothing is left to drop.
  const drop = new Set(runs.filter((run) => !keep.has(run)));
  for (const cold of Object.values(store.state.cold_current)) {
    if (drop.size === 0) return;
    const refs = lineRunRefs(cold.raw_line);
    if (refs === null) return; // References cannot be computed: trim nothing.
    if (refs !== "other") {
      drop.delete(refs[0]);
      drop.delete(refs[1]);
    }
  }
  for (const run of drop) delete dates[run];
}

/** How `close` chooses its run. */
export type CloseTarget = { run?: string; actor?: string; session?: string };

/** Finds the run a close addresses: --run, an actor+session mapping, or the only active run. */
export function resolveCloseTarget(state: State, target: CloseTarget): string {
  // As in the reference, an empty value counts as not given.
  if (target.run) return requireActiveRun(state, target.run);
  if (target.actor || target.session) {
    if (!target.actor || !target.session) {
      throw new BimriError(
        "invalid-input",
        "--actor and --session must be provided together, or use --run.",
      );
    }
    const key = sessionKey(requireActor(target.actor), validateSession(target.session));
    const mapped = state.session_runs[key];
    if (!mapped || !state.active_runs[mapped]) {
      throw new BimriError(
        "unknown-run",
        "no active BIMRI run is mapped to that actor and session.",
      );
    }
    return mapped;
  }
  const active = Object.keys(state.active_runs).sort();
  if (active.length === 0) {
    throw new BimriError("unknown-run", "there are no active runs to close.");
  }
  if (active.length > 1) {
    throw new BimriError(
      "refused",
      `multiple runs are active; close explicitly with --run. Active: ${active.join(", ")}`,
    );
  }
  return active[0];
}
