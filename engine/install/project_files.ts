/** The files install writes into a project: portable package files, adapter blocks, host-local bindings, and the checks of their write targets. */
import { join, relative, sep } from "node:path";
import { TEMPLATES } from "../../templates/mod.ts";
import { BimriError } from "../errors.ts";
import { sameBytes } from "../migrate/common.ts";
import { refuseUnsafeWriteFolder, UPDATE_BACKUPS } from "../migrate/v502.ts";
import { decodeUtf8Strict, utf8 } from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { atomicReplace, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { STORE_FOLDERS } from "../store/paths.ts";
import { renderHooks } from "./hooks_config.ts";
import { mergeMarkedBlock } from "./merge.ts";
import { validateGitattributes } from "./gitattributes.ts";
import { runtimeBinding, type RuntimePrefix } from "./runtime.ts";

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

/** `path` relative to `root` with `/` separators, as messages and receipts print it. */
export function rel(root: string, path: string): string {
  return relative(root, path).split(sep).join("/");
}

/** The text of template `name` as this build holds it (missing: an io error). */
export function template(name: string): string {
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
export const INSTALL_BACKUPS = ".bimri/install-backups";

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
export function validateWriteTargets(target: string): void {
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
export function writePackageAndAdapters(
  target: string,
  backupOf: (name: string) => string,
): string[] {
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
export function writeLocalBindings(target: string, prefix: RuntimePrefix): string {
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
