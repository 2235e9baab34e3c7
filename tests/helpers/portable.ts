/**
 * Test helpers that behave the same on POSIX and Windows: a byte-exact folder
 * copy in Deno (no shell copy tool), a stand-in executable found on PATH (a
 * batch file on Windows, a shell script elsewhere), PATH prepending with the
 * platform's delimiter, the Python command name, and an in-place overwrite.
 */
import { delimiter, join } from "node:path";

/** The engine lock file's name inside `.bimri/`: never read or copied (Windows locks are mandatory). */
export const LOCK_FILE_NAME = "engine.lock";

/** The Python 3 command: `python` on Windows runners, `python3` elsewhere. */
export const PYTHON = Deno.build.os === "windows" ? "python" : "python3";

/**
 * Copies the folder `from` into `to` (created when missing) like an archive-mode copy:
 * files byte for byte with their modification and access times, folders,
 * and symbolic links as links with the same target text and type. An
 * `engine.lock` is never read (on Windows a held lock cannot be): the copy
 * gets a fresh, unlocked lock file with the content bimri gives a new one.
 */
export function copyTree(from: string, to: string): void {
  Deno.mkdirSync(to, { recursive: true });
  for (const entry of Deno.readDirSync(from)) {
    const source = join(from, entry.name);
    const dest = join(to, entry.name);
    if (entry.isSymlink) {
      const target = Deno.readLinkSync(source);
      // A link to a folder needs its type on Windows; POSIX ignores it.
      let type: "file" | "dir" = "file";
      try {
        if (Deno.statSync(source).isDirectory) type = "dir";
      } catch { /* a dangling link: a file link */ }
      Deno.symlinkSync(target, dest, { type });
    } else if (entry.isDirectory) {
      copyTree(source, dest);
    } else {
      if (entry.name === LOCK_FILE_NAME) {
        Deno.writeFileSync(dest, new Uint8Array([0x30]));
        continue;
      }
      Deno.copyFileSync(source, dest);
      const info = Deno.statSync(source);
      if (info.mtime && info.atime) Deno.utimeSync(dest, info.atime, info.mtime);
    }
  }
  const info = Deno.statSync(from);
  if (info.mtime && info.atime) Deno.utimeSync(to, info.atime, info.mtime);
}

/** `PATH` with `folder` first, joined with the platform's delimiter (`;` on Windows, `:` elsewhere). */
export function pathWithFirst(folder: string, path = Deno.env.get("PATH") ?? ""): string {
  return path === "" ? folder : [folder, path].join(delimiter);
}

/**
 * Writes a stand-in program `name` into `folder` that prints `<said> <args>`
 * and exits 0: a `name.cmd` batch file on Windows (found through PATHEXT), a
 * POSIX shell script elsewhere. Returns the file's path.
 */
export function writeStandIn(folder: string, name: string, said: string): string {
  if (Deno.build.os === "windows") {
    const path = join(folder, `${name}.cmd`);
    Deno.writeTextFileSync(path, `@echo off\r\necho ${said} %*\r\n`);
    return path;
  }
  const path = join(folder, name);
  // POSIX-only: the Windows branch above writes a .cmd instead.
  Deno.writeTextFileSync(path, `#!/bin/sh\necho "${said} $*"\n`);
  Deno.chmodSync(path, 0o755);
  return path;
}

/** Overwrites bytes of `path` in place at `offset` (same size, same inode: only ctime tells the change). */
export function overwriteInPlace(path: string, offset: number, text: string): void {
  const file = Deno.openSync(path, { write: true });
  try {
    file.seekSync(offset, Deno.SeekMode.Start);
    file.writeSync(new TextEncoder().encode(text));
  } finally {
    file.close();
  }
}
