/**
 * `share pull`: imports every other replica's records this replica has not
 * imported, in causal order (ties: lowest replica ID first), through the
 * normal commit protocol. Each replica's records are proposed by an import
 * run (actor `share-<replica>`) and synced:
 *
 * - a record that replaced (or saw) the key's local generation applies; when
 *   a later record of the same pull supersedes it, only the newest effect is
 *   committed;
 * - a concurrent record whose effect is already current is a no-op;
 * - a concurrent, different record becomes a contested candidate in an
 *   ordinary stale-base conflict for the owner;
 * - an owner's resolution exported by another replica dominates both sides:
 *   it applies, and this replica's own open conflict on the key is closed
 *   with the same answer instead of asking the owner again.
 *
 * The effects to commit are decided first and saved in the share state with
 * the cursor that assumes them (`importing`); a pull killed while committing
 * them is finished by the next locked command (`finishImport`).
 */
import type { Store } from "../store/store.ts";
import { closeRun } from "../memory/close_run.ts";
import { sameContent } from "./classify.ts";
import { eventId, isImportActor } from "./ids.ts";
import {
  isProblem,
  moreProblemsLine,
  namedProblems,
  problemMessage,
  readRecordFile,
  scanShare,
  type ShareProblem,
} from "./scan.ts";
import { saveShare, seeHead, seenVector } from "./state.ts";
import { quietFolders } from "./folder_names.ts";
import type { ShareContext } from "./context.ts";
import { holdUntrusted } from "./trust.ts";
import { pullLeftUnfinished, readContesting, saveContesting } from "./deferred.ts";
import { Pull, type PullResult } from "./pull.ts";
import { ImportOrder } from "./import_order.ts";
import { registerImportFinisher } from "./import_hook.ts";

/**
 * Finishes a pull killed while committing its decided effects (the share
 * state's `importing` list), under the engine lock before anything else may
 * change memory: the import runs it left open are closed (which applies what
 * they staged), then every listed effect that is not current yet is
 * committed, so each lands exactly once. Returns how many were committed here.
 */
export function finishImport(store: Store, ctx: ShareContext): number {
  if (importing || !pullLeftUnfinished(ctx)) return 0;
  importing = true;
  try {
    return finishImportNow(store, ctx);
  } finally {
    importing = false;
  }
}

/** True while a pull of this process runs (its own bookkeeping is not another engine's). */
export function pullInProgress(): boolean {
  return importing;
}

/**
 * True while this process imports: closing an import run runs the recovery
 * hook of every locked command (finishPendingExports), which must not take
 * the pull's own list for a killed pull's.
 */
let importing = false;

function finishImportNow(store: Store, ctx: ShareContext): number {
  for (const [run, active] of Object.entries(store.state.active_runs)) {
    if (isImportActor(active.actor)) {
      closeRun(store, run, "partial", "share pull was interrupted; finished by the next command");
    }
  }
  const pull = new Pull(store, ctx);
  for (const event of ctx.state.importing) {
    const [replica, seq] = event.split(":");
    const record = readRecordFile(ctx, replica, Number(seq));
    if (isProblem(record)) continue; // A record gone bad since: refused by the next scan.
    if (sameContent(record.entry, pull.liveContent(record.key))) continue;
    pull.pendingApply.set(record.key, record);
  }
  const due = pull.pendingApply.size;
  const raised = new Set(Object.values(ctx.state.candidates));
  for (const event of readContesting(ctx)) {
    if (raised.has(event)) continue;
    const [replica, seq] = event.split(":");
    const record = readRecordFile(ctx, replica, Number(seq));
    if (!isProblem(record)) pull.deferContest(record, event);
  }
  pull.finish();
  saveContesting(ctx, []);
  ctx.state.importing = [];
  seeHead(ctx.state, store);
  ctx.state.pulling = false;
  saveShare(ctx);
  return due;
}

/** Imports every waiting record; must run under the engine lock on a replica's store. */
export function pullShare(
  store: Store,
  ctx: ShareContext,
  max: number = PULL_MAX_DEFAULT,
): PullResult {
  finishImport(store, ctx);
  importing = true;
  try {
    return pullNow(store, ctx, max);
  } finally {
    importing = false;
  }
}

/** The most records one pull imports unless told otherwise (`share pull --max N`). */
export const PULL_MAX_DEFAULT = 100_000;

function pullNow(store: Store, ctx: ShareContext, max: number): PullResult {
  const scan = scanShare(ctx);
  if (!ctx.state.pulling && scan.pending.size > 0) {
    ctx.state.pulling = true;
    saveShare(ctx);
  }
  const pull = new Pull(store, ctx);
  pull.result.problems.push(...scan.problems);
  pull.result.questions = holdUntrusted(ctx, scan.pending, scan.waiting);
  const order = new ImportOrder(ctx);
  const queues = [...scan.pending.entries()].sort((a, b) => a[0] < b[0] ? -1 : 1);
  const done = new Set<string>();
  let progressed = true;
  let taken = 0;
  while (progressed && taken < max) {
    progressed = false;
    // Keys with a record still waiting: a later record of the key waits too.
    const held = new Set<string>();
    for (const [, records] of queues) {
      for (const record of records) {
        const event = eventId(record.replica, record.seq);
        if (done.has(event)) continue;
        if (taken >= max) break;
        if (order.ready(record, held)) {
          taken++;
          pull.process(record);
          order.markDone(record.replica, record.seq, record.passed ?? 0);
          done.add(event);
          progressed = true;
        } else held.add(record.key);
      }
    }
  }
  for (const [, records] of queues) {
    for (const r of records) if (!done.has(eventId(r.replica, r.seq))) pull.result.blocked++;
  }
  // Records left for the next pull by the cap (they are not blocked).
  if (taken >= max) {
    pull.result.remaining = pull.result.blocked;
    pull.result.blocked = 0;
  }
  // The decisions first: the effects still to commit, with the vector and key
  // map that assume them. A pull killed while committing them leaves this
  // list for `finishImport`; without it the next pull would read its own
  // committed effects as concurrent edits.
  ctx.state.importing = [...pull.pendingApply.values()].map((r) => eventId(r.replica, r.seq));
  // The questions still to raise, before the cursor that passes them (deferred.ts).
  saveContesting(ctx, pull.deferred.map((d) => d.event));
  if (ctx.state.importing.length > 0 || pull.deferred.length > 0) saveShare(ctx);
  pull.finish();
  saveContesting(ctx, []);
  ctx.state.importing = [];
  const counts = ctx.state.counts;
  counts.applied += pull.result.applied;
  counts.noop += pull.result.noop;
  counts.superseded += pull.result.superseded;
  counts.conflicts += pull.result.conflicts;
  counts.held += pull.result.held;
  counts.resolved += pull.result.resolved;
  seeHead(ctx.state, store);
  ctx.state.pulling = false;
  ctx.state.quiet = quietFolders(
    scan.replicas,
    new Set([ctx.state.replica]),
    seenVector(ctx.state),
    ctx.state.ahead,
    ctx.state.quiet,
  );
  saveShare(ctx);
  return pull.result;
}

/** The stderr lines for refused files: the first few named, the rest counted in one line. */
export function problemLines(problems: ShareProblem[]): string[] {
  const more = moreProblemsLine(problems);
  return [
    ...namedProblems(problems).named.map((p) => `BIMRI ERROR: ${problemMessage(p)}`),
    ...(more === null ? [] : [`BIMRI ERROR: ${more}`]),
  ];
}

// Export (export.ts) finishes a pull killed part-way through this module,
// reached by the hook whenever this module is loaded.
registerImportFinisher({ finishImport, pullInProgress });
