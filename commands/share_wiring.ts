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

/** Loads share's export and wires it (once per process). */
async function wireShare(): Promise<void> {
  if (loaded !== null) return;
  const [exporting, scanning, trusting, owning] = await Promise.all([
    import("../engine/share/export.ts"),
    import("../engine/share/scan.ts"),
    import("../engine/share/trust.ts"),
    import("../engine/share/own.ts"),
  ]);
  wireShareObserver({
    finishPendingExports: exporting.finishPendingExports,
    afterAcceptedCommit: exporting.afterAcceptedCommit,
  });
  loaded = {
    takeNotices: owning.takeForeignNotices,
    finishPendingExports: exporting.finishPendingExports,
    waitingAndGaps: (ctx) => {
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
    await wireShare();
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
