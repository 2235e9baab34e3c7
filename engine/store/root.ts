/**
 * Which folder is the project root: `--root`, else `BIMRI_ROOT`, else the
 * nearest ancestor of the working directory holding `.bimri/`, else the
 * working directory. Pure over an injected path flavour (POSIX or Windows)
 * and folder probe, so the Windows rules (drive letters, UNC shares,
 * backslashes, cmd.exe's quote artifact) are unit-tested on any OS.
 *
 * And no store appears by accident: a `--root` or `BIMRI_ROOT` folder that
 * does not exist is refused before anything is written, and a command that
 * creates a new store in a folder says so on stderr (as the reference, bimri
 * creates a store on first use; the notice makes that visible). Both run on
 * every command, so they share this module rather than load one more.
 */
import { BimriError } from "../errors.ts";
import { lstatOrNull } from "./files.ts";
import { nativePath, type PathFlavor } from "./os_path.ts";

export type { PathFlavor };

/** How root resolution sees the disk: true when `path` is a real folder (not a link to one). */
export type FolderProbe = (path: string) => boolean;

/** The running OS's folder probe. */
export function isRealFolder(path: string): boolean {
  return lstatOrNull(path)?.isDirectory === true;
}

/**
 * Cleans a folder argument typed by a person. On Windows, cmd.exe turns
 * `"C:\proj\"` into `C:\proj"` (the backslash escapes the closing quote); a
 * double quote can never be part of a Windows path, so a trailing one is
 * dropped. Elsewhere the text is taken as it is (a backslash is a legal name
 * character on POSIX).
 */
export function cleanFolderArgument(text: string, flavor: PathFlavor = nativePath): string {
  if (flavor.sep === "\\" && text.endsWith('"') && !text.startsWith('"')) return text.slice(0, -1);
  return text;
}

/** Absolute folder for a `--root` or `BIMRI_ROOT` value, relative values taken from `cwd`. */
export function resolveFolder(cwd: string, text: string, flavor: PathFlavor = nativePath): string {
  return flavor.resolve(cwd, cleanFolderArgument(text, flavor));
}

/**
 * How root resolution sees a found `.bimri/`'s owner: the owning user ID when
 * it is another user than the one running bimri, else null (same user, or an
 * OS without user IDs).
 */
export type ForeignOwnerProbe = (path: string) => number | null;

/**
 * This process's user ID without asking for `--allow-sys` (the binding grants
 * read, write, env and run only; Deno refuses /proc/self without all access):
 * Deno.uid() where allowed, else `id -u`; null on an OS without user IDs.
 */
function processUid(): number | null {
  if (Deno.build.os === "windows") return null;
  try {
    return Deno.uid();
  } catch { /* no sys permission: ask id(1) */ }
  try {
    const out = new Deno.Command("id", { args: ["-u"], stdout: "piped", stderr: "null" })
      .outputSync();
    const text = new TextDecoder().decode(out.stdout).trim();
    return out.success && /^\d+$/.test(text) ? Number(text) : null;
  } catch {
    return null;
  }
}

/** The owner of the home folder: on the everyday path, a store owned by it needs no process spawn. */
function homeOwner(): number | null {
  const home = Deno.env.get("HOME");
  if (!home) return null;
  try {
    return Deno.statSync(home).uid;
  } catch {
    return null;
  }
}

/** The running OS's owner probe: the folder's uid when it differs from this process's uid. */
export function foreignOwner(path: string): number | null {
  const owner = lstatOrNull(path)?.uid ?? null;
  if (owner === null || owner === homeOwner()) return null;
  const uid = processUid();
  if (uid === null || owner === uid) return null;
  return owner;
}

/**
 * Refuses a store found by climbing from the working directory when another
 * user owns its `.bimri/`, as git refuses a repository of dubious ownership:
 * whoever owns a parent folder must not decide what this user's agents read
 * and write. `--root` and `BIMRI_ROOT` name a folder explicitly and allow it.
 */
function refuseForeignStore(dir: string, store: string, owner: number): never {
  throw new BimriError(
    "usage",
    `the nearest memory store ${store} belongs to another user (uid ${owner}), so bimri does not use it, as git refuses a repository owned by someone else. To use it anyway, name it explicitly: --root ${dir} (or BIMRI_ROOT=${dir}); to keep a store of your own, run bimri with --root <your project folder>. Nothing was changed.`,
  );
}

/**
 * The nearest folder from `cwd` upwards that holds `.bimri/`, else `cwd`
 * itself (absolute). A `.bimri/` owned by another user stops the climb with
 * a refusal naming it (see refuseForeignStore).
 */
export function findStoreRoot(
  cwd: string,
  flavor: PathFlavor = nativePath,
  isFolder: FolderProbe = isRealFolder,
  ownerOf: ForeignOwnerProbe = () => null,
): string {
  const start = flavor.resolve(cwd);
  let dir = start;
  while (true) {
    const store = flavor.join(dir, ".bimri");
    if (isFolder(store)) {
      const owner = ownerOf(store);
      if (owner !== null) refuseForeignStore(dir, store, owner);
      return dir;
    }
    const parent = flavor.dirname(dir);
    if (parent === dir) return start;
    dir = parent;
  }
}

/** Where the project root is, given the `--root` flag and `BIMRI_ROOT` (either may be absent). */
export function resolveRoot(
  input: { cwd: string; rootFlag?: string; envRoot?: string },
  flavor: PathFlavor = nativePath,
  isFolder: FolderProbe = isRealFolder,
  ownerOf: ForeignOwnerProbe = foreignOwner,
): string {
  if (input.rootFlag !== undefined) return resolveFolder(input.cwd, input.rootFlag, flavor);
  if (input.envRoot) return resolveFolder(input.cwd, input.envRoot, flavor);
  return findStoreRoot(input.cwd, flavor, isFolder, ownerOf);
}

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

/**
 * What of a store a folder held before a command ran: `.bimri/state.json`
 * (a store), and, in a folder without one, `bimri.md` (with a store there,
 * no store is created, so its view is not looked at).
 */
export type StorePresence = { state: true } | { state: false; view: boolean };

/** Whether `root` holds `.bimri/state.json` (a store), and if not, `bimri.md`. */
export function storePresence(root: string): StorePresence {
  if (lstatOrNull(nativePath.join(root, ".bimri", "state.json")) !== null) return { state: true };
  return { state: false, view: lstatOrNull(nativePath.join(root, "bimri.md")) !== null };
}

/**
 * `storePresence` of a root that `--root` or `BIMRI_ROOT` named, refused as
 * `refuseMissingRoot` refuses it. A root that holds a store is a folder, so
 * only a root without one is looked at itself.
 */
export function namedRootPresence(root: string, named: "--root" | "BIMRI_ROOT"): StorePresence {
  let before: StorePresence | null = null;
  try {
    before = storePresence(root);
  } catch { /* a root that is a file, say: its own check below says what is wrong */ }
  if (before?.state) return before;
  refuseMissingRoot(root, named);
  return before ?? storePresence(root);
}

/** The stderr notice of a command that created a new store in `root`, or null when it did not. */
export function storeCreatedNotice(root: string, before: StorePresence): string | null {
  if (before.state || !storePresence(root).state) return null;
  const made = before.view ? ".bimri/" : ".bimri/ and bimri.md";
  return `BIMRI: created a new memory store in ${root} (${made}). If this is not your project folder, delete ${made} there and run bimri from your project folder or with --root <project folder>.`;
}
