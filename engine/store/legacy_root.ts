/**
 * Older BIMRI memory files in a project root: v1-v3 `BIMRI.md` (any case but
 * the generated `bimri.md`) and rolling backups. Beside a current store they
 * stop every command until the owner says which memory is authoritative, as
 * the reference's store load does. Kept free of `node:` imports: the store
 * opener runs this on every command.
 */
import { BimriError } from "../errors.ts";

/** The one value `state.legacy_migration` may hold (absent or null when there was no v1-v3 source). */
export const LEGACY_MIGRATION = "legacy-to-v5";

/**
 * True for a root file name that holds older BIMRI memory beside (or instead
 * of) a current store: BIMRI.md in any case but the generated `bimri.md`, or
 * a rolling backup in any case.
 */
export function isUnclaimedLegacyRootName(name: string): boolean {
  const folded = name.toLowerCase();
  return (folded === "bimri.md" && name !== "bimri.md") || folded === "bimri-backup.md";
}

/**
 * The legacy-named files in the root of an existing store, sorted (one
 * listing of the root). A case variant of `bimri.md` that is the generated
 * view itself is not one: a case-insensitive disk lists the view under the
 * name it was first created with, and then no exact `bimri.md` is listed
 * while `viewPath` still finds a file.
 */
export function legacyRootFiles(root: string, viewPath: string): string[] {
  let names: string[];
  try {
    names = [...Deno.readDirSync(root)].map((entry) => entry.name);
  } catch {
    return [];
  }
  const found = names.filter(isUnclaimedLegacyRootName).sort();
  if (found.length === 0) return found;
  const exactView = names.includes("bimri.md");
  return found.filter((name) =>
    exactView || name.toLowerCase() !== "bimri.md" || !isFileAt(viewPath)
  );
}

function isFileAt(path: string): boolean {
  try {
    return Deno.lstatSync(path).isFile;
  } catch {
    return false;
  }
}

/** The refusal for legacy memory beside a store nothing claims (the reference's words). */
export function unclaimedLegacyRootsError(names: readonly string[]): BimriError {
  return new BimriError(
    "store-unsafe",
    `selected structured BIMRI authority coexists with unclaimed legacy root file(s): ${
      names.join(", ")
    }. BIMRI stopped without importing or deleting them. Ask the owner which memory is authoritative, then move or remove the unclaimed files.`,
  );
}

/**
 * The refusal for old root files a v1-v3 migration claims but has not retired
 * yet (it was cut short after its state was durable); `next` says how to finish.
 */
function pendingRetirementMessage(files: readonly string[], next: string): string {
  return `a v1-v3 migration has not yet retired its old root file(s): ${
    files.join(", ")
  }. Run ${next} to finish it; nothing was changed.`;
}

/** What a reader reports for a pending retirement (it never writes, so it cannot finish it). */
export function pendingRetirementError(files: readonly string[]): BimriError {
  return new BimriError(
    "refused",
    pendingRetirementMessage(files, "`bimri migrate` (or any writing command, such as status)"),
  );
}

/**
 * Thrown by a writer that finds a pending retirement. The command runner
 * finishes that retirement, which proves the migration record first, and
 * runs the command again; anything else reports the message.
 */
export class LegacyRetirementPending extends BimriError {
  /** The old root files still present. */
  readonly files: readonly string[];

  /** A pending retirement of `files`. */
  constructor(files: readonly string[]) {
    super("refused", pendingRetirementMessage(files, "`bimri migrate`"));
    this.files = files;
  }
}
