/**
 * Which folder is the project root: `--root`, else `BIMRI_ROOT`, else the
 * nearest ancestor of the working directory holding `.bimri/`, else the
 * working directory. Pure over an injected path flavour (POSIX or Windows)
 * and folder probe, so the Windows rules (drive letters, UNC shares,
 * backslashes, cmd.exe's quote artifact) are unit-tested on any OS.
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
