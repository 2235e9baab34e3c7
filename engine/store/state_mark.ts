/**
 * The derived mark `.bimri/audit-integrity-state.json`: the lstat
 * fingerprint (inode, size, mtime, ctime) of the state.json bimri itself
 * last wrote, and what that proof lets a command skip.
 *
 * Once hundreds of subjects are cold, state.json is hundreds of KB, and
 * validating every entry on load and serializing every entry on save is most
 * of a short command's work. A state.json whose fingerprint is still the
 * marked one holds exactly the canonical bytes bimri produced from a state it
 * had validated, so the entries need no second validation, and the
 * `cold_current` text can be written back as it is when the command left
 * every cold record untouched. Any other writer (an editor, the reference
 * engine, a restore) changes the fingerprint and brings both full steps back;
 * a missing, unreadable or foreign mark does the same. The mark is written
 * only after state.json is durable, and without an fsync of its own: losing
 * it costs one full validation. Like bimri's other `audit-integrity-*`
 * files, it is derived data the reference engine ignores.
 */
import { fingerprint } from "./fingerprint.ts";
import type { ColdRecord } from "../model/state.ts";
import { lstatOrNull, replaceDerived } from "./files.ts";
import type { StorePaths } from "./paths.ts";

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
