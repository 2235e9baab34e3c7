/**
 * install in a cloned project whose committed `.gitignore` is hostile (a
 * link to an endless device, a FIFO): read bounded and never through a link
 * before anything is written, so install finishes at once with a refusal
 * naming `.gitignore` and the next step, and installs nothing.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, tempStore } from "../helpers/cli.ts";
import { gitInit } from "../helpers/share.ts";

/** A minute at most: a read that never ends fails the test instead of hanging it. */
function bounded(): { signal: AbortSignal } {
  return { signal: AbortSignal.timeout(60_000) };
}

/** Every path under `root` but git's own folder, by name only (a FIFO is never opened). */
function names(root: string, rel = ""): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(join(root, rel))) {
    const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (path === ".git") continue;
    out.push(path);
    if (entry.isDirectory && !entry.isSymlink) out.push(...names(root, path));
  }
  return out.sort();
}

/** Runs install in `target` (a git work tree holding a hostile .gitignore) and checks the refusal. */
async function refusedInstall(target: string): Promise<void> {
  const before = names(target);
  const r = await bimri(target, ["install", "--target", "."], { ...bounded(), cwd: target });
  assertEquals(r.code, 2, `${r.stdout}\n${r.stderr}`);
  assertMatch(
    r.stderr,
    /^BIMRI ERROR: \.gitignore is not a regular file \(a link, folder or device is never followed\); nothing was installed and \.gitignore was not changed\. Make \.gitignore a regular file \(it may then hold \.bimri-update-backups\/, \.bimri\/\*\.local\.json, \.claude\/settings\.local\.json, added by hand\), then run `bimri install` again\.$/m,
  );
  // Nothing installed: the project holds what it held (git's own folder aside).
  assertEquals(names(target), before);
}

Deno.test({
  // POSIX-only: /dev/zero is a POSIX device; Windows has no endless file to link to.
  ignore: Deno.build.os === "windows",
  name: "install refuses a .gitignore that links to /dev/zero at once, installing nothing",
  fn: async () => {
    const target = await tempStore("bimri-install-gitignore-");
    await gitInit(target);
    Deno.symlinkSync("/dev/zero", join(target, ".gitignore"), { type: "file" });
    await refusedInstall(target);
    assert(Deno.lstatSync(join(target, ".gitignore")).isSymlink);
  },
});

Deno.test({
  // POSIX-only: Windows has no FIFO in the file system.
  ignore: Deno.build.os === "windows",
  name: "install refuses a .gitignore that is a FIFO at once, installing nothing",
  fn: async () => {
    const target = await tempStore("bimri-install-gitignore-");
    await gitInit(target);
    const made = await new Deno.Command("mkfifo", { args: [join(target, ".gitignore")] }).output();
    assertEquals(made.code, 0);
    await refusedInstall(target);
    assert(Deno.lstatSync(join(target, ".gitignore")).isFifo);
  },
});
