/**
 * engine/store/os_path.ts against node:path: the same answers for join,
 * dirname and resolve on the shapes of paths bimri builds, in both flavours.
 */
import { posix, win32 } from "node:path";
import { assertEquals } from "../helpers/assert.ts";
import { posixPath, windowsPath } from "../../engine/store/os_path.ts";

const POSIX_PATHS = [
  "/",
  "/home/ada/proj",
  "/home/ada/proj/",
  "/home//ada/./proj/../x",
  "relative/sub",
  "relative/sub/",
  "a//b",
  "//a",
  "/a//b//",
  "./a",
  "../a/b",
  "a",
  ".",
  "..",
  "/a",
  "/a/b/c/.bimri/state.json",
  "a\\b",
  "/x/..",
  "/../a",
];

const WINDOWS_PATHS = [
  "C:\\",
  "C:\\Users\\ada\\work",
  "C:\\Users\\ada\\work\\",
  "c:/Users/ada/work",
  "D:/proj/sub/",
  "C:\\a\\..\\b\\.\\c",
  "\\proj",
  "\\\\server\\share\\proj",
  "\\\\server\\share\\proj\\sub",
  "\\\\server\\share\\",
  "//server/share/proj",
  "sub\\inner",
  "..\\other",
  "a",
  ".",
  "C:\\Users\\ada\\.bimri\\state.json",
  "C:\\..\\x",
  "C:a\\b",
  "C:\\a\\\\b",
  "\\\\server\\share",
  "\\\\server",
  "C:",
  "\\",
];

Deno.test("posix join, dirname and resolve agree with node:path", () => {
  for (const a of POSIX_PATHS) {
    assertEquals(posixPath.dirname(a), posix.dirname(a), `dirname ${a}`);
    assertEquals(posixPath.resolve("/home/ada", a), posix.resolve("/home/ada", a), `resolve ${a}`);
    for (const b of ["x", ".bimri", "state.json", "../y", "a/b/"]) {
      assertEquals(posixPath.join(a, b), posix.join(a, b), `join ${a} ${b}`);
    }
  }
  assertEquals(posixPath.resolve("relative"), posix.resolve("relative"));
});

Deno.test("win32 join, dirname and resolve agree with node:path", () => {
  for (const a of WINDOWS_PATHS) {
    assertEquals(windowsPath.dirname(a), win32.dirname(a), `dirname ${a}`);
    for (const cwd of ["C:\\Users\\ada", "\\\\srv\\docs\\team"]) {
      assertEquals(windowsPath.resolve(cwd, a), win32.resolve(cwd, a), `resolve ${cwd} ${a}`);
    }
    for (const b of ["x", ".bimri", "state.json", "..\\y", "a/b/"]) {
      assertEquals(windowsPath.join(a, b), win32.join(a, b), `join ${a} ${b}`);
    }
  }
});

Deno.test("random paths: the same answers as node:path (20,000 seeded cases)", () => {
  const atoms = ["a", "bc", "..", ".", "/", "\\", "C:", "d:", "x y"];
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const make = () => Array.from({ length: next(6) }, () => atoms[next(atoms.length)]).join("");
  for (let i = 0; i < 20000; i++) {
    const a = make();
    const b = make();
    assertEquals(posixPath.dirname(a), posix.dirname(a), `posix dirname ${a}`);
    assertEquals(posixPath.join(a, b), posix.join(a, b), `posix join ${a} ${b}`);
    assertEquals(posixPath.resolve("/h", a, b), posix.resolve("/h", a, b), `posix resolve ${a}`);
    // Device-namespace roots (\\.\ and \\?\) get special cases in node that
    // differ between its own functions; bimri reads them as \\server\share.
    if (/^[\\/]{2}[.?]([\\/]|$)/.test(a)) continue;
    assertEquals(windowsPath.dirname(a), win32.dirname(a), `win32 dirname ${a}`);
    assertEquals(windowsPath.resolve("C:\\h", a, b), win32.resolve("C:\\h", a, b), `resolve ${a}`);
    const nodeJoin = win32.join(a, b);
    // node prefixes ".\" when collapsing would make a name look like a drive
    // ("x\..\C:"); a folder cannot be named "C:" on Windows, so bimri does not.
    if (!nodeJoin.startsWith(".\\")) {
      assertEquals(windowsPath.join(a, b), nodeJoin, `win32 join ${a} ${b}`);
    }
  }
});
