/**
 * Wires team memory (engine/share/) into the write path through the
 * observer of engine/memory/share_observer.ts, loading the share modules only
 * for a store that is shared or a verb that may make one shared, so the
 * everyday commands of an unshared store do not pay for them.
 */
import { lstatOrNull } from "../engine/store/files.ts";
import { StorePaths } from "../engine/store/paths.ts";
import type { Store } from "../engine/store/store.ts";
import { REPLICA_FILE, shareObserver, wireShareObserver } from "../engine/memory/share_observer.ts";
import type { ShareContext } from "../engine/share/context.ts";

/** Verbs that may make a store shared or run share's own code (share init/pull, install of a clone). */
/** The verbs that wire team memory whatever the store (run.ts SHARE_WIRED_VERBS mirrors it). */
export const SHARE_VERBS: ReadonlySet<string> = new Set(["share", "install"]);

type Loaded = {
  /** Refusals team memory noted for the command to print (own.ts). */
  takeNotices: () => string[];
  finishPendingExports: (store: Store) => ShareContext | null;
  /** Records other clones left waiting, and a line naming each gap and trust question. */
  waitingAndGaps: (ctx: ShareContext) => { waiting: number; gaps: string[] };
};

let loaded: Loaded | null = null;

/** Loads share's export and wires it (once per process); `counting`: also what start's count needs. */
async function wireShare(counting: boolean): Promise<void> {
  if (loaded !== null) return;
  const [exporting, owning, scanning, trusting] = await Promise.all([
    import("../engine/share/export.ts"),
    import("../engine/share/own.ts"),
    counting ? import("../engine/share/scan.ts") : null,
    counting ? import("../engine/share/trust.ts") : null,
  ]);
  wireShareObserver({
    finishPendingExports: exporting.finishPendingExports,
    afterAcceptedCommit: exporting.afterAcceptedCommit,
  });
  loaded = {
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
  };
}

/** Before verb `name` runs on the store at `root`: wires team memory when it may be needed. */
export async function wireShareFor(name: string, root: string): Promise<void> {
  if (loaded !== null) return;
  if (SHARE_VERBS.has(name) || lstatOrNull(new StorePaths(root).folder(REPLICA_FILE)) !== null) {
    const everyday = EVERYDAY_VERBS.has(name);
    await wireShare(!everyday || START_VERBS.has(name));
    if (!everyday || await pullLeftUnfinished(root)) await loadPullMachinery();
  }
}

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
async function pullLeftUnfinished(root: string): Promise<boolean> {
  try {
    const [state, deferred] = await Promise.all([
      import("../engine/share/state.ts"),
      import("../engine/share/deferred.ts"),
    ]);
    const ctx = state.loadShare(new StorePaths(root), false);
    return ctx !== null && deferred.pullLeftUnfinished(ctx);
  } catch {
    return true;
  }
}

/**
 * `start`, under the engine lock: finishes what an earlier command left for
 * team memory; returns a counter of the records other clones left waiting,
 * or null when the store is not shared.
 */
export function finishShareAtStart(
  store: Store,
): (() => { waiting: number; gaps: string[] }) | null {
  if (shareObserver(store) === null || loaded === null) return null;
  const share = loaded.finishPendingExports(store);
  if (share === null) return null;
  const { waitingAndGaps } = loaded;
  return () => waitingAndGaps(share);
}

/** Prints on stderr the refusals team memory noted during the command (the engine prints nothing). */
export function printShareNotices(): void {
  const lines = loaded?.takeNotices() ?? [];
  if (lines.length === 0) return;
  Deno.stderr.writeSync(new TextEncoder().encode(lines.map((l) => `${l}\n`).join("")));
}
