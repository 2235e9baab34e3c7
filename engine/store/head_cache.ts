/**
 * The derived marks of what bimri itself wrote, which let a short command skip
 * re-proving it: the head check, noted and recorded here (head_load.ts reads
 * it), and the state mark (see the section on
 * `.bimri/audit-integrity-state.json` below).
 *
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
import type { HeadFacts } from "../model/hot.ts";
import type { ColdRecord } from "../model/state.ts";
import { fingerprint, lstatOrNull, replaceDerived } from "./files.ts";
import type { StorePaths } from "./paths.ts";

const HEAD_CACHE_NAME = "audit-integrity-head.json";
/** The schema of the head check record this engine writes and reads. */
export const HEAD_CACHE_SCHEMA = 4;

/** The head check record (`.bimri/audit-integrity-head.json`). */
export type HeadCheck = {
  schema: number;
  revision: number;
  hash: string;
  print: string;
  /** When the hash was proven (ms); see isRacy. */
  proven_ms: number;
  facts: HeadFacts;
};

/** Where the head check record is. */
export function cachePath(paths: StorePaths): string {
  return paths.folder(HEAD_CACHE_NAME);
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

// The derived mark `.bimri/audit-integrity-state.json`: the lstat
// fingerprint (inode, size, mtime, ctime) of the state.json bimri itself
// last wrote, and what that proof lets a command skip.
//
// Once hundreds of subjects are cold, state.json is hundreds of KB, and
// validating every entry on load and serializing every entry on save is most
// of a short command's work. A state.json whose fingerprint is still the
// marked one holds exactly the canonical bytes bimri produced from a state it
// had validated, so the entries need no second validation, and the
// `cold_current` text can be written back as it is when the command left
// every cold record untouched. Any other writer (an editor, the reference
// engine, a restore) changes the fingerprint and brings both full steps back;
// a missing, unreadable or foreign mark does the same. The mark is written
// only after state.json is durable, and without an fsync of its own: losing
// it costs one full validation. Like bimri's other `audit-integrity-*`
// files, it is derived data the reference engine ignores.

const MARK_NAME = "audit-integrity-state.json";
const MARK_SCHEMA = 1;
/** How the canonical top-level member opens; strings escape newlines, so this is unique. */
const COLD_MEMBER = '\n  "cold_current": ';

function markPath(paths: StorePaths): string {
  return paths.folder(MARK_NAME);
}

/** True when `info` (an fstat of the state.json being read) is the file bimri last wrote. */
export function isOwnStateWrite(paths: StorePaths, info: Deno.FileInfo): boolean {
  let text: string;
  try {
    text = Deno.readTextFileSync(markPath(paths));
  } catch {
    return false;
  }
  try {
    const mark = JSON.parse(text) as { schema?: unknown; print?: unknown };
    return mark?.schema === MARK_SCHEMA && mark.print === fingerprint(info);
  } catch {
    return false;
  }
}

/** Marks the state.json just written (and made durable) as bimri's own. */
export function markOwnStateWrite(paths: StorePaths): void {
  const info = lstatOrNull(paths.state);
  if (!info?.isFile) return;
  try {
    replaceDerived(
      markPath(paths),
      JSON.stringify({ schema: MARK_SCHEMA, print: fingerprint(info) }),
    );
  } catch {
    // Without the mark the next command validates state in full.
  }
}

/** The `cold_current` member of a canonical state.json, as text and bytes, and its records. */
export type ColdText = { text: string; bytes: Uint8Array };

type Remembered = ColdText & { dir: string; keys: string[]; records: ColdRecord[] };

let remembered: Remembered | null = null;

/**
 * Remembers the `cold_current` member of canonical state text `stateText`
 * (bimri's own write; `stateBytes` are its UTF-8) and the records `cold` it
 * holds, for `coldTextFor`. Canonical state is ASCII, so text offsets are
 * byte offsets; anything else is not remembered.
 */
export function rememberColdText(
  paths: StorePaths,
  stateText: string,
  stateBytes: Uint8Array,
  cold: Record<string, ColdRecord>,
): void {
  remembered = null;
  if (stateBytes.length !== stateText.length) return;
  const start = stateText.indexOf(COLD_MEMBER);
  if (start < 0) return;
  const valueStart = start + COLD_MEMBER.length;
  const next = stateText.indexOf('\n  "', valueStart);
  const end = next < 0 ? stateText.lastIndexOf("\n}") : next - 1; // before the member's comma
  if (end <= valueStart) return;
  const keys = Object.keys(cold);
  remembered = {
    dir: paths.dir,
    keys,
    records: keys.map((k) => cold[k]),
    text: stateText.slice(valueStart, end),
    bytes: stateBytes.subarray(valueStart, end),
  };
}

/**
 * The canonical text of `cold` when it holds exactly the remembered records
 * (the same objects under the same keys in the same order), else null.
 */
export function coldTextFor(paths: StorePaths, cold: Record<string, ColdRecord>): ColdText | null {
  const memo = remembered;
  if (memo === null || memo.dir !== paths.dir) return null;
  let i = 0;
  for (const key in cold) {
    if (i >= memo.keys.length || memo.keys[i] !== key || memo.records[i] !== cold[key]) return null;
    i++;
  }
  return i === memo.keys.length ? memo : null;
}
