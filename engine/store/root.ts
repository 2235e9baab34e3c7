/**
 * Which folder is the project root: `--root`, else `BIMRI_ROOT`, else the
 * nearest ancestor of the working directory holding `.bimri/`, else the
 * working directory. Pure over an injected path flavour (POSIX or Windows)
 * and folder probe, so the Windows rules (drive letters, UNC shares,
 * backslashes, cmd.exe's quote artifact) are unit-tested on any OS.
 */
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

/** The nearest folder from `cwd` upwards that holds `.bimri/`, else `cwd` itself (absolute). */
export function findStoreRoot(
  cwd: string,
  flavor: PathFlavor = nativePath,
  isFolder: FolderProbe = isRealFolder,
): string {
  const start = flavor.resolve(cwd);
  let dir = start;
  while (true) {
    if (isFolder(flavor.join(dir, ".bimri"))) return dir;
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
): string {
  if (input.rootFlag !== undefined) return resolveFolder(input.cwd, input.rootFlag, flavor);
  if (input.envRoot) return resolveFolder(input.cwd, input.envRoot, flavor);
  return findStoreRoot(input.cwd, flavor, isFolder);
}
