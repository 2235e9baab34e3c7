/**
 * Windows code paths that cannot run on this machine, proven with injected
 * path flavours (engine/store/os_path.ts, Windows / POSIX) and an injected rename system:
 * root resolution (drive letters, UNC shares, backslashes, cmd.exe's quote
 * artifact), store paths built from IDs, and the rename retry that waits out
 * a brief hold on the target.
 */
import { posixPath as posix, windowsPath as win32 } from "../../engine/store/os_path.ts";
import { assertEquals, assertThrows } from "../helpers/assert.ts";
import { StorePaths } from "../../engine/store/paths.ts";
import { atomicReplace } from "../../engine/store/files.ts";
import {
  cleanFolderArgument,
  findStoreRoot,
  resolveFolder,
  resolveRoot,
} from "../../engine/store/root.ts";
import {
  isTransientWindowsHold,
  RENAME_RETRY_PAUSES_MS,
  renameOver,
  type RenameSystem,
} from "../../engine/store/files.ts";
import { tempStoreSync } from "../helpers/cli.ts";

/** A folder probe that knows only the given `.bimri` folders. */
function storesAt(...bimriFolders: string[]): (path: string) => boolean {
  const known = new Set(bimriFolders);
  return (path) => known.has(path);
}

Deno.test("win32: --root takes drive letters, forward slashes and relative paths", () => {
  const cwd = "C:\\Users\\ada\\work";
  assertEquals(resolveFolder(cwd, "D:\\proj", win32), "D:\\proj");
  assertEquals(resolveFolder(cwd, "D:/proj/sub/", win32), "D:\\proj\\sub");
  assertEquals(resolveFolder(cwd, "d:\\Proj", win32), "d:\\Proj");
  assertEquals(resolveFolder(cwd, "..\\other", win32), "C:\\Users\\ada\\other");
  assertEquals(resolveFolder(cwd, "sub/inner", win32), "C:\\Users\\ada\\work\\sub\\inner");
  assertEquals(resolveFolder(cwd, "\\proj", win32), "C:\\proj");
  assertEquals(resolveFolder(cwd, "\\\\server\\share\\proj", win32), "\\\\server\\share\\proj");
  assertEquals(resolveFolder(cwd, ".", win32), cwd);
});

Deno.test("win32: cmd.exe's trailing quote artifact is dropped, POSIX names are kept", () => {
  // `bimri --root "C:\proj\"` reaches the process as `C:\proj"`.
  assertEquals(cleanFolderArgument('C:\\proj"', win32), "C:\\proj");
  assertEquals(resolveFolder("C:\\x", 'D:\\proj\\"', win32), "D:\\proj");
  assertEquals(resolveRoot({ cwd: "C:\\x", envRoot: 'E:\\mem"' }, win32), "E:\\mem");
  // On POSIX a backslash and a quote are ordinary name characters.
  assertEquals(cleanFolderArgument('odd"', posix), 'odd"');
  assertEquals(resolveFolder("/home/ada", "a\\b", posix), "/home/ada/a\\b");
});

Deno.test("win32: the nearest ancestor with .bimri wins, and the walk stops at drive and share roots", () => {
  const probe = storesAt("C:\\Users\\ada\\.bimri");
  assertEquals(findStoreRoot("C:\\Users\\ada\\work\\deep", win32, probe), "C:\\Users\\ada");
  assertEquals(findStoreRoot("c:/Users/ada/work", win32, probe), "c:\\Users\\ada\\work");
  assertEquals(findStoreRoot("D:\\other", win32, probe), "D:\\other");
  assertEquals(findStoreRoot("C:\\", win32, storesAt("C:\\.bimri")), "C:\\");
  assertEquals(
    findStoreRoot("\\\\srv\\share\\proj\\a", win32, storesAt("\\\\srv\\share\\proj\\.bimri")),
    "\\\\srv\\share\\proj",
  );
  assertEquals(findStoreRoot("\\\\srv\\share\\a", win32, storesAt()), "\\\\srv\\share\\a");
  const visited: string[] = [];
  findStoreRoot("\\\\?\\C:\\a\\b", win32, (p) => {
    visited.push(p);
    return false;
  });
  assertEquals(visited, ["\\\\?\\C:\\a\\b\\.bimri", "\\\\?\\C:\\a\\.bimri", "\\\\?\\C:\\.bimri"]);
});

Deno.test("precedence: --root, then BIMRI_ROOT, then the ancestor walk (both flavours)", () => {
  const probeWin = storesAt("C:\\p\\.bimri");
  assertEquals(
    resolveRoot({ cwd: "C:\\p\\q", rootFlag: "X:\\r", envRoot: "Y:\\e" }, win32, probeWin),
    "X:\\r",
  );
  assertEquals(resolveRoot({ cwd: "C:\\p\\q", envRoot: "Y:\\e" }, win32, probeWin), "Y:\\e");
  assertEquals(resolveRoot({ cwd: "C:\\p\\q", envRoot: "" }, win32, probeWin), "C:\\p");
  const probePosix = storesAt("/p/.bimri");
  assertEquals(resolveRoot({ cwd: "/p/q", rootFlag: "r" }, posix, probePosix), "/p/q/r");
  assertEquals(resolveRoot({ cwd: "/p/q" }, posix, probePosix), "/p");
  assertEquals(resolveRoot({ cwd: "/x/y" }, posix, probePosix), "/x/y");
});

Deno.test("win32: store paths use backslashes and IDs cannot carry a separator or a drive", () => {
  const paths = new StorePaths("C:\\proj", win32);
  assertEquals(paths.dir, "C:\\proj\\.bimri");
  assertEquals(paths.view, "C:\\proj\\bimri.md");
  assertEquals(paths.state, "C:\\proj\\.bimri\\state.json");
  assertEquals(paths.lock, "C:\\proj\\.bimri\\engine.lock");
  assertEquals(paths.log("R000001"), "C:\\proj\\.bimri\\log\\R000001.md");
  assertEquals(paths.revision(7), "C:\\proj\\.bimri\\revisions\\V000007.md");
  assertEquals(paths.archiveMonth("2026-12"), "C:\\proj\\.bimri\\archive\\2026-12.md");
  for (const bad of ["R000001\\..\\x", "..\\R000001", "C:R000001", "R000001/../x", "R000001 "]) {
    assertThrows(() => paths.log(bad), /invalid run ID/);
  }
  for (const bad of ["..\\state.json", "a\\b", "C:evil", "a/b", ".hidden", "x:y"]) {
    assertThrows(() => paths.recovery(bad), /invalid recovery file name/);
  }
  assertThrows(() => paths.archiveMonth("2026-12\\..\\x"), /invalid archive month/);
  const onPosix = new StorePaths("/srv/proj", posix);
  assertEquals(onPosix.log("R000001"), "/srv/proj/.bimri/log/R000001.md");
});

/** A rename system that fails `failures` times with `error`, recording pauses. */
function flakyRename(os: string, failures: number, error: Error) {
  const pauses: number[] = [];
  let calls = 0;
  const system: RenameSystem = {
    os,
    rename: () => {
      calls++;
      if (calls <= failures) throw error;
    },
    pause: (ms) => pauses.push(ms),
  };
  return { system, pauses, calls: () => calls };
}

Deno.test("windows: rename over a briefly held file is retried with growing pauses, then succeeds", () => {
  const held = new Deno.errors.PermissionDenied("Access is denied. (os error 5)");
  const flaky = flakyRename("windows", 3, held);
  renameOver("a.tmp", "state.json", flaky.system);
  assertEquals(flaky.calls(), 4);
  assertEquals(flaky.pauses, RENAME_RETRY_PAUSES_MS.slice(0, 3));
  const sharing = flakyRename("windows", 1, new Error("used by another process (os error 32)"));
  renameOver("a.tmp", "state.json", sharing.system);
  assertEquals(sharing.calls(), 2);
});

Deno.test("windows: a hold that never ends fails after the bounded retries", () => {
  const held = new Deno.errors.PermissionDenied("Access is denied. (os error 5)");
  const stuck = flakyRename("windows", 1000, held);
  assertThrows(() => renameOver("a.tmp", "state.json", stuck.system), /Access is denied/);
  assertEquals(stuck.calls(), RENAME_RETRY_PAUSES_MS.length + 1);
  assertEquals(stuck.pauses.reduce((a, b) => a + b, 0), 630);
  const longer = flakyRename("windows", 1000, held);
  assertThrows(() => renameOver("a", "b", longer.system, [1, 2, 3]), /Access is denied/);
  assertEquals(longer.pauses, [1, 2, 3]);
});

Deno.test("rename errors are not retried off Windows or when they are not a hold", () => {
  const held = new Deno.errors.PermissionDenied("Permission denied (os error 13)");
  const linux = flakyRename("linux", 1, held);
  assertThrows(() => renameOver("a", "b", linux.system), /Permission denied/);
  assertEquals(linux.calls(), 1);
  const missing = flakyRename("windows", 1, new Deno.errors.NotFound("gone (os error 2)"));
  assertThrows(() => renameOver("a", "b", missing.system), /gone/);
  assertEquals(missing.calls(), 1);
  assertEquals(isTransientWindowsHold(new Error("lock violation (os error 33)")), true);
  assertEquals(isTransientWindowsHold(new Error("os error 2")), false);
  assertEquals(isTransientWindowsHold("text"), false);
});

Deno.test("the native rename really replaces an existing file (the path this OS takes)", () => {
  const dir = tempStoreSync("bimri-rename-");
  const target = `${dir}/target.json`;
  Deno.writeTextFileSync(target, "old");
  Deno.writeTextFileSync(`${dir}/new.tmp`, "new");
  renameOver(`${dir}/new.tmp`, target);
  assertEquals(Deno.readTextFileSync(target), "new");
  assertEquals([...Deno.readDirSync(dir)].length, 1);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("a failed replace leaves the target and no temporary file behind", () => {
  const dir = tempStoreSync("bimri-replace-fail-");
  // A non-empty folder in the target's place makes the final rename fail on every OS.
  const target = `${dir}/state.json`;
  Deno.mkdirSync(`${target}/inside`, { recursive: true });
  assertThrows(() => atomicReplace(target, "new"));
  assertEquals([...Deno.readDirSync(dir)].map((e) => e.name), ["state.json"]);
  assertEquals(Deno.statSync(`${target}/inside`).isDirectory, true);
  Deno.removeSync(dir, { recursive: true });
});
