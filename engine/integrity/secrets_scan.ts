/**
 * Finds credential-looking strings already in a store: the view, every file
 * under `.bimri/` (logs, proposals, decisions, revisions, archive, conflicts,
 * resolutions, backups, recovery, share state) and the shared records under
 * `.bimri-share/`. A derived cache (`.bimri/audit-integrity-secrets.json`,
 * ignored by the reference engine like every `audit-integrity-*` file) keeps
 * each file's findings under its lstat fingerprint, so a file that did not
 * change is not read again; deleting the cache changes no answer.
 */
import { join } from "node:path";
import { type CredentialKind, findCredentials, type SecretPolicy } from "../model/credentials.ts";
import { decodeUtf8Strict } from "../model/text.ts";
import { lstatOrNull, readBytesOrNull, replaceDerived } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { fingerprint } from "./summary.ts";

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

type CachedFile = { print: string; found: Omit<StoredSecret, "file">[] };
type Cache = { schema: number; files: Record<string, CachedFile> };

const CACHE_NAME = "audit-integrity-secrets.json";
// Bumped whenever the rules change, so old findings are never trusted.
const CACHE_SCHEMA = 1;
const MAX_FILE_BYTES = 16 << 20;

/** Path of the derived cache. */
export function secretsCachePath(paths: StorePaths): string {
  return paths.folder(CACHE_NAME);
}

function readCache(paths: StorePaths): Cache {
  const bytes = readBytesOrNull(secretsCachePath(paths));
  if (bytes === null) return { schema: CACHE_SCHEMA, files: {} };
  try {
    const cache = JSON.parse(decodeUtf8Strict(bytes) ?? "") as Cache;
    if (cache.schema === CACHE_SCHEMA && typeof cache.files === "object" && cache.files) {
      return cache;
    }
  } catch {
    // A damaged cache is rebuilt.
  }
  return { schema: CACHE_SCHEMA, files: {} };
}

/** Regular files to scan under `dir` (links are never followed), as [absolute, relative]. */
function filesUnder(dir: string, rel: string, out: Array<[string, string]>): void {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return;
  }
  for (const entry of entries) {
    if (entry.isSymlink) continue;
    const name = entry.name;
    if (rel === ".bimri" && (name.startsWith("audit-integrity-") || name === "engine.lock")) {
      continue; // derived caches hold fingerprints and digests, not text
    }
    if (name.startsWith(".bimri-tmp-")) continue;
    const path = join(dir, name);
    if (entry.isDirectory) filesUnder(path, `${rel}/${name}`, out);
    else if (entry.isFile) out.push([path, `${rel}/${name}`]);
  }
}

function scanText(text: string): Omit<StoredSecret, "file">[] {
  const found: Omit<StoredSecret, "file">[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    for (const hit of findCredentials(lines[i])) {
      found.push({ line: i + 1, kind: hit.kind, masked: hit.masked, fingerprint: hit.fingerprint });
    }
  }
  return found;
}

/**
 * Every credential-looking string in the store at `paths` that `policy` does
 * not allow, in file order. `write` false (doctor --read-only) reads the
 * cache but never writes it.
 */
export function scanStoreForSecrets(
  paths: StorePaths,
  policy: SecretPolicy,
  write: boolean,
): StoredSecret[] {
  const files: Array<[string, string]> = [[paths.view, "bimri.md"]];
  filesUnder(paths.dir, ".bimri", files);
  filesUnder(join(paths.root, ".bimri-share"), ".bimri-share", files);
  const cache = readCache(paths);
  const next: Cache = { schema: CACHE_SCHEMA, files: {} };
  let changed = false;
  const out: StoredSecret[] = [];
  for (const [path, rel] of files) {
    const info = lstatOrNull(path);
    if (info === null || !info.isFile || info.size > MAX_FILE_BYTES) continue;
    const print = fingerprint(info);
    let entry = cache.files[rel];
    if (entry === undefined || entry.print !== print) {
      const bytes = readBytesOrNull(path);
      if (bytes === null) continue;
      entry = { print, found: scanText(new TextDecoder().decode(bytes)) };
      changed = true;
    }
    next.files[rel] = entry;
    for (const hit of entry.found) {
      if (policy.allowed.has(hit.fingerprint) || policy.disabled.has(hit.kind)) continue;
      out.push({ file: rel, ...hit });
    }
  }
  if (Object.keys(cache.files).length !== Object.keys(next.files).length) changed = true;
  if (write && changed && lstatOrNull(paths.dir)?.isDirectory) {
    try {
      replaceDerived(secretsCachePath(paths), JSON.stringify(next));
    } catch {
      // A cache that cannot be written only costs time on the next run.
    }
  }
  return out;
}

/** The doctor line for one finding. */
export function storedSecretLine(secret: StoredSecret): string {
  return `${secret.file}:${secret.line}: ${secret.kind} ${secret.masked} fingerprint ${secret.fingerprint}`;
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
