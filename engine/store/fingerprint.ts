/**
 * lstat fingerprints of files and folders, which the derived caches key on,
 * and the rule for a print taken too soon after a change on a coarse clock.
 */

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
