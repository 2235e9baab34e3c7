/**
 * Where a key's live generation is at the loaded head (hot line or
 * cold-current record): the value an owner question is answered against.
 */
import { type MemoryEntry, parseAnyEntry } from "../model/hot.ts";
import { coldRecordOf } from "../model/state.ts";
import type { Store } from "../store/store.ts";

/** Where a key's live generation is. */
export type LiveEntry = {
  entry: MemoryEntry;
  raw: string;
  storage: "hot" | "cold";
};

/** The live generation of `key` at the loaded head: hot first, then cold-current. */
export function liveEntry(store: Store, key: string): LiveEntry | null {
  const hot = store.head.view.entries.find((e) => e.entry.key === key);
  if (hot) return { entry: hot.entry, raw: hot.raw, storage: "hot" };
  const cold = coldRecordOf(store.state, key);
  if (cold) {
    const entry = parseAnyEntry(cold.raw_line);
    if (entry) return { entry, raw: cold.raw_line, storage: "cold" };
  }
  return null;
}
