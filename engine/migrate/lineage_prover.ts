/** Loads the v1-v3 migration record prover only for a store that has a record to prove. */
import { lstatOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { legacyMarkerPath, type RecordProver } from "../records/legacy_claim.ts";

/** The record prover, loaded only when this store has a migration record to prove. */
export async function loadRecordProver(paths: StorePaths): Promise<RecordProver | null> {
  if (lstatOrNull(legacyMarkerPath(paths)) === null) return null;
  const { proveLegacyRecord } = await import("./legacy_lineage.ts");
  return proveLegacyRecord;
}
