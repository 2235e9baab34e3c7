/** engine/integrity/summary.ts: an lstat print vouches only for what the file system's clock can tell apart. */
import { assert, assertEquals, assertNotEquals } from "../helpers/assert.ts";
import { COARSE_CLOCK_MS, fingerprint } from "../../engine/integrity/summary.ts";

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

Deno.test("a print on a whole-second clock is unique while a change could still keep it", () => {
  const second = 1_796_000_000_000; // whole seconds: FAT, exFAT, HFS+
  const recent = info(second, second);
  const a = fingerprint(recent, second + 500);
  const b = fingerprint(recent, second + 500);
  assertNotEquals(a, b); // racily clean: it matches nothing, so the file itself is checked
  assert(a.startsWith("f:42:7:"));
  // Once the window has passed, the same file has one stable print again.
  const later = second + COARSE_CLOCK_MS;
  assertEquals(fingerprint(recent, later), fingerprint(recent, later + 60_000));
  // Windows reports no ctime: the modification time alone decides.
  assertNotEquals(fingerprint(info(second, null), second), fingerprint(info(second, null), second));
});

Deno.test("a print on a fine clock is stable even right after the change", () => {
  const now = 1_796_000_000_123;
  assertEquals(fingerprint(info(now, now), now), fingerprint(info(now, now), now));
  // A whole-second modification time alone (tar, cp -p) with a fine change time is not coarse.
  assertEquals(fingerprint(info(now - 123, now), now), fingerprint(info(now - 123, now), now));
});
