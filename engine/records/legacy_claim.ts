/**
 * The cheap half of the v1-v3 lineage check: whether state and the migration
 * record claim each other, decided with one `lstat` and without loading the
 * legacy converter. Proving a present record is engine/migrate/legacy_lineage.ts,
 * which commands load (engine/migrate/lineage_prover.ts) only for a store that
 * has one (most never were v1-v3 memory).
 */
import { nativePath } from "../store/os_path.ts";
import { BimriError } from "../errors.ts";
import type { State } from "../model/state.ts";
import type { JsonObject, JsonValue } from "../model/json.ts";
import { lstatOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { LEGACY_MIGRATION } from "../store/legacy_root.ts";

export { LEGACY_MIGRATION };

/** What state says about its v1-v3 origin, and the head it must agree with while still at V000000. */
export type LineageClaim = {
  legacyMigration: JsonValue | undefined;
  headRevision: unknown;
  headHash: unknown;
};

/** Proves a present, claimed migration record; returns its first problem or null. */
export type RecordProver = (paths: StorePaths, claim: LineageClaim) => string | null;

/** The claim of a loaded (strictly validated) state; `legacy_migration` rides in its extras. */
export function claimOfState(state: State): LineageClaim {
  return {
    legacyMigration: state.extras.legacy_migration,
    headRevision: state.head_revision,
    headHash: state.head_hash,
  };
}

/** The claim of a state.json read as plain JSON (migration paths read it before the strict loader). */
export function claimOfRaw(raw: JsonObject): LineageClaim {
  return {
    legacyMigration: raw.legacy_migration,
    headRevision: raw.head_revision,
    headHash: raw.head_hash,
  };
}

/** Absolute path of the migration record. */
export function legacyMarkerPath(paths: StorePaths): string {
  return nativePath.join(paths.folder("migrations"), "legacy-to-v5.json");
}

/**
 * The first legacy-lineage problem of a store whose state claims `claim`, or
 * null: state and record must claim each other (a claim without the record,
 * a record without the claim, or an unknown claim are refused) and a present
 * record must prove itself through `prove` (not proven when it is null).
 */
export function lineageProblem(
  paths: StorePaths,
  claim: LineageClaim,
  prove: RecordProver | null,
): string | null {
  const value = claim.legacyMigration;
  if (value !== undefined && value !== null && value !== LEGACY_MIGRATION) {
    return "state legacy_migration has an unsupported value.";
  }
  if (lstatOrNull(legacyMarkerPath(paths)) === null) {
    return value === LEGACY_MIGRATION
      ? "v5 state requires legacy-to-v5.json, but the durable migration marker is missing. Restore it from recovery before continuing."
      : null;
  }
  if (value !== LEGACY_MIGRATION) {
    return "legacy-to-v5.json exists, but v5 state does not claim that migration.";
  }
  return prove === null ? null : prove(paths, claim);
}

/** What to do about a broken lineage; nothing in the store was touched. */
const LINEAGE_NEXT_STEP =
  "Restore .bimri/migrations/legacy-to-v5.json, its .bimri/backups/legacy-*.bin copies, V000000 and state.json from a backup of this store (doctor --read-only shows the full audit); nothing was changed.";

/** Refuses a store whose legacy lineage does not prove itself (see lineageProblem), with the next step. */
export function requireLineage(
  paths: StorePaths,
  claim: LineageClaim,
  prove: RecordProver | null,
): void {
  const problem = lineageProblem(paths, claim, prove);
  if (problem !== null) throw new BimriError("store-corrupt", `${problem} ${LINEAGE_NEXT_STEP}`);
}
