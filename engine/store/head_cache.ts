/**
 * The derived head check `.bimri/audit-integrity-head.json`: which head
 * revision file was last proven, by a full SHA-256, to hold `state.head_hash`,
 * together with that file's lstat fingerprint (inode, size, mtime, ctime).
 *
 * Hashing the 48 KB head is a large share of a short command's work, so a
 * command whose head file still has the recorded fingerprint skips the hash.
 * The record also carries the head's facts (entries per tier, the runs Tier 2
 * lines name, its first validation errors under the state's entry cap),
 * computed from the same bytes, so `start` need not parse it.
 * Any change to the file (an edit, a truncation, a copy, a swapped-in file)
 * changes the fingerprint and brings the full hash back; a missing, unreadable
 * or foreign record does the same. The record is written only together with
 * state.json (a command that writes nothing, or is refused, leaves it alone),
 * under the engine lock, after a full hash of that same head matched. It is
 * derived data: deleting it changes no answer. Like bimri's other
 * `audit-integrity-*` files, the reference engine ignores it.
 */
import { fingerprint } from "./fingerprint.ts";
import type { HeadFacts } from "../model/hot.ts";
import { replaceDerived } from "./files.ts";
import type { StorePaths } from "./paths.ts";

const HEAD_CACHE_NAME = "audit-integrity-head.json";
const HEAD_CACHE_SCHEMA = 4;

type HeadCheck = {
  schema: number;
  revision: number;
  hash: string;
  print: string;
  /** When the hash was proven (ms); see isRacy. */
  proven_ms: number;
  facts: HeadFacts;
};

/**
 * True when the file may have changed after it was proven without changing
 * its fingerprint: Deno reports ctime in whole seconds, so an edit in the
 * same second as the proof, with its mtime put back, keeps every field of
 * the print. Such a record vouches for the bytes only after they hash to
 * the proven value again (as racy-git entries are checked by content).
 */
function isRacy(info: Deno.FileInfo, provenMs: number): boolean {
  const ctimeMs = (info as { ctime?: Date | null }).ctime?.getTime() ?? provenMs;
  return Math.floor(ctimeMs / 1000) * 1000 + 1000 > provenMs;
}

/** True when a proof of `info` taken at `provenMs` would vouch without a hash (see isRacy). */
export function provesWithoutHash(info: Deno.FileInfo, provenMs: number): boolean {
  return !isRacy(info, provenMs);
}

function cachePath(paths: StorePaths): string {
  return paths.folder(HEAD_CACHE_NAME);
}

function readHeadCheck(paths: StorePaths): HeadCheck | null {
  try {
    const doc = JSON.parse(Deno.readTextFileSync(cachePath(paths))) as HeadCheck;
    return doc?.schema === HEAD_CACHE_SCHEMA && isHeadFacts(doc.facts) ? doc : null;
  } catch {
    return null;
  }
}

/**
 * The recorded facts when the head file `info` is the one last proven to hash
 * to `hash` as revision `revision`; null when it must be hashed again.
 */
export function verifiedHeadFacts(
  paths: StorePaths,
  revision: number,
  hash: string,
  info: Deno.FileInfo,
  entryMaxChars: number,
  contentHash: () => string,
): HeadFacts | null {
  const check = readHeadCheck(paths);
  // The recorded errors hold only under the entry cap they were checked against.
  const matches = check !== null && check.revision === revision && check.hash === hash &&
    check.print === fingerprint(info) && check.facts.entryMaxChars === entryMaxChars &&
    typeof check.proven_ms === "number";
  if (!matches) return null;
  if (isRacy(info, check.proven_ms) && contentHash() !== hash) return null;
  return check.facts;
}

/** A full hash that matched, waiting for the command's state write to be recorded. */
let pending: { dir: string; check: HeadCheck } | null = null;

/**
 * Notes that the head file `info` was just proven to hash to `hash` and to
 * hold `facts` (recorded by the next state write). `provenMs` is when the
 * proof began (before the file was looked at); it defaults to now.
 */
export function noteHeadVerified(
  paths: StorePaths,
  revision: number,
  hash: string,
  info: Deno.FileInfo,
  facts: HeadFacts,
  provenMs: number = Date.now(),
): void {
  const check: HeadCheck = {
    schema: HEAD_CACHE_SCHEMA,
    revision,
    hash,
    print: fingerprint(info),
    proven_ms: provenMs,
    facts,
  };
  pending = { dir: paths.dir, check };
}

/** Writes the noted head check when `state` still names that head (called by saveState). */
export function recordNotedHead(
  paths: StorePaths,
  state: { head_revision: number; head_hash: string | null },
): void {
  const noted = pending;
  pending = null;
  if (
    noted === null || noted.dir !== paths.dir || noted.check.revision !== state.head_revision ||
    noted.check.hash !== state.head_hash
  ) {
    return;
  }
  // Derived: a crash that loses it only brings back one full hash.
  replaceDerived(cachePath(paths), JSON.stringify(noted.check) + "\n");
}

/** True when `value` has the shape of HeadFacts (a derived record read back from disk). */
export function isHeadFacts(value: unknown): value is HeadFacts {
  if (typeof value !== "object" || value === null) return false;
  const { tiers, tier2Runs, errors, entryMaxChars } = value as Record<string, unknown>;
  return Array.isArray(tiers) && tiers.length === 3 &&
    tiers.every((n) => Number.isSafeInteger(n) && (n as number) >= 0) &&
    Array.isArray(tier2Runs) && tier2Runs.every((r) => typeof r === "string") &&
    Array.isArray(errors) && errors.every((e) => typeof e === "string") &&
    Number.isSafeInteger(entryMaxChars);
}
