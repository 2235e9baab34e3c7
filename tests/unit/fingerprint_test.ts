/** engine/store/fingerprint.ts: an lstat print vouches only for what the file system's clock can tell apart. */
import { assert, assertEquals, assertNotEquals } from "../helpers/assert.ts";
import { COARSE_CLOCK_MS, fingerprint } from "../../engine/store/files.ts";

function info(mtimeMs: number, ctimeMs: number | null): Deno.FileInfo {
  return {
    isFile: true,
    isDirectory: false,
    isSymlink: false,
    ino: 42,
    size: 7,
    mtime: new Date(mtimeMs),
    ctime: ctimeMs === null ? null : new Date(ctimeMs),
  } as unknown as Deno.FileInfo;
}

const SECOND = 1_796_000_000_000; // a whole second, as FAT, exFAT and HFS+ keep time

Deno.test("on a whole-second clock a print is unique while a change could still keep it", () => {
  const recent = info(SECOND, SECOND);
  const a = fingerprint(recent, SECOND + 500, true);
  const b = fingerprint(recent, SECOND + 500, true);
  assertNotEquals(a, b); // racily clean: it matches nothing, so the file itself is checked
  assert(a.startsWith("f:42:7:"));
  // Once the window has passed, the same file has one stable print again.
  const later = SECOND + COARSE_CLOCK_MS;
  assertEquals(fingerprint(recent, later, true), fingerprint(recent, later + 60_000, true));
  // Windows reports no ctime: the modification time alone decides.
  const windows = info(SECOND, null);
  assertNotEquals(fingerprint(windows, SECOND, true), fingerprint(windows, SECOND, true));
});

Deno.test("on a fine clock a print is stable even right after the change", () => {
  const now = SECOND + 123;
  assertEquals(fingerprint(info(now, now), now, false), fingerprint(info(now, now), now, false));
  // Once a fraction of a second was seen, a time that falls on a whole second by chance
  // (one print in a thousand) is no sign of a coarse clock.
  fingerprint(info(now, now), now);
  assertEquals(
    fingerprint(info(SECOND, SECOND), SECOND),
    fingerprint(info(SECOND, SECOND), SECOND),
  );
});
