/**
 * The view check of start and propose: bimri.md compared with the head on
 * the everyday path, view_sync.ts (the repair and the manual-edit review)
 * loaded only when the two differ.
 */
import { readBytesOrNull } from "../store/files.ts";
import { loadedViewRepair, LoadPending, type Store } from "../store/store.ts";
import { decodeUtf8Strict } from "../model/text.ts";
import type { ViewSyncResult } from "./view_sync.ts";

/** Loads view_sync.ts, which registers its `syncView` with store.ts. */
export async function loadViewRepair(): Promise<void> {
  await import("./view_sync.ts");
}

/**
 * view_sync.ts `syncView` for start and propose (under the engine lock):
 * when view_sync.ts is not loaded and bimri.md holds exactly the head, as
 * `syncView` finds first, the same empty result; when it differs, a
 * `LoadPending` stops the verb before it wrote anything, and commands/run.ts
 * loads view_sync.ts and runs the verb again.
 */
export function syncViewOnDemand(store: Store): ViewSyncResult {
  const repair = loadedViewRepair();
  if (repair !== null) return repair(store);
  const current = readBytesOrNull(store.paths.view);
  const text = store.head.text;
  // Strict decoding is one to one: equal strings are equal bytes (see view_sync.ts).
  if (current !== null && current.length >= text.length && decodeUtf8Strict(current) === text) {
    return { notices: [], warnings: [] };
  }
  throw new LoadPending("the view repair (view_sync.ts)", loadViewRepair);
}
