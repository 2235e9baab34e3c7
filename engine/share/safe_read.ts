/**
 * Reading what git carries without trusting it: the share folder, replica
 * folders and record files are never followed when they are links, a file is
 * opened and its fstat compared with the lstat that was checked (a swap
 * between check and open is refused), and every read is bounded (the size is
 * checked before reading, and reading stops at the cap). `.gitignore` is
 * read the same way, and refused when it is a link.
 *
 * On POSIX the verbs that read other clones' records (share, doctor, review,
 * resolve, ui, mcp...) first load `node:fs` (loadNoFollowOpen), whose open(2)
 * flags also refuse a FIFO swapped in between check and open instead of
 * waiting on it. The everyday verbs (start, propose, sync, close) read at
 * most their own replica's files and keys, and skip that load (node:fs costs
 * a short command ~20 ms of start-up): they open as Windows does, where a
 * swapped link, folder or device is still refused by the fstat comparison and
 * only a FIFO swapped in by a local process at that instant could make the
 * open wait.
 */
import { join } from "../store/os_path.ts";
import { simulatedLimit } from "../store/fault.ts";
import { BimriError } from "../errors.ts";
import { lstatOrNull } from "../store/files.ts";
import { visible } from "../model/visible.ts";

/** What a bounded, link-free read found. */
export type SafeRead =
  | { bytes: Uint8Array }
  | { problem: string };

function sameFile(a: Deno.FileInfo, b: Deno.FileInfo): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/**
 * Reads the regular file `name` in `folder` (at most `max` bytes), or null
 * when it does not exist. A link, folder, device or FIFO, a file larger than
 * `max`, and a file or folder swapped between check and read are problems
 * (nothing of them is returned).
 */
export function readFileNoFollow(folder: string, name: string, max: number): SafeRead | null {
  const folderBefore = lstatOrNull(folder);
  if (folderBefore === null) return null;
  if (!folderBefore.isDirectory) return { problem: "lies in a folder that is a link" };
  const path = join(folder, name);
  const info = lstatOrNull(path);
  if (info === null) return null;
  if (!info.isFile) {
    return { problem: "is not a regular file (a link, folder or device is never followed)" };
  }
  if (info.size > max) return { problem: `is larger than ${max} bytes (oversized)` };
  // Tests only: what an attacker swaps in between this check and the open.
  if (simulatedLimit("share-swap-before-open") && lstatOrNull(`${path}.swap`) !== null) {
    Deno.renameSync(`${path}.swap`, path);
  }
  const read = posixFs !== null
    ? readOpenedNoFollow(posixFs, path, info, max)
    : readOpened(path, info, max);
  if (read === null || "problem" in read) return read;
  const folderAfter = lstatOrNull(folder);
  if (folderAfter === null || !folderAfter.isDirectory || !sameFile(folderBefore, folderAfter)) {
    return { problem: "lies in a folder that was replaced while it was read (refused)" };
  }
  return read;
}

/** readFileNoFollow's open and read without open(2) flags (Windows, and the everyday verbs). */
function readOpened(path: string, info: Deno.FileInfo, max: number): SafeRead | null {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  try {
    const opened = file.statSync();
    if (!opened.isFile || !sameFile(opened, info)) {
      return { problem: "was replaced while it was read (refused)" };
    }
    const buffer = new Uint8Array(max + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = file.readSync(buffer.subarray(length));
      if (n === null || n === 0) break;
      length += n;
    }
    if (length > max) return { problem: `is larger than ${max} bytes (oversized)` };
    return { bytes: buffer.slice(0, length) };
  } finally {
    file.close();
  }
}

type NodeFs = typeof import("node:fs");

/** node:fs once loadNoFollowOpen ran on POSIX (null: open as Windows does). */
let posixFs: NodeFs | null = null;

/**
 * Loads the open(2) path (POSIX; nothing on Windows): from then on files are
 * opened with O_NOFOLLOW | O_NONBLOCK, so a link or FIFO swapped in after the
 * check is refused, never followed or waited on.
 */
export async function loadNoFollowOpen(): Promise<void> {
  if (posixFs === null && Deno.build.os !== "windows") posixFs = await import("node:fs");
}

/**
 * readFileNoFollow's open and read on POSIX: opened without following a
 * link and without waiting on a FIFO (a link, FIFO or device swapped in
 * after the check is refused, never read), then the open file must be the
 * regular file that was checked (same device and inode), read up to the cap.
 */
function readOpenedNoFollow(
  nodeFs: NodeFs,
  path: string,
  info: Deno.FileInfo,
  max: number,
): SafeRead | null {
  const flags = nodeFs.constants.O_RDONLY | nodeFs.constants.O_NOFOLLOW |
    nodeFs.constants.O_NONBLOCK;
  let fd: number;
  try {
    fd = nodeFs.openSync(path, flags);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT") return null;
    if (code === "ELOOP" || code === "ENXIO" || code === "EISDIR") {
      return { problem: "was replaced while it was read (refused)" };
    }
    throw error;
  }
  try {
    const opened = nodeFs.fstatSync(fd);
    if (!opened.isFile() || opened.dev !== info.dev || opened.ino !== info.ino) {
      return { problem: "was replaced while it was read (refused)" };
    }
    const buffer = new Uint8Array(max + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = nodeFs.readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > max) return { problem: `is larger than ${max} bytes (oversized)` };
    return { bytes: buffer.slice(0, length) };
  } finally {
    nodeFs.closeSync(fd);
  }
}

/**
 * Refuses a share folder (or a replica folder in it) that is a link or not a
 * folder: bimri never reads or writes through it. `label` is the path shown.
 */
export function requireRealFolder(path: string, label: string): void {
  const info = lstatOrNull(path);
  if (info === null || info.isDirectory) return;
  const what = info.isSymlink ? "a symbolic link" : "not a folder";
  throw new BimriError(
    "store-unsafe",
    `${
      visible(label)
    } is ${what}; bimri never follows links under the share folder, so nothing was read or written through it. Remove it from git (\`git rm ${
      visible(label)
    }\`), then run the command again.`,
  );
}

/** The largest `.gitignore` bimri reads. */
const GITIGNORE_MAX = 1_048_576;

/** How a refusal of `.gitignore` ends: what was left alone, then the next step. */
export type GitignoreRefusal = { unchanged: string; next: string };

/** share init's refusal: it changes nothing before reading `.gitignore`. */
const SHARE_INIT_REFUSAL: GitignoreRefusal = {
  unchanged: "bimri did not change it",
  next:
    "Add the lines yourself (or make .gitignore a regular file), then run `bimri share init` again.",
};

/**
 * The text of `<root>/.gitignore` (null: none), refusing a link (bimri never
 * follows it, nor replaces it by a copy of its target), a non-file (a FIFO
 * is never waited on) and an oversized or non-UTF-8 file, in words of
 * `refusal` (share init's by default).
 */
export function readGitignore(
  root: string,
  refusal: GitignoreRefusal = SHARE_INIT_REFUSAL,
): string | null {
  const read = readFileNoFollow(root, ".gitignore", GITIGNORE_MAX);
  if (read === null) return null;
  const { unchanged, next } = refusal;
  if ("problem" in read) {
    throw new BimriError("refused", `.gitignore ${read.problem}; ${unchanged}. ${next}`);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(read.bytes);
  } catch {
    throw new BimriError("refused", `.gitignore is not valid UTF-8; ${unchanged}. ${next}`);
  }
}

/** The permission bits of `<root>/.gitignore` (null: none), to keep across a rewrite. */
export function gitignoreMode(root: string): number | null {
  const info = lstatOrNull(join(root, ".gitignore"));
  return info?.isFile && info.mode !== null ? info.mode & 0o7777 : null;
}
