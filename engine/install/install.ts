/**
 * `install --target DIR`: put BIMRI memory into a project. Two routes:
 *
 * - fresh folders and v1-v4 memory: portable files, marked adapter blocks,
 *   memory initialization or migration, index, host-local bindings and a
 *   self-check, with every touched path backed up under
 *   `.bimri/install-backups/<stamp>/` and restored when the self-check fails;
 * - existing v5 stores (`--quiescent` required, checked first): a code-only
 *   update that leaves `bimri.md` and every record byte-identical, with a
 *   receipt under `.bimri-update-backups/<stamp>/`. Stores older than 5.1.0
 *   are brought to 5.1.0 by the migrator first.
 *
 * The runtime prefix is proven with a sentinel before the first target write.
 */
import { dirname, join, relative, resolve, sep } from "node:path";
import { TEMPLATES } from "../../templates/mod.ts";
import { BimriError } from "../errors.ts";
import { BulkReader, nativeSha256 } from "../integrity/bulk_read.ts";
import { auditStore, prepareAudit } from "../integrity/doctor.ts";
import { collectGarbage } from "../integrity/heap.ts";
import { sameBytes } from "../migrate/common.ts";
import { detectStoreFormat, migrateForInstall, type MigrationReceipt } from "../migrate/mod.ts";
import { rejectUnclaimedLegacyRoots } from "../records/store_format.ts";
import { isOwnerNotice } from "../migrate/receipt.ts";
import {
  activationTransactionOf,
  PREPARING_PREFIX,
  publishActivationFolder,
  refuseUnsafeWriteFolder,
  STATE_BACKUP_NAME as ACTIVATION_STATE_BACKUP,
  UPDATE_BACKUPS,
} from "../migrate/v502.ts";
import { finishLegacyRetirement } from "../migrate/legacy.ts";
import { ensureV4Quiescent, finishV4View } from "../migrate/v4.ts";
import { decodeUtf8Strict, sha256Hex, utf8 } from "../model/text.ts";
import { now, utcTimestamp } from "../model/time.ts";
import { rebuildIndex } from "../retrieval/index_tsv.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import type { JsonObject, JsonValue } from "../model/json.ts";
import { atomicReplace, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { withEngineLock } from "../store/lock.ts";
import { faultPoint } from "../store/fault.ts";
import { STORE_FOLDERS, StorePaths } from "../store/paths.ts";
import { loadState, openExisting, withStore } from "../store/store.ts";
import {
  AUTHORITY_FORMAT,
  BIMRI_RELEASE,
  ENGINE_COMPAT_RELEASE,
  HOT_GRAMMAR,
  VERSIONS_EXPLAINED,
} from "../versions.ts";
import { renderedHookCommand, renderHooks } from "./hooks_config.ts";
import { mergeMarkedBlock } from "./merge.ts";
import { commandLineFor } from "./shell_quote.ts";
import { validateGitattributes, writeGitattributes } from "./gitattributes.ts";
import {
  recoverEarlierUpdates,
  removeIfPresent,
  restoreUpdateRecords,
  type UpdateRecord,
} from "./update_receipts.ts";
import {
  currentRuntimePrefix,
  runtimeBinding,
  type RuntimePrefix,
  verifyRuntimePrefix,
} from "./runtime.ts";

/**
 * Portable files copied into the target root (template name = file name).
 * `bimri-engine.py` is a small Python launcher, no engine code: it runs the
 * `argv_prefix` of `.bimri/runtime.local.json`, so `python3 bimri-engine.py ...`
 * written for the reference engine runs bimri. It replaces a reference engine
 * file of that name (kept in the install's backup or update receipt).
 */
export const PACKAGE_FILES: readonly string[] = [
  "BIMRI-AGENT-BLOCK.md",
  "INSTALL.md",
  "hooks-example.json",
  "BIMRI-MEMORY.template.md",
  "BIMRI-STATE.template.json",
  "BIMRI-LICENSE",
  "bimri-engine.py",
];
/** Where BIMRI's install guide goes when the project already has an INSTALL.md of its own. */
export const DIVERTED_GUIDE = "BIMRI-INSTALL.md";

/**
 * Whether `bytes` of a project file named `name` are BIMRI's own (this
 * release's template, an earlier bimri or reference copy), so replacing them
 * takes nothing of the project's. Files named after BIMRI are BIMRI's; an
 * INSTALL.md is BIMRI's when its title names BIMRI; hooks-example.json when it
 * holds a bimri hook command.
 */
export function isBimriFile(name: string, bytes: Uint8Array): boolean {
  if (/^(?:BIMRI-|bimri-)/.test(name)) return true;
  const text = new TextDecoder().decode(bytes);
  if (name === "INSTALL.md") return /^#[^\n]*\bBIMRI\b/.test(text.replace(/^\uFEFF/, ""));
  if (name === "hooks-example.json") return /bimri|BIMRI/.test(text);
  return true;
}

/**
 * The portable files install writes in `target` (issue 45): PACKAGE_FILES,
 * with BIMRI's guide as BIMRI-INSTALL.md when the project has its own
 * INSTALL.md, which then stays untouched.
 */
export function packageFilesFor(target: string): string[] {
  const own = readBytesOrNull(join(target, "INSTALL.md"));
  const diverted = own !== null && !isBimriFile("INSTALL.md", own);
  return PACKAGE_FILES.map((name) => name === "INSTALL.md" && diverted ? DIVERTED_GUIDE : name);
}

/** The template a portable file name is written from. */
function templateNameOf(name: string): string {
  return name === DIVERTED_GUIDE ? "INSTALL.md" : name;
}

/** Instruction files that receive the marked block. */
export const ADAPTER_FILES: readonly string[] = ["AGENTS.md", "CLAUDE.md"];
/** Host-bound files the installer writes (never authority, never committed). */
export const LOCAL_FILES: readonly string[] = [
  ".bimri/runtime.local.json",
  ".bimri/hooks.claude.local.json",
];
/** Store paths the code-only update never counts as memory. */
export const UNPROTECTED_STORE_PATHS: readonly string[] = [".bimri/engine.lock", ...LOCAL_FILES];
/** Root files of older memory generations that a migration may touch. */
const LEGACY_ROOT_FILES = ["bimri.md", "BIMRI.md", "BIMRI-backup.md", "bimri-backup.md"];
/** v5 state versions whose stores require `--quiescent`. */
const V5_FORMATS = ["5.0", "5.0.1", "5.0.2", "5.1.0"];
/** v5 state versions the fresh route upgrades (5.0.2 and 5.1.0 take the code-only update). */
const UPGRADED_V5_FORMATS = ["5.0", "5.0.1"];

/** Installer inputs. */
export type InstallOptions = {
  /** Project folder (absolute or relative to the working directory). */
  target: string;
  /** The caller attests that no old engine process can still write. */
  quiescent: boolean;
  /** Runtime prefix to record (defaults to the one running this process). */
  prefix?: RuntimePrefix;
};

/** Outcome of the hook smoke test. */
export type HookSmoke = {
  status: "passed" | "no-op-verified";
  detail: string;
  /** The run the smoke test opened and closed in its throwaway store copy (never the project's). */
  run: string | null;
};

/** What the installer did (the `--json` document; stable snake_case). */
export type InstallReport = {
  route: "fresh" | "migrated" | "code-only-update";
  target: string;
  bimri_release: string;
  compatible_engine: string;
  memory_format: string;
  hot_grammar: string;
  argv_prefix: string[];
  runtime: string;
  detected_format: string;
  memory: string[];
  adapters: string[];
  portable_files: string[];
  hook_smoke: HookSmoke;
  audit: { passed: boolean; errors: string[]; warnings: string[] };
  backup: string;
  receipt: string;
  lines: string[];
};

function rel(root: string, path: string): string {
  return relative(root, path).split(sep).join("/");
}

function backupStamp(): string {
  const d = now();
  const pad = (n: number) => String(n).padStart(2, "0");
  const hex = Array.from(
    crypto.getRandomValues(new Uint8Array(4)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  return `${d.getFullYear()}${pad(d.getMonth() + 1)}${pad(d.getDate())}-${pad(d.getHours())}${
    pad(d.getMinutes())
  }${pad(d.getSeconds())}-${hex}`;
}

/** The prefix as one command line for the shell of `os` (the running OS unless a test says). */
export function printablePrefix(argv: readonly string[], os: string = Deno.build.os): string {
  return commandLineFor(argv, os);
}

function template(name: string): string {
  const text = TEMPLATES[name];
  if (text === undefined) {
    throw new BimriError("io", `template ${name} is missing from this build.`);
  }
  return text;
}

/** The merged AGENTS.md / CLAUDE.md text for `existing` (null when the file is missing). */
export function adapterText(name: string, existing: string | null): string {
  if (name === "AGENTS.md") {
    return mergeMarkedBlock(existing, template("BIMRI-AGENT-BLOCK.md"), template("AGENTS.md"));
  }
  return mergeMarkedBlock(existing, template("CLAUDE.md"));
}

/**
 * The file's exact text: a leading byte-order mark is kept (the reference's
 * UTF-8 read keeps U+FEFF), so a merge never drops owner bytes.
 */
function readTextStrict(path: string, label: string): string | null {
  const bytes = readBytesOrNull(path);
  if (bytes === null) return null;
  const text = decodeUtf8Strict(bytes);
  if (text === null) {
    throw new BimriError(
      "store-unsafe",
      `${label} is not valid UTF-8, so the BIMRI block cannot be merged safely; fix or move the file, then install again. Nothing was changed.`,
    );
  }
  return text;
}

/** Where the fresh route keeps its backups of touched paths (root-relative). */
const INSTALL_BACKUPS = ".bimri/install-backups";

/**
 * Every folder either route creates or writes into, parents before children
 * (root-relative). Creating a folder or a file inside one follows a symbolic
 * link, so a linked one would carry backups, receipts or records out of the
 * project: each must be a real folder or absent.
 */
const WRITE_FOLDERS: readonly string[] = [
  ".bimri",
  INSTALL_BACKUPS,
  ...STORE_FOLDERS.map((name) => `.bimri/${name}`),
  UPDATE_BACKUPS,
];

/** Folders the reference engine's installer writes into (bimri leaves them alone). */
const REFERENCE_PACKAGE_FOLDERS: readonly string[] = ["legacy", "legacy/v1", "legacy/v3"];

/** Refuses symlinks and folders where the installer writes files (validate before any write). */
function validateWriteTargets(target: string): void {
  const info = lstatOrNull(target);
  if (info && !info.isDirectory) {
    throw new BimriError("store-unsafe", `the target ${target} exists and is not a folder.`);
  }
  // Parents first: a linked .bimri is refused before anything is looked up through it.
  for (const name of WRITE_FOLDERS) refuseUnsafeWriteFolder(target, name);
  // The reference installer writes its legacy notes under legacy/; a folder
  // redirected there would send that engine's writes outside the project, so
  // both engines refuse it before anything is written.
  for (const name of REFERENCE_PACKAGE_FOLDERS) {
    if (lstatOrNull(join(target, name))?.isSymlink) {
      throw new BimriError(
        "store-unsafe",
        `refusing to install through a redirected directory: ${name} is a symbolic link or junction. Replace it with a real folder (or remove it), then install again; nothing was changed.`,
      );
    }
  }
  for (const name of [...PACKAGE_FILES, DIVERTED_GUIDE, ...ADAPTER_FILES, ...LOCAL_FILES]) {
    const entry = lstatOrNull(join(target, name));
    if (entry && (entry.isSymlink || !entry.isFile)) {
      throw new BimriError(
        "store-unsafe",
        `refusing to write through ${name}: it is a symbolic link or not a regular file. Replace it with a regular file (or remove it), then install again; nothing was changed.`,
      );
    }
  }
  for (const name of ADAPTER_FILES) readTextStrict(join(target, name), name);
  validateGitattributes(target);
}

/**
 * Replaces a project file atomically, keeping its permission bits (new files
 * get 0644: these are ordinary project files, unlike the store's 0600 temps).
 */
function replaceProjectFile(path: string, text: string): void {
  const mode = lstatOrNull(path)?.mode ?? null;
  atomicReplace(path, text);
  try {
    Deno.chmodSync(path, mode === null ? 0o644 : mode & 0o777);
  } catch { /* permission bits are not supported on every platform */ }
}

/** Writes the portable files and the merged adapter blocks (unchanged files are left alone). */
function writePackageAndAdapters(target: string, backupOf: (name: string) => string): string[] {
  const notices: string[] = [];
  const files = packageFilesFor(target);
  if (files.includes(DIVERTED_GUIDE)) {
    notices.push(
      `The project's own INSTALL.md is not BIMRI's: it was left unchanged, and BIMRI's install guide was written as ${DIVERTED_GUIDE}.`,
    );
  }
  for (const name of files) {
    const path = join(target, name);
    const text = template(templateNameOf(name));
    const existing = readBytesOrNull(path);
    // Bytes, not decoded text: the reference copies every portable file, so a
    // same-named file that differs only by a byte-order mark is replaced too.
    if (!sameBytes(existing, utf8(text))) {
      if (existing !== null && !isBimriFile(name, existing)) {
        // Never silently: what, where the original went, how to put it back.
        const kept = backupOf(name);
        notices.push(
          `REPLACED ${name}: the project's own ${name} was not BIMRI's; BIMRI's copy replaced it. The original is kept at ${kept}; to restore it: cp '${kept}' '${name}'.`,
        );
      }
      replaceProjectFile(path, text);
    }
  }
  for (const name of ADAPTER_FILES) {
    const path = join(target, name);
    const existing = readTextStrict(path, name);
    const merged = adapterText(name, existing);
    // Against the exact text: a CRLF file whose merge only changes line endings is rewritten too.
    if (existing !== merged) replaceProjectFile(path, merged);
  }
  return notices;
}

/** Writes `.bimri/runtime.local.json` and `.bimri/hooks.claude.local.json`; returns the hooks text. */
function writeLocalBindings(target: string, prefix: RuntimePrefix): string {
  atomicReplace(
    join(target, ".bimri", "runtime.local.json"),
    canonicalJson(
      runtimeBinding(prefix, utcTimestamp(), join(Deno.realPathSync(target), "bimri-engine.py")),
    ),
  );
  const hooks = renderHooks(template("hooks-example.json"), prefix.argv);
  atomicReplace(join(target, ".bimri", "hooks.claude.local.json"), hooks);
  return hooks;
}

type ChildResult = { code: number; stdout: string; stderr: string };

async function runArgv(
  command: string,
  args: string[],
  cwd: string,
  stdin: string | null,
  timeoutSeconds: number,
): Promise<ChildResult> {
  const child = new Deno.Command(command, {
    args,
    cwd,
    stdin: stdin === null ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(timeoutSeconds * 1000),
  }).spawn();
  if (stdin !== null) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return {
    code: out.signal === null ? out.code : 124,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}

function describeFailure(what: string, result: ChildResult): string {
  const detail = (result.stderr.trim() || result.stdout.trim() || "no output").slice(0, 400);
  return `${what} (exit ${result.code}): ${detail}`;
}

/**
 * Copies the store (`bimri.md` and `.bimri/` without install backups) into
 * `into`, regular files and folders only: the fresh store has nothing else.
 * The engine lock is never read or copied (on Windows another process may
 * hold it, and a held lock cannot be read): the copy's first command creates its own.
 */
function copyStore(target: string, into: string): void {
  const copy = (from: string, to: string) => {
    const info = lstatOrNull(from);
    if (info === null) return;
    if (info.isDirectory && !info.isSymlink) {
      Deno.mkdirSync(to);
      for (const entry of Deno.readDirSync(from)) {
        const entryRel = rel(target, join(from, entry.name));
        if (entryRel === INSTALL_BACKUPS || entryRel === ".bimri/engine.lock") continue;
        copy(join(from, entry.name), join(to, entry.name));
      }
    } else if (info.isFile) Deno.copyFileSync(from, to);
    else throw new Error(`cannot copy ${rel(target, from)} for the hook smoke test`);
  };
  copy(join(target, "bimri.md"), join(into, "bimri.md"));
  copy(join(target, ".bimri"), join(into, ".bimri"));
}

/**
 * Runs the rendered SessionStart and SessionEnd commands with one synthetic
 * session and requires a new run, its brief, and its close. They run against
 * a throwaway copy of the new store (the rendered `${CLAUDE_PROJECT_DIR}`
 * bound to the copy): the reference's install opens no run, so the project's
 * first agent must get R000001 and `status` must show no runs.
 */
async function hookSmokeTest(target: string, hooks: string): Promise<HookSmoke> {
  const nonce = Array.from(
    crypto.getRandomValues(new Uint8Array(8)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  const session = `bimri-install-smoke-${nonce}`;
  const scratch = Deno.makeTempDirSync({ prefix: "bimri-install-smoke-" });
  try {
    copyStore(target, scratch);
    const start = renderedHookCommand(hooks, "SessionStart", scratch);
    const opened = await runArgv(
      start.command,
      start.args,
      target,
      JSON.stringify({ session_id: session, hook_event_name: "SessionStart", source: "startup" }),
      start.timeout,
    );
    const handle = /^BIMRI RUN HANDLE: (R[0-9]{6})$/m.exec(opened.stdout);
    if (opened.code !== 0 || !handle || !/^=== BIMRI BRIEF R[0-9]{6} \|/m.test(opened.stdout)) {
      throw new Error(
        describeFailure("the rendered hook-start did not open a run with a brief", opened),
      );
    }
    const end = renderedHookCommand(hooks, "SessionEnd", scratch);
    const closed = await runArgv(
      end.command,
      end.args,
      target,
      JSON.stringify({
        session_id: session,
        hook_event_name: "SessionEnd",
        reason: "bimri install smoke test",
      }),
      end.timeout,
    );
    if (closed.code !== 0 || !closed.stdout.includes(`BIMRI: run ${handle[1]} closed.`)) {
      throw new Error(
        describeFailure(`the rendered hook-close did not close ${handle[1]}`, closed),
      );
    }
    const state = loadState(new StorePaths(scratch));
    if (state.active_runs[handle[1]]) {
      throw new Error(`the smoke-test run ${handle[1]} is still active after hook-close`);
    }
    // The hooks run in the project folder, as Claude Code runs them: the run must
    // land where the rendered --root points, never in the store found from there.
    const log = join(".bimri", "log", `${handle[1]}.md`);
    if (!lstatOrNull(join(scratch, log))?.isFile || lstatOrNull(join(target, log)) !== null) {
      throw new Error(`the rendered hooks did not run ${handle[1]} in the store --root named`);
    }
    const detail = "for a synthetic session in a throwaway copy of the new store and hook-close " +
      "closed it; the project's store gets no run";
    return { status: "passed", run: handle[1], detail: `hook-start opened ${handle[1]} ${detail}` };
  } finally {
    try {
      Deno.removeSync(scratch, { recursive: true });
    } catch { /* a leftover temp folder is harmless; the OS temp cleaner takes it */ }
  }
}

/** Runs the rendered SessionEnd command for an unknown session: must succeed silently. */
async function hookNoopCheck(target: string, hooks: string): Promise<HookSmoke> {
  const end = renderedHookCommand(hooks, "SessionEnd", target);
  const result = await runArgv(
    end.command,
    end.args,
    target,
    JSON.stringify({ session_id: "bimri-install-check-unknown-session", reason: "check" }),
    end.timeout,
  );
  if (result.code !== 0 || result.stdout !== "" || result.stderr !== "") {
    throw new Error(describeFailure("the rendered hook-close failed its no-op check", result));
  }
  return {
    status: "no-op-verified",
    run: null,
    detail:
      "the rendered hook command ran bimri as a no-op close; an existing store gets no synthetic run (smoke-test it yourself, see the Claude Code hooks section of BIMRI's install guide)",
  };
}

/** Runs `doctor` through the recorded prefix (the binding agents will use). */
async function doctorThroughPrefix(
  target: string,
  prefix: RuntimePrefix,
): Promise<{ passed: boolean; errors: string[]; warnings: string[] }> {
  const [command, ...args] = prefix.argv;
  const result = await runArgv(command, [...args, "--root", target, "doctor"], target, null, 120);
  const lines = result.stdout.split("\n").filter((l) => l.startsWith("  - ")).map((l) =>
    l.slice(4)
  );
  const passed = result.code === 0 && /^BIMRI doctor: PASSED$/m.test(result.stdout);
  if (!passed) throw new Error(describeFailure("doctor did not pass", result));
  return { passed, errors: [], warnings: lines };
}

/**
 * The self-check of an upgraded v5.0.x store: doctor through the prefix must
 * pass, or fail only on damage the read-only audit names (governance records
 * the owner repairs with quarantine-authority); anything else rolls back.
 */
async function selfCheckOrRecovery(
  target: string,
  prefix: RuntimePrefix,
): Promise<{ passed: boolean; errors: string[]; warnings: string[] }> {
  try {
    return await doctorThroughPrefix(target, prefix);
  } catch (error) {
    const report = auditStore(new StorePaths(target));
    if (report.passed) throw error;
    return { passed: false, errors: report.errors, warnings: report.warnings };
  }
}

function forcedSelfCheckFailure(): void {
  // Test hook: lets the CLI tests prove the rollback path end to end.
  if (Deno.env.get("BIMRI_FORCE_SELF_CHECK_FAILURE") === "1") {
    throw new Error("forced self-check failure (BIMRI_FORCE_SELF_CHECK_FAILURE=1)");
  }
}

// ---------------------------------------------------------------------------
// Fresh and legacy route: snapshot, write, self-check, rollback.

type SnapshotRecord = { existed: boolean; backup: string | null; sha256: string | null };

type InstallSnapshot = {
  backupDir: string;
  preexistingFiles: Set<string>;
  preexistingDirs: Set<string>;
  records: Record<string, SnapshotRecord>;
  manifest: JsonObject;
};

/** Every file and folder under `.bimri/` except install backups (root-relative). */
function storeEntries(target: string): { files: Set<string>; dirs: Set<string> } {
  const files = new Set<string>();
  const dirs = new Set<string>();
  const walk = (dir: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      const name = rel(target, path);
      if (name === INSTALL_BACKUPS) continue;
      if (entry.isDirectory && !entry.isSymlink) {
        dirs.add(name);
        walk(path);
      } else files.add(name);
    }
  };
  walk(join(target, ".bimri"));
  return { files, dirs };
}

/**
 * Backs up every path the fresh route may replace into a new
 * `.bimri/install-backups/<stamp>/`. Every managed path is checked before the
 * first write, so a refusal leaves the project as it was.
 */
function snapshotTarget(target: string, stamp: string): InstallSnapshot {
  const { files, dirs } = storeEntries(target);
  const managed = [
    ...new Set([
      ...PACKAGE_FILES,
      DIVERTED_GUIDE,
      ...ADAPTER_FILES,
      ...LEGACY_ROOT_FILES,
      ...LOCAL_FILES,
      ".bimri/state.json",
      ".bimri/index.tsv",
      ...[...files].filter((f) => /^\.bimri\/conflicts\/[^/]+\.json$/.test(f)).sort(),
    ]),
  ];
  for (const name of managed) {
    const info = lstatOrNull(join(target, name));
    if (info?.isSymlink || (info && !info.isFile)) {
      throw new BimriError(
        "store-unsafe",
        `refusing to install over ${name}: it is a symbolic link or not a regular file. Replace it with a regular file or move it aside, then install again. Nothing was changed.`,
      );
    }
  }
  // validateWriteTargets refused linked folders; the stamp folder itself is
  // created exclusively, so even an entry that appeared since is never reused.
  Deno.mkdirSync(join(target, INSTALL_BACKUPS), { recursive: true });
  const backupDir = join(target, INSTALL_BACKUPS, stamp);
  Deno.mkdirSync(backupDir);
  const records: Record<string, SnapshotRecord> = {};
  for (const name of managed) {
    const source = join(target, name);
    const info = lstatOrNull(source);
    if (!info) {
      records[name] = { existed: false, backup: null, sha256: null };
      continue;
    }
    const bytes = Deno.readFileSync(source);
    const backup = name.includes("/") ? `runtime/${name}` : name;
    Deno.mkdirSync(dirname(join(backupDir, backup)), { recursive: true });
    atomicReplace(join(backupDir, backup), bytes);
    records[name] = { existed: true, backup, sha256: sha256Hex(bytes) };
  }
  const manifest: JsonObject = {
    bimri_release: BIMRI_RELEASE,
    compatible_engine: ENGINE_COMPAT_RELEASE,
    memory_format: AUTHORITY_FORMAT,
    created_at: utcTimestamp(),
    target,
    status: "prepared",
    records: records as unknown as JsonObject,
    preexisting_bimri_files: [...files].sort(),
  };
  atomicReplace(join(backupDir, "install-manifest.json"), canonicalJson(manifest));
  return { backupDir, preexistingFiles: files, preexistingDirs: dirs, records, manifest };
}

/** Restores every touched path of a fresh install; returns what could not be restored. */
function rollbackInstall(target: string, snapshot: InstallSnapshot): string[] {
  const errors: string[] = [];
  const { files, dirs } = storeEntries(target);
  for (const name of [...files].sort()) {
    if (snapshot.preexistingFiles.has(name) || name === ".bimri/engine.lock") continue;
    if (name in snapshot.records) continue;
    try {
      removeIfPresent(join(target, name));
    } catch (error) {
      errors.push(`could not remove ${name}: ${(error as Error).message}`);
    }
  }
  for (const [name, record] of Object.entries(snapshot.records)) {
    const path = join(target, name);
    try {
      if (record.existed && record.backup) {
        atomicReplace(path, Deno.readFileSync(join(snapshot.backupDir, record.backup)));
      } else removeIfPresent(path);
    } catch (error) {
      errors.push(`could not restore ${name}: ${(error as Error).message}`);
    }
  }
  // Folders the install created (deepest first), except those holding the backup.
  for (const name of [...dirs].sort().reverse()) {
    if (snapshot.preexistingDirs.has(name)) continue;
    try {
      Deno.removeSync(join(target, name));
    } catch (error) {
      errors.push(`could not remove created folder ${name}: ${(error as Error).message}`);
    }
  }
  // The engine lock is recreated harmlessly by any command; drop it when the store is gone.
  if (
    !snapshot.preexistingFiles.has(".bimri/engine.lock") &&
    lstatOrNull(join(target, ".bimri", "state.json")) === null
  ) {
    try {
      removeIfPresent(join(target, ".bimri", "engine.lock"));
    } catch { /* a held lock file is harmless */ }
  }
  const manifest = {
    ...snapshot.manifest,
    status: errors.length ? "rollback-incomplete" : "rolled-back",
    rolled_back_at: utcTimestamp(),
    rollback_errors: errors,
  };
  try {
    atomicReplace(join(snapshot.backupDir, "install-manifest.json"), canonicalJson(manifest));
  } catch (error) {
    errors.push(`could not update the install manifest: ${(error as Error).message}`);
  }
  return errors;
}

function receiptMemoryLines(receipt: MigrationReceipt): string[] {
  // The migrate headline names the command `migrate`; the installer prints its own.
  // Owner notices (migrate prints them on stderr) stay in the install's report.
  return [
    ...receipt.lines.filter((line) => !line.startsWith("BIMRI: migration/initialization")),
    ...receipt.warnings.filter(isOwnerNotice).map((notice) => `Repair warning: ${notice}`),
  ];
}

async function freshInstall(
  target: string,
  format: string,
  prefix: RuntimePrefix,
  quiescent: boolean,
): Promise<InstallReport> {
  validateWriteTargets(target);
  const stamp = backupStamp();
  const snapshot = snapshotTarget(target, stamp);
  const backupRel = rel(target, snapshot.backupDir);
  const newStore = format === "empty" || format === "v5-view";
  // A v5.0 or v5.0.1 store is upgraded on this route, as the reference does.
  // Its sound core (state and accepted head) with damaged governance records
  // does not roll back: the install completes as recovery-required, so the
  // quarantine and restore tools it installs are there for the owner.
  const upgradesV5 = UPGRADED_V5_FORMATS.includes(format);
  let receipt: MigrationReceipt;
  let smoke: HookSmoke;
  let audit: { passed: boolean; errors: string[]; warnings: string[] };
  const portable = packageFilesFor(target);
  let ownerFiles: string[] = [];
  try {
    ownerFiles = writePackageAndAdapters(target, (name) => `${backupRel}/${name}`);
    receipt = migrateForInstall(target, { quiescent });
    if (receipt.validation !== "PASSED" && !upgradesV5) {
      throw new Error(`memory validation failed: ${receipt.validation_errors.join("; ")}`);
    }
    // Unreadable state or a broken accepted head stays rollback-worthy.
    if (upgradesV5) openExisting(new StorePaths(target));
    try {
      withStore(target, (store) => rebuildIndex(store));
    } catch (error) {
      // The index is a derived export; damaged authority pauses its rebuild.
      if (
        !(upgradesV5 && error instanceof BimriError && error.code === "authority-recovery-needed")
      ) {
        throw error;
      }
    }
    const hooks = writeLocalBindings(target, prefix);
    forcedSelfCheckFailure();
    smoke = newStore ? await hookSmokeTest(target, hooks) : await hookNoopCheck(target, hooks);
    audit = upgradesV5
      ? await selfCheckOrRecovery(target, prefix)
      : await doctorThroughPrefix(target, prefix);
    atomicReplace(
      join(snapshot.backupDir, "install-manifest.json"),
      canonicalJson({
        ...snapshot.manifest,
        status: audit.passed ? "installed" : "installed-recovery-required",
        completed_at: utcTimestamp(),
      }),
    );
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    const rollbackErrors = rollbackInstall(target, snapshot);
    if (rollbackErrors.length > 0) {
      throw new BimriError(
        "io",
        `installation failed and rollback was incomplete. Backups: ${backupRel}. Cause: ${cause}. Rollback: ${
          rollbackErrors.join("; ")
        }`,
      );
    }
    throw new BimriError(
      "refused",
      `installation self-check failed; target files were rolled back. Backups: ${backupRel}. Cause: ${cause}`,
    );
  }
  // After success: the memory's .gitattributes block (the owner's previous file kept in the backups).
  writeGitattributes(target, snapshot.backupDir);
  return {
    route: newStore ? "fresh" : "migrated",
    target,
    ...versionFields(),
    argv_prefix: [...prefix.argv],
    runtime: prefix.kind,
    detected_format: format,
    memory: [...receiptMemoryLines(receipt), ...ownerFiles],
    adapters: [...ADAPTER_FILES],
    portable_files: portable,
    hook_smoke: smoke,
    audit,
    backup: backupRel,
    receipt: `${backupRel}/install-manifest.json`,
    lines: [],
  };
}

function versionFields() {
  return {
    bimri_release: BIMRI_RELEASE,
    compatible_engine: ENGINE_COMPAT_RELEASE,
    memory_format: AUTHORITY_FORMAT,
    hot_grammar: HOT_GRAMMAR,
  };
}

// ---------------------------------------------------------------------------
// Existing v5 route: code-only update.

/** What the update manifest records about one program path before it is replaced. */
export type PathRecord =
  | { type: "file"; bytes: number; sha256: string }
  | { type: "directory" }
  | { type: "symlink"; target: string; target_bytes_hex: string }
  | { type: "other"; mode: number }
  | { type: "missing" };

/**
 * Every program path the reference engine's code-only update backs up. Its
 * installer re-validates each `.bimri-update-backups/<stamp>/install-manifest.json`
 * and requires `records` to name exactly these paths (absent ones with
 * `existed: false`), so bimri records the same set even though it ships fewer.
 */
const UPDATE_RECEIPT_TARGETS: readonly string[] = [
  "bimri-engine.py",
  "BIMRI-PROTOCOL.md",
  "BIMRI-MEMORY.template.md",
  "BIMRI-STATE.template.json",
  "BIMRI-AGENT-BLOCK.md",
  "INSTALL.md",
  "MIGRATION.md",
  "hooks-example.json",
  "legacy/README.md",
  "legacy/v1/BIMRI-global-instructions.md",
  "legacy/v3/BIMRI-global-instructions.md",
  "legacy/v3/BIMRI-global-instructions-v3.md",
  "legacy/v3/README.md",
  "BIMRI-LICENSE",
  ...ADAPTER_FILES,
  ...LOCAL_FILES,
];
/** Program folders the reference receipt records as `directories` (name -> existed). */
const UPDATE_RECEIPT_DIRECTORIES: readonly string[] = ["legacy", "legacy/v1", "legacy/v3"];

/**
 * The reference's protected-tree digest: SHA-256 of the records as compact,
 * key-sorted, ASCII-escaped JSON (Python `json.dumps(sort_keys=True,
 * separators=(",", ":"), ensure_ascii=True)`), so its receipt validator can
 * recompute the digest bimri writes.
 */
function treeDigest(records: Record<string, PathRecord>): string {
  const sortKeys = (value: JsonValue): JsonValue => {
    if (Array.isArray(value)) return value.map(sortKeys);
    if (value !== null && typeof value === "object") {
      const out: JsonObject = {};
      for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key]);
      return out;
    }
    return value;
  };
  const compact = JSON.stringify(sortKeys(records as unknown as JsonValue)).replace(
    /[\u0080-\uffff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return sha256Hex(compact);
}

/** Path type and exact content of `bimri.md` and everything under `.bimri/` that is memory. */
export type ProtectedManifest = {
  records: Record<string, PathRecord>;
  tree_digest: string;
  bimri_md_sha256: string | null;
  state_sha256: string | null;
  accepted_head_revision: number | null;
  accepted_head_hash: string | null;
};

function pathRecord(path: string, reader: BulkReader): PathRecord {
  const info = lstatOrNull(path);
  if (!info) return { type: "missing" };
  if (info.isSymlink) {
    const target = Deno.readLinkSync(path);
    const hex = Array.from(
      new TextEncoder().encode(target),
      (b) => b.toString(16).padStart(2, "0"),
    );
    return { type: "symlink", target, target_bytes_hex: hex.join("") };
  }
  if (info.isDirectory) return { type: "directory" };
  if (info.isFile) {
    const bytes = reader.read(path);
    if (bytes === null) return { type: "missing" };
    return { type: "file", bytes: bytes.length, sha256: nativeSha256(bytes) };
  }
  // The file-type bits of st_mode, as the reference records them (stat.S_IFMT).
  return { type: "other", mode: (info.mode ?? 0) & 0o170000 };
}

/** Describes every protected store path without following symbolic links. */
export function protectedManifest(target: string): ProtectedManifest {
  // Every record of the store, hundreds of MB at 10,000 runs: read through one
  // reused buffer and hashed natively, as the audit reads them (bulk_read.ts).
  const reader = new BulkReader();
  const records: Record<string, PathRecord> = {
    "bimri.md": pathRecord(join(target, "bimri.md"), reader),
  };
  // `name` is the folder's path relative to `target`, with `/` (as the receipt records it).
  const walk = (dir: string, name: string) => {
    const names = [...Deno.readDirSync(dir)].map((entry) => entry.name).sort();
    for (const entryName of names) {
      const path = join(dir, entryName);
      const entryRel = `${name}/${entryName}`;
      if (UNPROTECTED_STORE_PATHS.includes(entryRel)) continue;
      const record = pathRecord(path, reader);
      records[entryRel] = record;
      if (record.type === "directory") walk(path, entryRel);
    }
    // A folder of thousands of records leaves tens of MB of garbage (see heap.ts).
    if (names.length >= 1000) collectGarbage();
  };
  walk(join(target, ".bimri"), ".bimri");
  const hot = records["bimri.md"];
  const state = records[".bimri/state.json"];
  let head: { revision: number | null; hash: string | null } = { revision: null, hash: null };
  try {
    const raw = JSON.parse(Deno.readTextFileSync(join(target, ".bimri", "state.json")));
    head = {
      revision: typeof raw.head_revision === "number" ? raw.head_revision : null,
      hash: typeof raw.head_hash === "string" ? raw.head_hash : null,
    };
  } catch { /* the audit reports an unreadable state */ }
  return {
    records,
    tree_digest: treeDigest(records),
    bimri_md_sha256: hot.type === "file" ? hot.sha256 : null,
    state_sha256: state?.type === "file" ? state.sha256 : null,
    accepted_head_revision: head.revision,
    accepted_head_hash: head.hash,
  };
}

/** Differences between two protected manifests (empty when memory is untouched). */
export function manifestDifferences(before: ProtectedManifest, after: ProtectedManifest): string[] {
  const out: string[] = [];
  const names = new Set([...Object.keys(before.records), ...Object.keys(after.records)]);
  for (const name of [...names].sort()) {
    const a = before.records[name];
    const b = after.records[name];
    if (!a) out.push(`created protected path ${name}`);
    else if (!b) out.push(`removed protected path ${name}`);
    else if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`changed protected path ${name}`);
  }
  return out;
}

/**
 * The refusal for an install that stopped after its upgrade committed: says
 * so first, since the cause alone may read as if nothing had changed.
 */
function stoppedAfterUpgrade(upgrade: string, error: unknown): BimriError {
  const message = (error instanceof Error ? error.message : String(error))
    // True of the step that refused, not of the install: the upgrade did change memory.
    .replace(/[;,.]?\s*nothing was changed\.?\s*$/i, "");
  const cause = /[.!?]$/.test(message) ? message : `${message}.`;
  return new BimriError(
    error instanceof BimriError ? error.code : "io",
    `${upgrade}, but the install stopped before writing its program files: ${cause} Memory stays at ${AUTHORITY_FORMAT}; fix the cause, then install again with --quiescent.`,
  );
}

async function codeOnlyUpdate(
  target: string,
  format: string,
  prefix: RuntimePrefix,
  quiescent: boolean,
  adopted = false,
): Promise<InstallReport> {
  validateWriteTargets(target);
  // A store share pull built here has no index yet: the derived cache is
  // built before the update's "before" snapshot, so no repair warning follows.
  if (adopted) {
    withStore(target, (store) => {
      if (lstatOrNull(store.paths.index) === null) rebuildIndex(store);
    });
  }
  // Earlier receipts first, as the reference checks them: a cut-short update
  // gets its program files back before this one backs them up.
  const paths = new StorePaths(target);
  const memory: string[] = withEngineLock(paths, () => recoverEarlierUpdates(target));
  if (format === AUTHORITY_FORMAT) {
    // An install (or migrate) killed after its migration committed the state
    // but before the old root files were retired: finish that first, as
    // migrate does, or doctor keeps failing on "unclaimed legacy root files".
    memory.push(
      ...[...finishLegacyRetirement(target), ...finishV4View(target)].map((n) =>
        `Repair warning: ${n}`
      ),
    );
  }
  // A v5.0.2 store is activated first, in its own transaction folder; the
  // update then finishes in that folder, so the project holds one receipt per
  // update, as the reference writes it (its installer refuses a transaction
  // folder without an install-manifest.json). The receipt's "before" is the
  // store as it was before the activation.
  let activation: { transaction: string; before: ProtectedManifest } | null = null;
  // Set once this install has committed the store's upgrade: from then on a
  // failure must say that memory did change, never "nothing was changed".
  let upgraded: string | null = null;
  if (format !== AUTHORITY_FORMAT) {
    // A 5.0.2 store reaches 5.1.0 through the migrator first (5.0 and 5.0.1
    // take the fresh route, see UPGRADED_V5_FORMATS).
    const beforeActivation = format === "5.0.2" ? protectedManifest(target) : null;
    let receipt: MigrationReceipt;
    try {
      receipt = migrateForInstall(target, { quiescent });
    } catch (error) {
      // The migrator refuses before its commit; a failure after it (in the
      // view sync, say) leaves a 5.1.0 state that must be named as such.
      let committed = false;
      try {
        committed = detectStoreFormat(target).format === AUTHORITY_FORMAT;
      } catch { /* not provably upgraded: the migrator's own error stands */ }
      if (!committed) throw error;
      throw stoppedAfterUpgrade(`the v${format} store was brought to ${AUTHORITY_FORMAT}`, error);
    }
    upgraded =
      `the v${format} store was brought to ${AUTHORITY_FORMAT}, its exact prior state kept at ${
        receipt.backup ?? "its backup"
      }`;
    // A receipt means the upgrade committed. A FAILED validation is the audit
    // finding damage the upgrade carried over untouched (a damaged conflict
    // record, say): the update goes on exactly as on a 5.1.0 store with that
    // damage, and its own read-only audit reports recovery required. Stopping
    // here would leave an upgraded store without program files or runtime
    // binding, under a message saying it could not be upgraded.
    memory.push(...receiptMemoryLines(receipt));
    const transaction = activationTransactionOf(receipt);
    if (transaction !== null && beforeActivation !== null) {
      activation = { transaction, before: beforeActivation };
    }
  }
  // recoverEarlierUpdates has refused a backup root that is a link or no folder.
  const backupRoot = join(target, UPDATE_BACKUPS);
  // An activation's folder keeps its preparing name until this update's
  // receipt is in it (see PREPARING_PREFIX).
  let backupDir = join(backupRoot, activation?.transaction ?? backupStamp());
  let backupRel = rel(target, backupDir);
  const stateBackup = `state-v${AUTHORITY_FORMAT}-exact.json`;
  const records: Record<string, UpdateRecord> = {};
  let manifest: JsonObject = {};
  let before: ProtectedManifest | null = null;
  let hooks = "";
  let ownerFiles: string[] = [];
  const portable = packageFilesFor(target);
  // BIMRI-INSTALL.md is outside the reference's receipt targets: a rollback removes a new one.
  const newGuide = portable.includes(DIVERTED_GUIDE) &&
    lstatOrNull(join(target, DIVERTED_GUIDE)) === null;
  let audit = { passed: false, errors: [] as string[], warnings: [] as string[] };

  const prepareAndWrite = () => {
    // Unreadable state or a broken accepted head stops the update before any write;
    // damaged governance records do not (the update then reports recovery required).
    openExisting(paths);
    before = protectedManifest(target);
    const pre = auditStore(paths);
    if (activation === null) {
      // A new stamp folder, created exclusively (its root was refused if a link).
      Deno.mkdirSync(backupRoot, { recursive: true });
      Deno.mkdirSync(backupDir);
    }
    for (const name of UPDATE_RECEIPT_TARGETS) {
      const bytes = readBytesOrNull(join(target, name));
      if (bytes === null) {
        records[name] = { existed: false, backup: null, sha256: null };
        continue;
      }
      const backup = `files/${name}`;
      Deno.mkdirSync(dirname(join(backupDir, backup)), { recursive: true });
      atomicReplace(join(backupDir, backup), bytes);
      records[name] = { existed: true, backup, sha256: sha256Hex(bytes) };
    }
    const stateBytes = Deno.readFileSync(paths.state);
    atomicReplace(join(backupDir, stateBackup), stateBytes);
    // What the receipt calls "before": the store before this install touched it.
    const snapshot: ProtectedManifest = activation?.before ?? before;
    const exactOldState = activation
      ? readBytesOrNull(join(backupDir, ACTIVATION_STATE_BACKUP)) ?? new Uint8Array()
      : stateBytes;
    manifest = {
      bimri_release: BIMRI_RELEASE,
      compatible_engine: ENGINE_COMPAT_RELEASE,
      // The reference installer identifies a receipt by engine_release + memory_format.
      engine_release: ENGINE_COMPAT_RELEASE,
      memory_format: AUTHORITY_FORMAT,
      mode: activation ? "lossless-authority-activation" : "code-only-update",
      source_memory_format: activation ? "5.0.2" : AUTHORITY_FORMAT,
      created_at: utcTimestamp(),
      target,
      status: "prepared",
      records: records as unknown as JsonObject,
      directories: Object.fromEntries(
        UPDATE_RECEIPT_DIRECTORIES.map((name) => [
          name,
          lstatOrNull(join(target, name))?.isDirectory === true,
        ]),
      ),
      protected_manifest_before: {
        ...snapshot,
        protected_path_count: Object.keys(snapshot.records).length,
      } as unknown as JsonObject,
      protected_path_count: Object.keys(snapshot.records).length,
      before_tree_digest: snapshot.tree_digest,
      before_bimri_md_sha256: snapshot.bimri_md_sha256,
      before_state_sha256: snapshot.state_sha256,
      accepted_head_revision_before: snapshot.accepted_head_revision,
      accepted_head_hash_before: snapshot.accepted_head_hash,
      pre_update_audit_errors: pre.errors,
      state_backup: activation ? ACTIVATION_STATE_BACKUP : stateBackup,
      state_backup_sha256: sha256Hex(exactOldState),
    };
    atomicReplace(join(backupDir, "install-manifest.json"), canonicalJson(manifest));
    if (activation?.transaction.startsWith(PREPARING_PREFIX)) {
      const finalName = publishActivationFolder(target, activation.transaction);
      backupDir = join(backupRoot, finalName);
      backupRel = rel(target, backupDir);
      // The activation's receipt lines named the folder by its preparing name.
      const [from, to] = [activation.transaction, finalName].map((n) => `${UPDATE_BACKUPS}/${n}/`);
      for (let i = 0; i < memory.length; i++) memory[i] = memory[i].replaceAll(from, to);
    }
    ownerFiles = writePackageAndAdapters(
      target,
      (name) =>
        UPDATE_RECEIPT_TARGETS.includes(name)
          ? `${backupRel}/files/${name}`
          : `${backupRel} (not backed up: ${name} is new)`,
    );
    hooks = writeLocalBindings(target, prefix);
    faultPoint("update-after-program-files");
    const differences = manifestDifferences(before, protectedManifest(target));
    if (differences.length > 0) {
      throw new Error(`memory preservation check failed: ${differences.join("; ")}`);
    }
    const post = auditStore(paths);
    audit = { passed: post.passed, errors: post.errors, warnings: post.warnings };
  };

  const fail = (error: unknown): never => {
    const cause = error instanceof Error ? error.message : String(error);
    const memoryNote = upgraded === null
      ? "memory was not changed"
      : `memory was not changed by the update itself (before it, ${upgraded})`;
    const errors = withEngineLock(paths, () => {
      const restoreErrors = restoreUpdateRecords(target, backupDir, records);
      if (newGuide) {
        try {
          Deno.removeSync(join(target, DIVERTED_GUIDE));
        } catch (error) {
          if (!(error instanceof Deno.errors.NotFound)) restoreErrors.push(String(error));
        }
      }
      if (before) restoreErrors.push(...manifestDifferences(before, protectedManifest(target)));
      try {
        atomicReplace(
          join(backupDir, "install-manifest.json"),
          canonicalJson({
            ...manifest,
            status: restoreErrors.length ? "rollback-incomplete" : "rolled-back",
            rolled_back_at: utcTimestamp(),
            rollback_errors: restoreErrors,
            preservation: restoreErrors.length ? "failed" : "passed",
            protected_write_attempts: 0,
          }),
        );
      } catch { /* the error below still names the backup folder */ }
      return restoreErrors;
    });
    if (errors.length > 0) {
      throw new BimriError(
        "io",
        `code-only update failed and rollback was incomplete. Backups: ${backupRel}. Cause: ${cause}. Rollback: ${
          errors.join("; ")
        }`,
      );
    }
    throw new BimriError(
      "refused",
      `code-only update failed; the program files were rolled back and ${memoryNote}. Backups: ${backupRel}. Cause: ${cause}`,
    );
  };

  try {
    withEngineLock(paths, prepareAndWrite);
  } catch (error) {
    if (Object.keys(manifest).length === 0) {
      // The update wrote nothing yet; an upgrade before it still did.
      throw upgraded === null ? error : stoppedAfterUpgrade(upgraded, error);
    }
    fail(error);
  }
  let smoke: HookSmoke;
  try {
    forcedSelfCheckFailure();
    // Outside the lock: the hook is a separate bimri process that takes it.
    smoke = await hookNoopCheck(target, hooks);
    const differences = manifestDifferences(before!, protectedManifest(target));
    if (differences.length > 0) {
      throw new Error(`the hook check changed memory: ${differences.join("; ")}`);
    }
  } catch (error) {
    return fail(error);
  }
  const after = protectedManifest(target);
  manifest = {
    ...manifest,
    status: audit.passed ? "installed" : "installed-recovery-required",
    completed_at: utcTimestamp(),
    after_tree_digest: after.tree_digest,
    after_bimri_md_sha256: after.bimri_md_sha256,
    after_state_sha256: after.state_sha256,
    accepted_head_revision_after: after.accepted_head_revision,
    accepted_head_hash_after: after.accepted_head_hash,
    read_only_audit: audit.passed ? "passed" : "recovery-required",
    read_only_audit_errors: audit.errors,
    preservation: "passed",
    // The activation changed only state.json; every other record kept its bytes.
    activation_preservation: "immutable-evidence-unchanged",
    state_activated: activation !== null,
    protected_write_attempts: 0,
  };
  atomicReplace(join(backupDir, "install-manifest.json"), canonicalJson(manifest));
  // After success: the memory's .gitattributes block (the owner's previous file kept in the receipt folder).
  writeGitattributes(target, backupDir);
  const revision = after.accepted_head_revision ?? 0;
  memory.push(
    `Existing authority store v${AUTHORITY_FORMAT} verified.`,
    `Accepted head unchanged: V${String(revision).padStart(6, "0")} ${after.accepted_head_hash}.`,
    `Memory preservation: PASSED (bimri.md and every record byte-identical; exact prior state backed up at ${backupRel}/${stateBackup}).`,
    adopted && !quiescent
      ? "Store adopted without --quiescent: share pull built it in this clone and it was never installed, so no older engine can be running here."
      : "External quiescence was attested by the caller (--quiescent); the lock cannot stop a process that already loaded an older engine.",
    ...ownerFiles,
  );
  return {
    route: "code-only-update",
    target,
    ...versionFields(),
    argv_prefix: [...prefix.argv],
    runtime: prefix.kind,
    detected_format: format,
    memory,
    adapters: [...ADAPTER_FILES],
    portable_files: portable,
    hook_smoke: smoke,
    audit,
    backup: backupRel,
    receipt: `${backupRel}/install-manifest.json`,
    lines: [],
  };
}

// ---------------------------------------------------------------------------

/** The lines a person sees after a successful install. */
export function renderInstallLines(report: InstallReport): string[] {
  const lines = [
    // The reference's headline first (scripts look for "BIMRI <engine> installed."), then bimri's own release.
    `BIMRI ${report.compatible_engine} installed.`,
    `bimri ${report.bimri_release} installed into ${report.target} (compatible engine ${report.compatible_engine}, memory format ${report.memory_format}, hot grammar ${report.hot_grammar}).`,
    VERSIONS_EXPLAINED,
    `Verified runtime (${report.runtime}): ${printablePrefix(report.argv_prefix)}`,
    ...report.memory,
    `Adapters: marked BIMRI block merged into ${
      report.adapters.join(" and ")
    }; portable files written: ${report.portable_files.join(", ")}.`,
    "Host-only runtime binding written to .bimri/runtime.local.json; Claude Code hooks rendered to .bimri/hooks.claude.local.json (.claude settings unchanged).",
    "Never commit either .local.json file or copy its absolute paths into shared instructions; rerun install after moving this folder to another machine.",
    report.hook_smoke.status === "passed"
      ? `Hook smoke test: PASSED (${report.hook_smoke.detail}).`
      : `Hook smoke test: rendered hook verified (${report.hook_smoke.detail}).`,
  ];
  const codeOnly = report.route === "code-only-update";
  if (report.audit.passed) lines.push(codeOnly ? "Read-only doctor passed." : "Doctor passed.");
  else {
    lines.push(codeOnly ? "READ-ONLY AUDIT: RECOVERY REQUIRED" : "DOCTOR: RECOVERY REQUIRED");
    for (const error of report.audit.errors) lines.push(`  - ${error}`);
    // The install is complete and exits 0; the damage it found is the
    // owner's to repair, with tools this install has just put in place.
    lines.push(
      "AUTHORITY RECOVERY NEEDED — shared-memory writes stay paused until the records above are repaired; the install itself is complete.",
      "The repair tools remain installed: run `doctor` for the full audit; with the owner's explicit approval, use `quarantine-authority` to preserve a damaged record and `restore-authority` to put back a validated replacement.",
    );
  }
  lines.push(
    codeOnly ? `Receipt: ${report.receipt}` : `Backups of touched files: ${report.backup}`,
  );
  for (const warning of report.audit.warnings) {
    const line = `Repair warning: ${warning}`;
    if (!lines.includes(line)) lines.push(line); // the migration receipt may already list it
  }
  return lines;
}

/**
 * A store only bimri can have written (issue 45): built by `share pull` in
 * this folder (its replica file names this path), never installed here (no
 * runtime binding), with no reference engine beside it (no bimri-engine.py,
 * or bimri's own launcher byte for byte). No older engine can be running on
 * it, so install adopts it without the `--quiescent` attestation.
 */
function builtByShareHere(target: string): boolean {
  const dir = join(target, ".bimri");
  if (lstatOrNull(join(dir, "runtime.local.json")) !== null) return false;
  const replica = readBytesOrNull(join(dir, "replica.local.json"));
  if (replica === null) return false;
  let storePath: unknown;
  try {
    storePath = JSON.parse(new TextDecoder().decode(replica)).store_path;
  } catch {
    return false;
  }
  if (storePath !== target) return false;
  const launcher = readBytesOrNull(join(target, "bimri-engine.py"));
  return launcher === null || sameBytes(launcher, utf8(template("bimri-engine.py")));
}

/** Installs bimri into `options.target` and returns the report (throws BimriError on refusal). */
export async function installProject(options: InstallOptions): Promise<InstallReport> {
  const target = resolve(options.target);
  if (dirname(target) === target) {
    throw new BimriError("refused", "refusing to install BIMRI into a filesystem root.");
  }
  // An existing store is audited before and after the update.
  await prepareAudit(new StorePaths(target));
  // Routing reads only; the quiescence attestation is checked before anything else happens.
  const detection = detectStoreFormat(target);
  // A store `share pull` built here needs no attestation.
  const adopted = detection.format === AUTHORITY_FORMAT && builtByShareHere(target);
  if (V5_FORMATS.includes(detection.format) && !options.quiescent && !adopted) {
    throw new BimriError(
      "refused",
      `updating an existing v${detection.format} store requires an externally verified quiescent handoff. Stop every process running an older engine in this folder, then retry install with --quiescent. The lock cannot enforce that old-process shutdown. Nothing was changed.`,
    );
  }
  // A live v4 writer takes no v5 lock: refuse before any backup is taken.
  if (detection.format === "v4") ensureV4Quiescent(target);
  // Structured state beside a distinct legacy memory file: the owner chooses
  // first, and a refusal before the snapshot leaves no backup folder behind.
  // (A 5.1.0 store may still hold the root files its own cut-short legacy
  // migration claims; the update finishes retiring those first.)
  if (["v4", "5.0", "5.0.1", "5.0.2"].includes(detection.format)) {
    rejectUnclaimedLegacyRoots(target);
  }
  const prefix = options.prefix ?? currentRuntimePrefix();
  let cwd = target;
  while (lstatOrNull(cwd) === null && dirname(cwd) !== cwd) cwd = dirname(cwd);
  await verifyRuntimePrefix(prefix, cwd);
  const report = V5_FORMATS.includes(detection.format) &&
      !UPGRADED_V5_FORMATS.includes(detection.format)
    ? await codeOnlyUpdate(target, detection.format, prefix, options.quiescent, adopted)
    : await freshInstall(target, detection.format, prefix, options.quiescent);
  report.lines = renderInstallLines(report);
  return report;
}
