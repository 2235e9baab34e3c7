/**
 * Finds credential-looking strings already in a store: the view, every file
 * under `.bimri/` (logs, proposals, decisions, revisions, archive, conflicts,
 * resolutions, backups, recovery, share state) and the shared records under
 * `.bimri-share/`: there anyone who can push writes, so only the files bimri
 * could import are read (ShareFiles), each without following a link and never
 * past its cap; any other name is passed over unread. A derived cache (`.bimri/audit-integrity-secrets.json`,
 * ignored by the reference engine like every `audit-integrity-*` file) keeps
 * each file's findings under its lstat fingerprint, so a file that did not
 * change is not read again; deleting the cache changes no answer.
 */
import { basename, dirname, join } from "node:path";
import { type CredentialKind, findCredentials, type SecretPolicy } from "../model/credentials.ts";
import { decodeUtf8Strict } from "../model/text.ts";
import { visible } from "../model/visible.ts";
import {
  fingerprint,
  isRacyPrint,
  lstatOrNull,
  readBytesOrNull,
  replaceDerived,
} from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";

/**
 * What the scan may read under `.bimri-share/`, given by the share layer
 * (integrity ranks below it, docs/ARCHITECTURE.md), so the names and caps
 * are the very ones a pull imports by.
 */
export type ShareFiles = {
  /** True for the name of a replica folder. */
  isReplica(name: string): boolean;
  /** The cap in bytes of the file `name` in a replica folder, or null: bimri never imports it. */
  cap(name: string): number | null;
  /**
   * Reads `name` in `folder` without following a link or waiting on a FIFO,
   * at most `max` bytes (null: gone; a problem: not read).
   */
  read(
    folder: string,
    name: string,
    max: number,
  ): { bytes: Uint8Array } | { problem: string } | null;
};

/** One credential-looking string in a file of the store. */
export type StoredSecret = {
  /** Path relative to the project root, `/`-separated. */
  file: string;
  /** 1-based line number. */
  line: number;
  kind: CredentialKind;
  masked: string;
  fingerprint: string;
};

type Found = Omit<StoredSecret, "file">;
/** A file's findings under its print; `final` for a closed run log (append-only until closed). */
type CachedFile = { print: string; found: Found[]; final?: boolean };
/**
 * A folder's print, its files and its subfolders, as last scanned. A file
 * without findings is stored as its print alone (`<print>|final` for a final
 * one), which keeps the cache small and quick to parse at 10,000 runs.
 */
type CachedFolder = { print: string; files: Record<string, CachedFile | string>; dirs: string[] };
type Cache = { schema: number; folders: Record<string, CachedFolder> };

const CACHE_NAME = "audit-integrity-secrets.json";
// Bumped whenever the rules or this format change, so old findings are never trusted
// (4: `.bimri-share/` holds only replica folders of record and key files, no deeper folder).
const CACHE_SCHEMA = 4;
const FINAL = "|final";

function unpack(value: CachedFile | string | undefined): CachedFile | undefined {
  if (typeof value !== "string") return value;
  return value.endsWith(FINAL)
    ? { print: value.slice(0, -FINAL.length), found: [], final: true }
    : { print: value, found: [] };
}

function pack(entry: CachedFile): CachedFile | string {
  if (entry.found.length > 0) return entry;
  return entry.final ? entry.print + FINAL : entry.print;
}
const MAX_FILE_BYTES = 16 << 20;

/**
 * Folders whose files are only ever created or replaced by a rename (records,
 * revisions, recovery evidence, backups, shared records): any change of
 * theirs changes the folder's own print, so an unchanged folder's findings
 * are reused without listing or reading it. Logs are appended in place, so
 * each open log is checked by its own print; a closed log is final.
 */
const RENAMED_ONLY =
  /^\.bimri\/(?:proposals|decisions|revisions|conflicts|resolutions|recovery|backups|migrations|audit-manifests)(?:\/|$)|^\.bimri-share\/[a-z2-7]{26}$/;

/** Path of the derived cache. */
export function secretsCachePath(paths: StorePaths): string {
  return paths.folder(CACHE_NAME);
}

function readCache(paths: StorePaths): Cache {
  const bytes = readBytesOrNull(secretsCachePath(paths));
  if (bytes === null) return { schema: CACHE_SCHEMA, folders: {} };
  try {
    const cache = JSON.parse(decodeUtf8Strict(bytes) ?? "") as Cache;
    if (cache.schema === CACHE_SCHEMA && typeof cache.folders === "object" && cache.folders) {
      return cache;
    }
  } catch {
    // A damaged cache is rebuilt.
  }
  return { schema: CACHE_SCHEMA, folders: {} };
}

function scanText(text: string): Found[] {
  const found: Found[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    for (const hit of findCredentials(lines[i])) {
      found.push({ line: i + 1, kind: hit.kind, masked: hit.masked, fingerprint: hit.fingerprint });
    }
  }
  return found;
}

/**
 * Which names of a folder the scan reads, and how: a file's cap (null: not
 * read), a subfolder's scope (null: not entered), and the bounded read.
 */
type Scope = {
  cap(rel: string, name: string): number | null;
  folder(rel: string, name: string): Scope | null;
  read(dir: string, name: string, max: number): Uint8Array | null;
};

/** `.bimri/` and the view: bimri's own files, every name but skipped ones, at any depth. */
const OWN: Scope = {
  cap: (rel, name) => skipped(rel, name) ? null : MAX_FILE_BYTES,
  folder: (rel, name) => skipped(rel, name) ? null : OWN,
  read: (dir, name) => readBytesOrNull(join(dir, name)),
};

/** `.bimri-share/`: replica folders only, and in them what `share` says a pull imports. */
function shareScope(share: ShareFiles): Scope {
  const replica: Scope = {
    cap: (_rel, name) => share.cap(name),
    folder: () => null,
    read: (dir, name, max) => {
      const read = share.read(dir, name, max);
      return read !== null && "bytes" in read ? read.bytes : null;
    },
  };
  return {
    cap: () => null,
    folder: (_rel, name) => share.isReplica(name) ? replica : null,
    read: () => null,
  };
}

/**
 * Scans the file `name` of `dir` under `scope`, reusing `cached` when its
 * print is unchanged; null when it is not scanned (not a regular file, over
 * its cap, or a name the scope never reads).
 */
function scanFile(
  dir: string,
  rel: string,
  name: string,
  scope: Scope,
  cached: CachedFile | undefined,
): CachedFile | null {
  const max = scope.cap(rel, name);
  if (max === null) return null;
  const info = lstatOrNull(join(dir, name));
  if (info === null || !info.isFile || info.size > max) return null;
  const print = fingerprint(info);
  if (cached !== undefined && cached.print === print) return cached;
  const bytes = scope.read(dir, name, max);
  if (bytes === null) return null;
  const text = new TextDecoder().decode(bytes);
  const entry: CachedFile = { print, found: scanText(text) };
  if (/^\[CLOSED:R[0-9]{6}[\s\]]/m.test(text)) entry.final = true;
  return entry;
}

/** Skipped names: derived caches (fingerprints and digests, not text), the lock, temp files. */
function skipped(rel: string, name: string): boolean {
  return name.startsWith(".bimri-tmp-") ||
    (rel === ".bimri" && (name.startsWith("audit-integrity-") || name === "engine.lock"));
}

/** Scans the folder `dir` (relative `rel`) and below, as `scope` allows, into `next`, reusing `cache`. */
function scanFolder(dir: string, rel: string, scope: Scope, cache: Cache, next: Cache): void {
  const info = lstatOrNull(dir);
  if (info === null || !info.isDirectory || info.isSymlink) return;
  const print = fingerprint(info);
  const cached = cache.folders[rel];
  const unchanged = cached !== undefined && cached.print === print && !isRacyPrint(print);
  if (unchanged && RENAMED_ONLY.test(rel)) {
    next.folders[rel] = cached;
    for (const sub of cached.dirs) {
      const inner = scope.folder(rel, sub);
      if (inner !== null) scanFolder(join(dir, sub), `${rel}/${sub}`, inner, cache, next);
    }
    return;
  }
  const folder: CachedFolder = { print, files: {}, dirs: [] };
  const names = unchanged
    ? [
      ...Object.keys(cached.files).map((name) => ({ name, dir: false })),
      ...cached.dirs.map((name) => ({ name, dir: true })),
    ]
    : listEntries(dir);
  for (const { name, dir: isDir } of names) {
    if (isDir) {
      const inner = scope.folder(rel, name);
      if (inner === null) continue;
      folder.dirs.push(name);
      scanFolder(join(dir, name), `${rel}/${name}`, inner, cache, next);
      continue;
    }
    if (scope.cap(rel, name) === null) continue;
    const packed = cached?.files[name];
    const known = unpack(packed);
    // A closed log in an unchanged folder is final: no lstat, no read.
    if (unchanged && known?.final) {
      folder.files[name] = packed!;
      continue;
    }
    const entry = scanFile(dir, rel, name, scope, known);
    if (entry !== null) folder.files[name] = entry === known ? packed! : pack(entry);
  }
  next.folders[rel] = folder;
}

/** A folder's entries (links never followed) as names and whether each is a folder. */
function listEntries(dir: string): Array<{ name: string; dir: boolean }> {
  try {
    return [...Deno.readDirSync(dir)]
      .filter((entry) => !entry.isSymlink && (entry.isFile || entry.isDirectory))
      .map((entry) => ({ name: entry.name, dir: entry.isDirectory }))
      .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  } catch {
    return [];
  }
}

/**
 * Every credential-looking string in the store at `paths` that `policy` does
 * not allow, in file order; under `.bimri-share/` only the files `share`
 * names are read. `write` false (doctor --read-only) reads the cache but
 * never writes it.
 */
export function scanStoreForSecrets(
  paths: StorePaths,
  policy: SecretPolicy,
  write: boolean,
  share: ShareFiles,
): StoredSecret[] {
  const cache = readCache(paths);
  const next: Cache = { schema: CACHE_SCHEMA, folders: {} };
  const viewName = basename(paths.view);
  const view = scanFile(
    dirname(paths.view),
    "",
    viewName,
    OWN,
    unpack(cache.folders[""]?.files["bimri.md"]),
  );
  next.folders[""] = { print: "", files: view ? { "bimri.md": pack(view) } : {}, dirs: [] };
  scanFolder(paths.dir, ".bimri", OWN, cache, next);
  scanFolder(join(paths.root, ".bimri-share"), ".bimri-share", shareScope(share), cache, next);
  const out: StoredSecret[] = [];
  for (const [rel, folder] of Object.entries(next.folders)) {
    for (const [name, packed] of Object.entries(folder.files)) {
      if (typeof packed === "string") continue;
      for (const hit of packed.found) {
        if (policy.allowed.has(hit.fingerprint) || policy.disabled.has(hit.kind)) continue;
        out.push({ file: rel === "" ? name : `${rel}/${name}`, ...hit });
      }
    }
  }
  if (write && lstatOrNull(paths.dir)?.isDirectory && changed(cache, next)) {
    try {
      replaceDerived(secretsCachePath(paths), JSON.stringify(next));
    } catch {
      // A cache that cannot be written only costs time on the next run.
    }
  }
  return out;
}

/** True when the next cache differs from the one read (reused entries are the same objects). */
function changed(cache: Cache, next: Cache): boolean {
  const before = Object.keys(cache.folders);
  if (before.length !== Object.keys(next.folders).length) return true;
  for (const [rel, folder] of Object.entries(next.folders)) {
    const old = cache.folders[rel];
    if (old === folder) continue;
    if (old === undefined || old.print !== folder.print) return true;
    const names = Object.keys(folder.files);
    if (names.length !== Object.keys(old.files).length) return true;
    if (names.some((name) => old.files[name] !== folder.files[name])) return true;
  }
  return false;
}

/**
 * The doctor line for one finding. The file name and the masked string come
 * from files anyone who can push may name and write, so hazardous characters
 * (a line feed that would start a forged line) are shown as escapes.
 */
export function storedSecretLine(secret: StoredSecret): string {
  return `${visible(secret.file)}:${secret.line}: ${secret.kind} ${
    visible(secret.masked)
  } fingerprint ${secret.fingerprint}`;
}

/** What the owner should do about the findings (one line, after them). */
export function storedSecretsAdvice(secrets: readonly StoredSecret[]): string {
  const distinct = new Set(secrets.map((s) => s.fingerprint)).size;
  return `${secrets.length} credential-looking string${secrets.length === 1 ? "" : "s"} ` +
    `(${distinct} distinct) in memory: memory is kept forever and shared, so the owner ` +
    "should rotate each credential and run `bimri secrets redact <fingerprint> " +
    "--human-approved`; a string that is not a secret (a test fixture's fake key) can be " +
    "allowed with `bimri secrets allow <fingerprint> --human-approved`.";
}
