/**
 * Durable file primitives: atomic replace, exclusive create and append, each
 * with the fsync discipline of an atomic commit (data, then the folder), the
 * rename over an existing file that ends an atomic replace, the wording of a
 * refusal of a link where a store file or folder should be, and the lstat
 * fingerprints the derived caches key on (every store command loads all of
 * them; see the sections at the end).
 */
import { nativePath } from "./os_path.ts";
import type { StorePaths } from "./paths.ts";
import { BimriError } from "../errors.ts";
import { decodeUtf8Strict, linesContaining, utf8 } from "../model/plain_text.ts";
import { simulatedLimit } from "./fault.ts";

/** True when folders are fsynced after a rename or create: POSIX only (Windows cannot open a folder for it). */
export function syncsFolders(os: string): boolean {
  return os !== "windows";
}

const SYNCS_FOLDERS = syncsFolders(Deno.build.os);

function randomSuffix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function toBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === "string" ? utf8(data) : data;
}

/** Flushes a folder's entry table so a rename or link survives power loss (POSIX only). */
export function syncDir(path: string): void {
  if (!SYNCS_FOLDERS) return;
  let dir: Deno.FsFile | undefined;
  try {
    dir = Deno.openSync(path, { read: true });
    dir.syncSync();
  } catch {
    // Some filesystems refuse fsync on folders; the rename itself is still atomic.
  } finally {
    dir?.close();
  }
}

function writeTemp(
  folder: string,
  prefix: string,
  chunks: Iterable<Uint8Array>,
  durable: boolean,
): string {
  const temp = nativePath.join(folder, `${prefix}${randomSuffix()}`);
  forgetListing(temp);
  const file = Deno.openSync(temp, { write: true, createNew: true, mode: 0o600 });
  try {
    for (const bytes of chunks) writeAll(file, bytes);
    if (durable) file.syncSync();
  } catch (error) {
    // A write that failed (a full disk, say) leaves no half-written temp file behind.
    file.close();
    removeQuietly(temp);
    throw error;
  }
  file.close();
  return temp;
}

function writeAll(file: Deno.FsFile, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += file.writeSync(bytes.subarray(offset));
}

function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch { /* already gone */ }
}

/** Replaces `path` atomically: temp file in the same folder, fsync, rename, fsync folder. */
export function atomicReplace(path: string, data: Uint8Array | string): void {
  atomicReplaceChunks(path, [data]);
}

/**
 * `atomicReplace` for content produced piece by piece (a large export), so
 * the whole text never needs to exist at once.
 */
export function atomicReplaceChunks(path: string, chunks: Iterable<Uint8Array | string>): void {
  const folder = nativePath.dirname(path);
  renameTempOver(writeTemp(folder, ".bimri-tmp-", mapChunks(chunks), true), path);
  syncDir(folder);
}

/**
 * Replaces a derived cache file (never a store record): temp file and rename,
 * without fsync. A crash may lose the new content, never leave half of it
 * under `path`; every reader of a derived file falls back when it is gone.
 */
export function replaceDerived(path: string, data: Uint8Array | string): void {
  renameTempOver(writeTemp(nativePath.dirname(path), ".bimri-tmp-", [toBytes(data)], false), path);
}

/** Renames a finished temp file over `path`; a failed rename leaves no temp file behind. */
function renameTempOver(temp: string, path: string): void {
  try {
    renameOver(temp, path);
  } catch (error) {
    removeQuietly(temp);
    throw error;
  }
}

function* mapChunks(chunks: Iterable<Uint8Array | string>): Iterable<Uint8Array> {
  for (const chunk of chunks) yield toBytes(chunk);
}

/**
 * Creates `path` with `data` only if it does not exist yet (immutable records).
 * Returns false when the path already exists; nothing is overwritten. Call
 * under the engine lock: on a file system without hard links the name is
 * claimed by a check and a rename, which only the lock keeps exclusive.
 */
export function createExclusive(
  path: string,
  data: Uint8Array | string,
  syncFolder = true,
): boolean {
  const folder = nativePath.dirname(path);
  const temp = writeTemp(folder, ".bimri-new-", [toBytes(data)], true);
  if (!claimName(temp, path)) return false;
  // Without `syncFolder` the caller syncs the folder itself before anything
  // durable may depend on the new name (one sync for many records).
  if (syncFolder) syncDir(folder);
  return true;
}

/** Gives the complete, synced `temp` the name `path` unless it is taken; `temp` is gone after. */
function claimName(temp: string, path: string): boolean {
  try {
    if (simulatedLimit("no-hard-links")) {
      throw new Deno.errors.PermissionDenied("Operation not permitted (os error 1): link");
    }
    Deno.linkSync(temp, path);
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return false;
    // No hard links here (FAT, exFAT, some network shares): as the reference
    // does, take a name that is still free by renaming the complete temp file.
    if (lstatOrNull(path) !== null) return false;
    try {
      renameOver(temp, path);
    } catch {
      throw error; // The link's error says more than the rename's.
    }
  } finally {
    removeQuietly(temp);
  }
  return true;
}

/** Temp files written and synced together before any is named (bounds open handles). */
const SYNC_GROUP = 128;

/**
 * `createExclusive` for many records of one command (no folder sync: the
 * caller syncs each folder once). Every content is written to its temp file
 * and synced before any of them takes its name, so each name still appears
 * only over complete, durable bytes; the syncs of a group run back to back
 * instead of between creates. Names are then taken in order, stopping at the
 * first that exists: returns its index (nothing after it was created, its
 * temp files are removed), or -1 when every record was created.
 */
export function createExclusiveMany(
  records: readonly { path: string; data: Uint8Array | string }[],
): number {
  const temps: string[] = [];
  try {
    for (let start = 0; start < records.length; start += SYNC_GROUP) {
      const open: Deno.FsFile[] = [];
      try {
        for (const { path, data } of records.slice(start, start + SYNC_GROUP)) {
          const temp = nativePath.join(nativePath.dirname(path), `.bimri-new-${randomSuffix()}`);
          forgetListing(temp);
          const file = Deno.openSync(temp, { write: true, createNew: true, mode: 0o600 });
          open.push(file);
          temps.push(temp);
          writeAll(file, toBytes(data));
        }
        for (const file of open) file.syncSync();
      } finally {
        for (const file of open) file.close();
      }
    }
    for (const [i, { path }] of records.entries()) {
      const taken = !claimName(temps[i], path);
      temps[i] = "";
      if (taken) return i;
    }
    return -1;
  } finally {
    // Temp files not named (a failed write, a name taken) leave nothing behind.
    for (const temp of temps) if (temp !== "") removeQuietly(temp);
  }
}

/**
 * Appends one line (a trailing LF is added) and fsyncs the file. A failed
 * append (a full disk) is cut back to the file's previous length, so a log or
 * archive never keeps half a line. Callers hold the engine lock, so no other
 * writer appends in between.
 */
export function appendLine(path: string, line: string): void {
  forgetListing(path);
  const file = Deno.openSync(path, { append: true, create: true });
  const before = file.statSync().size;
  try {
    writeAll(file, utf8(line + "\n"));
    file.syncSync();
  } catch (error) {
    try {
      // By path: on Windows an append-only handle may not truncate.
      Deno.truncateSync(path, before);
      file.syncSync();
    } catch { /* the error that stopped the append is the one to report */ }
    throw error;
  } finally {
    file.close();
  }
}

/** Opens `path` for reading (links followed), or null when it does not exist. */
export function openToReadOrNull(path: string): Deno.FsFile | null {
  try {
    return Deno.openSync(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * The `length` bytes at `offset` of the file at `path` (fewer where the file
 * ends sooner), or null when it does not exist: one row of a large file
 * without reading the rest.
 */
export function readRangeOrNull(path: string, offset: number, length: number): Uint8Array | null {
  const file = openToReadOrNull(path);
  if (file === null) return null;
  try {
    file.seekSync(offset, Deno.SeekMode.Start);
    const bytes = new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      const read = file.readSync(bytes.subarray(filled));
      if (read === null || read === 0) break;
      filled += read;
    }
    return bytes.subarray(0, filled);
  } finally {
    file.close();
  }
}

/** Reads a file's bytes, or null when it does not exist. */
export function readBytesOrNull(path: string): Uint8Array | null {
  return readBytesAndInfoOrNull(path)?.bytes ?? null;
}

/**
 * Reads a file's bytes with the fstat of the very file read, or null when it
 * does not exist. One buffer sized from that length (Deno.readFileSync grows
 * its buffer as it goes, which costs several copies on archive months of
 * megabytes); a file that grew meanwhile is still read whole.
 */
export function readBytesAndInfoOrNull(
  path: string,
): { bytes: Uint8Array; info: Deno.FileInfo } | null {
  const file = openToReadOrNull(path);
  if (file === null) return null;
  try {
    const info = file.statSync();
    const { buffer, length } = readOpenFile(file, new Uint8Array(info.size + 1));
    return { bytes: buffer.subarray(0, length), info };
  } finally {
    file.close();
  }
}

/**
 * Reads `file` from its position to the end into `buffer`, doubling it when
 * full; returns the buffer used (possibly a larger one) and the byte count.
 */
export function readOpenFile(
  file: Deno.FsFile,
  buffer: Uint8Array<ArrayBuffer>,
): { buffer: Uint8Array<ArrayBuffer>; length: number } {
  let length = 0;
  while (true) {
    if (length === buffer.length) {
      const larger = new Uint8Array(Math.max(buffer.length * 2, 4096));
      larger.set(buffer);
      buffer = larger;
    }
    const n = file.readSync(buffer.subarray(length));
    if (n === null || n === 0) break;
    length += n;
  }
  return { buffer, length };
}

const PIECE_BYTES = 64 * 1024;
const LENIENT_STREAM = { ignoreBOM: true } as const;

/**
 * The LF-separated lines of the file at `path` that contain `part` (as
 * `linesContaining` finds them in the file's text), read and decoded in 64 KB
 * pieces: a month of archive rows is never held whole, so finding one row
 * costs no more memory as the month grows. Returns null when the file does not
 * exist and "invalid-utf8" when its bytes are not valid UTF-8.
 */
export function readLinesContaining(path: string, part: string): string[] | null | "invalid-utf8" {
  const file = openToReadOrNull(path);
  if (file === null) return null;
  // The lenient decoder is the cheap one; a U+FFFD it produced sends the file to the strict check.
  const decoder = new TextDecoder("utf-8", LENIENT_STREAM);
  const piece = new Uint8Array(PIECE_BYTES);
  const found: string[] = [];
  let replaced = false;
  let carry = "";
  try {
    while (true) {
      const n = file.readSync(piece);
      const end = n === null || n === 0;
      const decoded = end
        ? decoder.decode()
        : decoder.decode(piece.subarray(0, n), { stream: true });
      if (decoded.includes("\ufffd")) replaced = true;
      const text = carry + decoded;
      const cut = end ? text.length : text.lastIndexOf("\n") + 1;
      if (cut > 0) found.push(...linesContaining(text.slice(0, cut), part));
      carry = text.slice(cut);
      if (end) break;
    }
  } finally {
    file.close();
  }
  if (replaced && decodeUtf8Strict(Deno.readFileSync(path)) === null) return "invalid-utf8";
  return found;
}

/** Reads a UTF-8 file, or null when it does not exist. */
export function readTextOrNull(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** lstat that returns null for a missing path. */
export function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * False only when `folder` surely holds no entry named `name`. One listing of
 * the folder rather than an lstat: the usual answer of these checks (the
 * owner's policy file) is "missing", and the first "not found" an lstat
 * throws costs a short process ~0.3 ms (its error path is cold). Names match
 * case-insensitively (a case-insensitive file system finds other spellings),
 * erring towards "may exist", as does a folder that cannot be listed.
 */
export function entryMayExist(folder: string, name: string): boolean {
  const names = foldedNames(folder);
  return names === null || names.has(name.toLowerCase());
}

/** The lowercased names in `folder`, or null when it cannot be listed (see `entryMayExist`). */
function foldedNames(folder: string): ReadonlySet<string> | null {
  const known = listings?.get(folder);
  if (known !== undefined) return known;
  let names: Set<string> | null = new Set();
  try {
    for (const entry of Deno.readDirSync(folder)) names.add(entry.name.toLowerCase());
  } catch {
    names = null;
  }
  listings?.set(folder, names);
  return names;
}

/**
 * What `entryMayExist` listed while one command runs (`rememberListings`),
 * by folder as given; null when listings are not kept (every call lists).
 */
let listings: Map<string, ReadonlySet<string> | null> | null = null;

/**
 * From `on` until `rememberListings(false)` (one command's run, see
 * commands/run.ts), `entryMayExist` lists each folder once: the checks for
 * the owner's policy file before, in and after a verb then cost one
 * listing. A write of this module into a listed folder (its atomic replace,
 * exclusive create, append or rename) forgets that folder's listing, so an
 * entry bimri itself creates is seen at once.
 */
export function rememberListings(on: boolean): void {
  listings = on ? new Map() : null;
}

/** Forgets the listing of the folder holding `path` (it is being written). */
function forgetListing(path: string): void {
  if (listings !== null && listings.size > 0) listings.delete(nativePath.dirname(path));
}

/** True when `path` exists (without following a final symlink). */
export function pathExists(path: string): boolean {
  return lstatOrNull(path) !== null;
}

/** Refuses a path that is a symlink, so shared BIMRI files never escape the store. */
export function refuseSymlink(path: string, label: string): void {
  const info = lstatOrNull(path);
  if (info?.isSymlink) {
    throw new BimriError(
      "store-unsafe",
      linkRefusal(
        path,
        label,
        "BIMRI refuses to follow links in shared memory paths. Replace it with a regular file or folder.",
      ),
    );
  }
}

/** Names of the entries of a folder (empty when it does not exist), sorted. */
export function listNames(folder: string): string[] {
  const names: string[] = [];
  try {
    for (const entry of Deno.readDirSync(folder)) names.push(entry.name);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return names.sort();
}

// Rename over an existing file, the last step of an atomic replace. POSIX
// rename replaces a busy target at once. Windows (MoveFileEx with
// REPLACE_EXISTING) refuses while another process holds the target open
// without delete sharing: a Python reader of the same store, an editor, a
// virus scanner or the search indexer. Those holds last milliseconds, so on
// Windows only, and only for those errors, the rename is retried with a
// doubling pause: seven attempts and 0.63 s in all, the bound the reference
// engine uses, before the error goes up. The caller holds the engine lock, so
// no other bimri writer waits behind this.

/** Pauses between attempts on Windows, in milliseconds (one more attempt than pauses). */
export const RENAME_RETRY_PAUSES_MS: readonly number[] = [10, 20, 40, 80, 160, 320];

/** What a rename needs from the system (injected in unit tests). */
export type RenameSystem = {
  /** The OS family (`Deno.build.os`). */
  os: string;
  /** Renames `from` to `to`, replacing `to`. */
  rename: (from: string, to: string) => void;
  /** Blocks the caller for `ms` milliseconds. */
  pause: (ms: number) => void;
};

function blockFor(ms: number): void {
  // A synchronous pause: the store layer is synchronous by design.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The running process's system. */
export const NATIVE_RENAME: RenameSystem = {
  os: Deno.build.os,
  rename: (from, to) => Deno.renameSync(from, to),
  pause: blockFor,
};

/**
 * True for the errors Windows reports while another process briefly holds a
 * file: access denied (os error 5), sharing violation (32), lock violation (33).
 */
export function isTransientWindowsHold(error: unknown): boolean {
  if (error instanceof Deno.errors.PermissionDenied || error instanceof Deno.errors.Busy) {
    return true;
  }
  return error instanceof Error && /\(os error (5|32|33)\)/.test(error.message);
}

/**
 * Renames `from` over `to`; on Windows, waits out a brief hold on `to` (see
 * the module note). A writer of a file people keep open in editors (the view)
 * may pass a longer `pauses` schedule.
 */
export function renameOver(
  from: string,
  to: string,
  system: RenameSystem = NATIVE_RENAME,
  pauses: readonly number[] = RENAME_RETRY_PAUSES_MS,
): void {
  forgetListing(from);
  forgetListing(to);
  for (let attempt = 0;; attempt++) {
    try {
      system.rename(from, to);
      return;
    } catch (error) {
      const retry = system.os === "windows" && attempt < pauses.length &&
        isTransientWindowsHold(error);
      if (!retry) throw error;
      system.pause(pauses[attempt]);
    }
  }
}

// Names what a path that `lstat` reports as a link really is, for link
// refusals. On POSIX that is a symbolic link. On Windows, Deno's `lstat`
// may report any reparse point as a link: a symbolic link and a junction
// (both must be refused: they redirect a path outside the store), but also
// a deduplicated file or a cloud placeholder (OneDrive "files on demand"),
// which redirect nothing. `Deno.readLink` succeeds only for the first kind
// (name-surrogate reparse points), so it tells them apart. Deno exposes no
// reparse tag, so a symbolic link cannot be told from a junction (both are
// refused, named together), and a non-link reparse point is still refused
// (the safe side: Deno's flags for it are not those of a regular file, and
// bimri's exclusive create and atomic replace are not proven on it) with a
// message saying what it is and how to make it a regular file.

/** What a path reported as a link is. */
export type LinkKind = "symlink" | "symlink-or-junction" | "other-reparse-point";

/** What the classification needs from the system (injected in unit tests). */
export type LinkProbe = {
  /** The OS family (`Deno.build.os`). */
  os: string;
  /** Reads a link's target; throws when `path` is no symbolic link or junction. */
  readLink: (path: string) => string;
};

/** The running process's system. */
export const NATIVE_LINK_PROBE: LinkProbe = {
  os: Deno.build.os,
  readLink: (path) => Deno.readLinkSync(path),
};

/** Classifies `path`, which `lstat` reported as a symbolic link. */
export function linkKind(path: string, probe: LinkProbe = NATIVE_LINK_PROBE): LinkKind {
  if (probe.os !== "windows") return "symlink";
  try {
    probe.readLink(path);
    return "symlink-or-junction";
  } catch {
    return "other-reparse-point";
  }
}

/** The noun phrase of a refusal, e.g. `a symbolic link` (POSIX wording unchanged). */
export function linkNoun(kind: LinkKind): string {
  switch (kind) {
    case "symlink":
      return "a symbolic link";
    case "symlink-or-junction":
      return "a symbolic link or junction";
    case "other-reparse-point":
      return "a reparse point that is not a symbolic link or junction (such as a deduplicated file or a cloud placeholder)";
  }
}

/** The step that clears the refusal, for a non-link reparse point; empty for links. */
export function linkNextStep(kind: LinkKind): string {
  return kind === "other-reparse-point"
    ? " BIMRI refuses it to be safe, as it cannot check such a file is a plain local file: make it one (for a cloud folder, keep the file on this device; for deduplication, exclude the folder), then run the command again."
    : "";
}

/**
 * The refusal text for `path`, which `lstat` reported as a link:
 * `<label> is <what it is>; <rest>`, plus how to make a non-link reparse
 * point a regular file. On POSIX the text is `<label> is a symbolic link; <rest>`.
 */
export function linkRefusal(
  path: string,
  label: string,
  rest: string,
  probe: LinkProbe = NATIVE_LINK_PROBE,
): string {
  const kind = linkKind(path, probe);
  return `${label} is ${linkNoun(kind)}; ${rest}${linkNextStep(kind)}`;
}

// lstat fingerprints of files and store folders (type, inode, size, mtime,
// ctime) that the derived caches key on, made unique while a coarse clock
// cannot vouch for them.

/** How long a file system that keeps whole seconds (FAT keeps even ones) may show one time. */
export const COARSE_CLOCK_MS = 2000;

/** What a racy print carries after the lstat fields (see `fingerprint`). */
const RACY_MARK = ":racy:";

/** True when `print` was taken too soon after a whole-second change to vouch for anything. */
export function isRacyPrint(print: string): boolean {
  return print.includes(RACY_MARK);
}

/** Set once this process has seen a timestamp with a fraction of a second: the clock is fine. */
let fineClockSeen = false;

/**
 * An lstat fingerprint: type, inode, size, mtime and ctime. A print is only
 * as good as the file system's clock: where timestamps fall on whole seconds
 * (FAT, exFAT, HFS+), a change later in the same second keeps the print, so a
 * print taken within that window vouches for nothing (git calls such entries
 * racily clean) and is made unique: it matches no other print, and the caches
 * keyed by it check the file itself until that window has passed. The clock
 * counts as coarse until this process sees a timestamp with a fraction of a
 * second (one in a thousand prints falls on a whole second by chance); tests
 * can give `now` and `coarse` instead.
 */
export function fingerprint(info: Deno.FileInfo, now?: number, coarse?: boolean): string {
  const ctime = (info as { ctime?: Date | null }).ctime;
  const mtimeMs = info.mtime?.getTime() ?? 0;
  const ctimeMs = ctime?.getTime() ?? 0;
  // One template, not an array join: the full checks print tens of thousands of files.
  const print = `${info.isSymlink ? "l" : info.isFile ? "f" : "o"}:${
    info.ino ?? 0
  }:${info.size}:${mtimeMs}:${ctimeMs}`;
  const wholeSeconds = mtimeMs % 1000 === 0 && ctimeMs % 1000 === 0;
  if (!wholeSeconds) fineClockSeen = true;
  const coarseClock = coarse ?? (wholeSeconds && !fineClockSeen);
  if (coarseClock && Math.max(mtimeMs, ctimeMs) + COARSE_CLOCK_MS > (now ?? Date.now())) {
    return `${print}${RACY_MARK}${crypto.randomUUID()}`;
  }
  return print;
}

/** Fingerprint of one store folder, or null when it is not a real folder. */
export function folderPrint(paths: StorePaths, folder: string): string | null {
  const info = lstatOrNull(paths.folder(folder));
  return info && info.isDirectory && !info.isSymlink ? fingerprint(info) : null;
}
