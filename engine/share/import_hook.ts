/**
 * The hook through which export finishes a pull left unfinished without
 * loading the pull machinery: import.ts registers itself here when it loads,
 * and the everyday verbs load it only when the share bookkeeping shows such
 * a pull (commands/share_wiring.ts), so exporting one change does not load
 * the ~30 modules a pull uses.
 */
import { LoadPending, type Store } from "../store/store.ts";
import type { ShareContext } from "./context.ts";

/** What export needs of import.ts. */
export type ImportFinisher = {
  /** Finishes a pull that was killed part-way (records to import, questions to raise). */
  finishImport(store: Store, ctx: ShareContext): number;
  /** True while a pull of this process runs. */
  pullInProgress(): boolean;
};

let finisher: ImportFinisher | null = null;

/** Registers import.ts's finisher (import.ts does, once, when it loads). */
export function registerImportFinisher(registered: ImportFinisher): void {
  finisher = registered;
}

/** The registered finisher, or null when import.ts is not loaded in this process. */
export function importFinisher(): ImportFinisher | null {
  return finisher;
}

/** How the pull machinery loads (commands/share_wiring.ts registers it as it wires team memory). */
let pullLoader: (() => Promise<void>) | null = null;

/** Registers how the pull machinery loads (import.ts itself cannot be named here: a circle). */
export function registerPullLoader(load: () => Promise<void>): void {
  pullLoader = load;
}

/**
 * Thrown under the engine lock, before anything is written, when a pull was
 * left unfinished and this process has not loaded the pull: the verb's
 * caller loads it and runs the verb once more, which finishes the pull first.
 */
export class PullMachineryPending extends LoadPending {
  constructor() {
    super("the pull that finishes a pull left unfinished", async () => {
      if (pullLoader === null) throw new Error("internal: no pull loader is registered");
      await pullLoader();
    });
    // What a verb that does not run itself again (the hooks, which look first) says.
    this.message =
      "a share pull was left unfinished after this command started; nothing was changed. Run the command again (it finishes the pull first).";
  }
}
