/**
 * The hook through which export finishes a pull left unfinished without
 * loading the pull machinery: import.ts registers itself here when it loads,
 * and the everyday verbs load it only when the share bookkeeping shows such
 * a pull (commands/share_wiring.ts), so exporting one change does not load
 * the ~30 modules a pull uses.
 */
import type { Store } from "../store/store.ts";
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
