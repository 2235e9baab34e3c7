/**
 * Wires team memory (engine/share/) into the write path through the
 * observer of engine/memory/share_observer.ts, loading the share modules only
 * for a store that is shared or a verb that may make one shared, so the
 * everyday commands of an unshared store do not pay for them.
 */
import { lstatOrNull } from "../engine/store/files.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { LoadPending, type Store } from "../engine/store/store.ts";
import {
  REPLICA_FILE,
  type ShareObserver,
  shareObserver,
  wireShareObserver,
} from "../engine/memory/share_observer.ts";
import type { ShareContext } from "../engine/share/context.ts";
import { readShareState, shareDir } from "../engine/share/state_file.ts";
import { pullLeftUnfinished } from "../engine/share/deferred.ts";
import { headPending, idleShare } from "../engine/share/idle.ts";
import { notePendingChange } from "../engine/share/pending_changes.ts";

/** Verbs that may make a store shared or run share's own code (share init/pull, install of a clone). */
/** The verbs that wire team memory whatever the store (run.ts SHARE_WIRED_VERBS mirrors it). */
export const SHARE_VERBS: ReadonlySet<string> = new Set(["share", "install"]);

type Loaded = {
  /** Refusals team memory noted for the command to print (own.ts). */
  takeNotices: () => string[];
  finishPendingExports: (store: Store) => ShareContext | null;
  /** Records other clones left waiting, and a line naming each gap and trust question. */
  waitingAndGaps: (ctx: ShareContext) => { waiting: number; gaps: string[] };
  /** Whether what start's count needs was loaded too. */
  counts: boolean;
  /** The export as team memory's observer. */
  observer: ShareObserver;
};

let loaded: Loaded | null = null;

/**
 * Wires share's export as the observer, loading it first (once per process;
 * `counting`: also what start's count needs).
 */
async function wireShare(counting: boolean): Promise<void> {
  idleVerb = null;
  if (loaded === null || (counting && !loaded.counts)) loaded = await loadShare(counting);
  wireShareObserver(loaded.observer);
}

async function loadShare(counting: boolean): Promise<Loaded> {
  const [exporting, owning, hook, scanning, trusting] = await Promise.all([
    import("../engine/share/export.ts"),
    import("../engine/share/own.ts"),
    import("../engine/share/import_hook.ts"), // loaded by export.ts anyway
    counting ? import("../engine/share/scan.ts") : null,
    counting ? import("../engine/share/trust.ts") : null,
  ]);
  hook.registerPullLoader(loadPullMachinery);
  return {
    takeNotices: owning.takeForeignNotices,
    finishPendingExports: exporting.finishPendingExports,
    waitingAndGaps: (ctx) => {
      if (scanning === null || trusting === null) {
        throw new Error("share wiring: only start counts waiting records");
      }
      const scan = scanning.scanShare(ctx, { countOnly: true });
      // Records an untrusted replica holds wait for the owner, not for a pull: say so.
      const questions = trusting.holdUntrusted(ctx, new Map(), scan.waiting);
      return {
        waiting: scanning.totalWaiting(scan),
        gaps: [...scanning.gapLines(scan), ...questions.map((q) => q.text)],
      };
    },
    counts: counting,
    observer: {
      beforeWrites: () => {},
      finishPendingExports: exporting.finishPendingExports,
      beforeCommit: () => {},
      afterAcceptedCommit: exporting.afterAcceptedCommit,
    },
  };
}

/**
 * Before verb `name` runs on the store at `root`: wires team memory when it
 * may be needed, only its idle check when that finds nothing for the verb to
 * restore, finish or count.
 */
export async function wireShareFor(name: string, root: string): Promise<void> {
  // A long-lived process (the MCP server) decides again for each verb.
  const paths = new StorePaths(root);
  if (!SHARE_VERBS.has(name) && lstatOrNull(paths.folder(REPLICA_FILE)) === null) return;
  if (IDLE_VERBS.has(name)) {
    // Checked under the engine lock only: when something is pending after all
    // (records of other clones waiting, at start), the verb runs once more
    // with the export loaded, having written nothing.
    wireIdle(name, paths);
    return;
  }
  const everyday = EVERYDAY_VERBS.has(name);
  await wireShare(!everyday || START_VERBS.has(name));
  // start, sync and close run themselves again when the export finds a pull
  // left unfinished (import_hook.ts PullMachineryPending); the others look first.
  if (!everyday || (!RERUNNING_VERBS.has(name) && pullLeftUnfinishedAt(paths))) {
    await loadPullMachinery();
  }
}

/**
 * The verbs that, on a shared store with nothing pending (idle.ts), load no
 * export, signing or pull code: start (no records of other clones waiting),
 * sync and close. Their commits are left for the next export (the pre-commit
 * hook's `share status`, a pull, any other share verb), which is when git
 * can carry them to the other clones anyway.
 */
const IDLE_VERBS: ReadonlySet<string> = new Set(["start", "sync", "close"]);

/** The verb wired with the idle check only, or null. */
let idleVerb: string | null = null;

/**
 * Wires the idle check as team memory's observer for `verb`. Under the engine
 * lock, before the verb writes anything, it looks at what another command may
 * have left (idle.ts): when something is pending, it stops
 * (`ShareExportPending`), the export loads and the verb runs once more. A
 * change the verb commits is noted for the next export (pending_changes.ts).
 */
function wireIdle(verb: string, paths: StorePaths): void {
  idleVerb = verb;
  const escalate = (why: string): never => {
    throw new ShareExportPending(why, async () => {
      idleVerb = null;
      await wireShare(START_VERBS.has(verb));
      if (pullLeftUnfinishedAt(paths)) await loadPullMachinery();
    });
  };
  let checked: ShareContext | null = null;
  const check = (store: Store): ShareContext => {
    if (checked !== null) return checked;
    const idle = idleShare(store.paths, verb === "start");
    if ("pending" in idle) return escalate(idle.pending);
    const head = headPending(store);
    if (head !== null) return escalate(head);
    return checked = idle.ctx;
  };
  wireShareObserver({
    beforeWrites: check,
    finishPendingExports: check,
    beforeCommit: () => {},
    // The change waits for the next export: the pre-commit hook's `share
    // status`, a pull or any other share verb, before git can carry it.
    afterAcceptedCommit: (store, proposalId) => notePendingChange(store.paths, proposalId),
  });
}

/**
 * Thrown under the engine lock when the idle check finds work for team
 * memory after all (before the verb wrote anything, but for a commit reached
 * in a race, which the rerun finishes as after a crash): commands/run.ts
 * loads the export (`load`) and runs the verb once more.
 */
export class ShareExportPending extends LoadPending {
  /** `why`: what is pending. */
  constructor(why: string, load: () => Promise<void>) {
    super(`team memory's export (${why})`, load);
  }
}

/** The everyday verbs that run themselves again after a `LoadPending` (run.ts runVerb, store.ts runLoadingOnDemand). */
const RERUNNING_VERBS: ReadonlySet<string> = new Set(["start", "sync", "close"]);

/** The everyday verbs that count the records other clones left waiting (the brief says so). */
const START_VERBS: ReadonlySet<string> = new Set(["start", "hook-start"]);

/**
 * The verbs of every agent session that run team memory (commands/run.ts
 * leaves it unloaded for journal, propose and the reads). They export this clone's own changes
 * (signed by engine/model/ed25519.ts) and read no other clone's record, so
 * they skip loading the readers of those (node:crypto and node:fs, ~25 ms of
 * start-up) unless a pull was left unfinished, which they finish first.
 */
const EVERYDAY_VERBS: ReadonlySet<string> = new Set([
  "start",
  "sync",
  "close",
  "hook-start",
  "hook-close",
]);

/**
 * Loads what reading other clones' records needs: the pull (import.ts, which
 * registers itself with export's hook), signature checks and no-follow opens.
 */
async function loadPullMachinery(): Promise<void> {
  const [signing, reading] = await Promise.all([
    import("../engine/share/sign.ts"),
    import("../engine/share/safe_read.ts"),
    import("../engine/share/import.ts"),
  ]);
  await Promise.all([signing.loadSignatureChecks(), reading.loadNoFollowOpen()]);
}

/**
 * True when a share pull was left unfinished (records being imported, or
 * conflicts being raised), which the next command finishes by reading the
 * records again; also true when the bookkeeping cannot be read (the verb
 * itself then says what is wrong).
 */
function pullLeftUnfinishedAt(paths: StorePaths): boolean {
  try {
    const read = readShareState(paths);
    if (read === null) return false;
    return pullLeftUnfinished({ paths, shareDir: shareDir(paths), state: read.state });
  } catch {
    return true;
  }
}

/** What start's brief says of team memory. */
export type StartShareReport = {
  /** Records of other clones waiting to be pulled. */
  waiting: number;
  /** A line naming each gap and trust question. */
  gaps: string[];
  /** Revisions of this clone's memory since its last export (left for the next one). */
  unexported: number;
};

/**
 * `start`, under the engine lock: finishes what an earlier command left for
 * team memory; returns what the brief says of it (counted after the verb ran),
 * or null when the store is not shared.
 */
export function finishShareAtStart(store: Store): (() => StartShareReport) | null {
  const observer = shareObserver(store);
  if (observer === null) return null;
  const unexported = (ctx: ShareContext) =>
    ctx.state.headSeen < 0 ? 0 : Math.max(0, store.head.revision - ctx.state.headSeen);
  // The idle check found no records waiting (it escalates if any arrived since).
  if (idleVerb !== null || loaded === null) {
    const ctx = observer.finishPendingExports(store) as ShareContext;
    return () => ({ waiting: 0, gaps: [], unexported: unexported(ctx) });
  }
  const share = loaded.finishPendingExports(store);
  if (share === null) return null;
  const { waitingAndGaps } = loaded;
  return () => ({ ...waitingAndGaps(share), unexported: unexported(share) });
}

/** True when this process loaded team memory's export (not only its idle check). */
export function exportsWired(): boolean {
  return loaded !== null && idleVerb === null;
}

/** Prints on stderr the refusals team memory noted during the command (the engine prints nothing). */
export function printShareNotices(): void {
  const lines = loaded?.takeNotices() ?? [];
  if (lines.length === 0) return;
  Deno.stderr.writeSync(new TextEncoder().encode(lines.map((l) => `${l}\n`).join("")));
}
