/**
 * OS conditions a user can fix, for real, on a small tmpfs: a disk filled to
 * the last byte and a file system remounted read-only. Each command must stop
 * with a `BIMRI ERROR:` that says what to do (exit 2), leave no temp file and
 * no half-written line, and work once the condition is gone. Mounting needs
 * root (as CI runs here); elsewhere these tests are skipped.
 */
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  diffTrees,
  expectOk,
  hashTree,
  newSubject,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

function mountTmpfs(dir: string, size: string): boolean {
  try {
    const out = new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir],
      stdout: "null",
      stderr: "null",
    }).outputSync();
    return out.success;
  } catch {
    return false;
  }
}

function unmount(dir: string): void {
  new Deno.Command("umount", { args: [dir], stdout: "null", stderr: "null" }).outputSync();
}

function remount(dir: string, mode: "ro" | "rw"): void {
  const out = new Deno.Command("mount", {
    args: ["-o", `remount,${mode}`, dir],
    stdout: "null",
    stderr: "null",
  }).outputSync();
  assert(out.success, `remount ${mode} failed`);
}

const PROBE = Deno.makeTempDirSync({ prefix: "bimri-tmpfs-probe-" });
const CAN_MOUNT = Deno.build.os === "linux" && mountTmpfs(PROBE, "64k");
if (CAN_MOUNT) unmount(PROBE);
Deno.removeSync(PROBE);

/** Fills the filesystem holding `dir` until a write fails; returns the filler's path. */
function fillDisk(dir: string): string {
  const filler = `${dir}/filler`;
  const file = Deno.openSync(filler, { write: true, create: true });
  const block = new Uint8Array(4096);
  try {
    while (true) file.writeSync(block);
  } catch {
    // Full: the next write anywhere on this filesystem fails.
  } finally {
    file.close();
  }
  return filler;
}

function leftovers(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (/^\.bimri-(tmp|new)-/.test(entry.name)) found.push(path);
    }
  };
  walk(root);
  return found;
}

const DISK_FULL = /^BIMRI ERROR: the disk is full: .*Free some space, then retry the command/;

/**
 * Runs `body` with a project on a fresh 1 MB tmpfs whose memory holds `k.kept`
 * (committed by run `seed`), then unmounts it whatever happened.
 */
async function onTmpfs(
  prefix: string,
  body: (mountPoint: string, root: string, seed: string) => Promise<void>,
): Promise<void> {
  const mountPoint = Deno.makeTempDirSync({ prefix });
  assert(mountTmpfs(mountPoint, "1m"), "tmpfs mount failed");
  try {
    const root = `${mountPoint}/project`;
    Deno.mkdirSync(root);
    const seed = await startRun(root, "a");
    expectOk(await bimri(root, newSubject(seed, "k.kept", "Kept value.")), "propose");
    expectOk(await bimri(root, ["sync", "--run", seed]), "sync");
    await body(mountPoint, root, seed);
  } finally {
    unmount(mountPoint);
    Deno.removeSync(mountPoint, { recursive: true });
  }
}

Deno.test({
  name: "a full disk: clear error, no temp files, no half line, and the retry works",
  ignore: !CAN_MOUNT,
  fn: () =>
    onTmpfs("bimri-disk-full-", async (mountPoint, root) => {
      const run = await startRun(root, "b");
      expectOk(
        await bimri(root, ["propose", "--run", run, "--key", "k.kept", "--text", "New."]),
        "p",
      );
      const log = `${root}/.bimri/log/${run}.md`;
      const logBefore = Deno.readFileSync(log);

      const filler = fillDisk(mountPoint);
      // Longer than any room left in the log's last page: the append fails part way.
      const journal = await bimri(root, ["journal", "--run", run, "--text", "x".repeat(6000)]);
      assertEquals(journal.code, 2, journal.stderr);
      assertMatch(journal.stderr, DISK_FULL);
      assertEquals(Deno.readFileSync(log), logBefore, "the failed append left part of a line");
      for (
        const args of [
          newSubject(run, "k.other", "y".repeat(400)),
          ["sync", "--run", run],
          ["close", "--run", run, "--outcome", "success", "--summary", "Done."],
        ]
      ) {
        const r = await bimri(root, args);
        assertEquals(r.code, 2, `${args[0]}: ${r.stdout}${r.stderr}`);
        assertMatch(r.stderr, DISK_FULL, args[0]);
        assertEquals(leftovers(root), [], `${args[0]} left temp files`);
      }

      Deno.removeSync(filler);
      expectOk(await bimri(root, ["sync", "--run", run]), "sync after space came back");
      expectOk(await bimri(root, ["close", "--run", run, "--outcome", "success"]), "close");
      const got = expectOk(await bimri(root, ["get", "--key", "k.kept"]), "get");
      assertMatch(got.stdout, /New\./);
      const doctor = await bimri(root, ["doctor"]);
      assertEquals(doctor.code, 0, doctor.stdout + doctor.stderr);
      assertMatch(doctor.stdout, /^BIMRI doctor: PASSED$/m);
      assertEquals(leftovers(root), []);
    }),
});

Deno.test({
  name: "a read-only file system: writing commands say so and change nothing, reads still work",
  ignore: !CAN_MOUNT,
  fn: () =>
    onTmpfs("bimri-read-only-", async (mountPoint, root, run) => {
      const before = hashTree(root);
      remount(mountPoint, "ro");
      for (const args of [["start", "--actor", "b"], ["journal", "--run", run, "--text", "x"]]) {
        const r = await bimri(root, args);
        assertEquals(r.code, 2, `${args[0]}: ${r.stdout}${r.stderr}`);
        assertMatch(
          r.stderr,
          /^BIMRI ERROR: the store is on a read-only file system: .*need it writable/,
        );
      }
      assertMatch(expectOk(await bimri(root, ["get", "--key", "k.kept"]), "get").stdout, /Kept/);
      const doctor = await bimri(root, ["doctor", "--read-only"]);
      assertMatch(doctor.stdout, /^BIMRI doctor \(read-only\): PASSED$/m);
      remount(mountPoint, "rw");
      assertEquals(diffTrees(before, hashTree(root)), null);
      expectOk(
        await bimri(root, ["journal", "--run", run, "--text", "Writable again."]),
        "journal",
      );
    }),
});

Deno.test("a file system without hard links (FAT, exFAT): records are still created, never overwritten", async () => {
  // BIMRI_FAULT=no-hard-links makes every link fail as exFAT's does (EPERM); the
  // same session ran on a real exFAT volume when this fallback was written.
  const env = { BIMRI_FAULT: "no-hard-links" };
  const root = await tempStore("bimri-no-links-");
  const start = async (actor: string) => {
    const r = expectOk(await bimri(root, ["start", "--actor", actor], { env }), "start");
    return /^BIMRI RUN HANDLE: (R\d{6})$/m.exec(r.stdout)?.[1];
  };
  const run = await start("a");
  assert(run !== undefined);
  expectOk(await bimri(root, newSubject(run, "k.kept", "Kept value."), { env }), "propose");
  expectOk(await bimri(root, ["sync", "--run", run], { env }), "sync");
  // A log left under the next run's name (a start killed before saving state) stays as it is.
  const stray = `${root}/.bimri/log/R000002.md`;
  Deno.writeTextFileSync(stray, "left by a start that never finished\n");
  const next = await start("b");
  assertEquals(next, "R000003");
  assert(next !== undefined);
  assertEquals(Deno.readTextFileSync(stray), "left by a start that never finished\n");
  expectOk(
    await bimri(root, ["propose", "--run", next, "--key", "k.kept", "--text", "New."], { env }),
    "p",
  );
  expectOk(await bimri(root, ["close", "--run", next, "--outcome", "success"], { env }), "close");
  expectOk(await bimri(root, ["close", "--run", run, "--outcome", "success"], { env }), "close");
  assertMatch(expectOk(await bimri(root, ["get", "--key", "k.kept"]), "get").stdout, /New\./);
  assertEquals(leftovers(root), []);
  const doctor = await bimri(root, ["doctor"]);
  assertMatch(doctor.stdout, /^BIMRI doctor: PASSED$/m, doctor.stdout + doctor.stderr);
});
