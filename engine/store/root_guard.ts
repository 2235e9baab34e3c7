/**
 * No store appears by accident: a `--root` or `BIMRI_ROOT` folder that does
 * not exist is refused before anything is written, and a command that
 * creates a new store in a folder says so on stderr (as the reference, bimri
 * creates a store on first use; the notice makes that visible).
 */
import { BimriError } from "../errors.ts";
import { lstatOrNull } from "./files.ts";
import { nativePath } from "./os_path.ts";

/** Verbs that create a store on purpose and say so in their own output (no extra notice). */
export const QUIET_CREATORS: ReadonlySet<string> = new Set([
  "install",
  "migrate",
  "hook-start",
  "hook-close",
  "mcp",
]);

/**
 * Verbs the reference engine runs on a `--root` folder that does not exist
 * yet, creating it (scripts and its own tests rely on it): these create the
 * folder (start then says so on stderr); every other verb refuses a missing
 * named root as a likely typo.
 */
export const ROOT_CREATORS: ReadonlySet<string> = new Set([
  "start",
  "migrate",
  "hook-start",
  "hook-close",
]);

/** Refuses a named root folder that is missing or not a folder (exit 2, nothing created). */
export function refuseMissingRoot(root: string, named: "--root" | "BIMRI_ROOT"): void {
  const info = lstatOrNull(root);
  if (info?.isDirectory || (info?.isSymlink && isFolderThrough(root))) return;
  const what = info === null ? "does not exist" : "is not a folder";
  throw new BimriError(
    "usage",
    `${named} ${root} ${what}. Check the path${named === "BIMRI_ROOT" ? " in BIMRI_ROOT" : ""}, ` +
      `or create the folder first (mkdir -p ${root}) to start a new memory there; nothing was created.`,
  );
}

function isFolderThrough(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** What of a store a folder held before a command ran. */
export type StorePresence = { state: boolean; view: boolean };

/** Whether `root` holds `.bimri/state.json` (a store) and `bimri.md`. */
export function storePresence(root: string): StorePresence {
  return {
    state: lstatOrNull(nativePath.join(root, ".bimri", "state.json")) !== null,
    view: lstatOrNull(nativePath.join(root, "bimri.md")) !== null,
  };
}

/** The stderr notice of a command that created a new store in `root`, or null when it did not. */
export function storeCreatedNotice(root: string, before: StorePresence): string | null {
  if (before.state || !storePresence(root).state) return null;
  const made = before.view ? ".bimri/" : ".bimri/ and bimri.md";
  return `BIMRI: created a new memory store in ${root} (${made}). If this is not your project folder, delete ${made} there and run bimri from your project folder or with --root <project folder>.`;
}
