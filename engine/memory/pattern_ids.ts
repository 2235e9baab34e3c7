/**
 * Pattern-ID allocation (formats section 2) and its derived cache
 * `.bimri/audit-integrity-patterns.json`.
 *
 * A new Tier 3 subject gets `1 + max(pattern_count, the P numbers of the base
 * and head Tier 3 lines, the pattern_id number of every proposal file)`. The
 * last term covers every file of `proposals/` whose name the reference's
 * `R*-Q*.json` glob matches, whatever its run or decision, so an ID held by a
 * proposal of a closed run is never handed out again. Like the reference, a
 * proposal file that cannot be read as a JSON object (or is a link or a
 * folder) stops the allocation: skipping it could reuse the number it holds.
 *
 * Reading every proposal file on each Tier 3 propose would make the everyday
 * path grow with history, so the highest proposal pattern number is kept in a
 * derived record together with the lstat fingerprint (inode, size, mtime,
 * ctime) of the proposals folder it describes. An allocation whose folder
 * still has that fingerprint uses the recorded number; any other folder
 * (a file added, removed or renamed by another engine, quarantine, restore or
 * a hand edit, a copied store) is read in full once. After each proposal file
 * bimri creates (any tier, since every creation changes the folder), the
 * record moves to the new fingerprint with max(recorded, new pattern) — but
 * only when the folder had the recorded (or just scanned) fingerprint right
 * before the write, so a change nobody explained is never absorbed. The record
 * is written only after a proposal file was created (a refused or idempotent
 * propose leaves it alone), under the engine lock, without fsync. It is
 * derived data: a missing, unreadable, foreign or stale record gives the same
 * IDs as a full read. Like bimri's other `audit-integrity-*` files, the
 * reference engine ignores it.
 *
 * Trade-off (as for the authority summary, authority.ts): an in-place edit of
 * an existing proposal file's pattern_id changes no folder entry and is not
 * seen until the folder changes otherwise; proposal files are immutable, and
 * the full audits (doctor) read them all.
 */
import { PATTERN_ID, patternId } from "../model/ids.ts";
import { folderPrint, listNames, replaceDerived } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { readRecord } from "../store/records.ts";

const CACHE_NAME = "audit-integrity-patterns.json";
const CACHE_SCHEMA = 1;

/** File names the reference's `proposals/R*-Q*.json` glob reads (fnmatch, case-sensitive). */
const PROPOSAL_GLOB = /^R.*-Q.*\.json$/s;

/** True when the reference's pattern-ID scan reads a proposals/ entry named `name`. */
export function scannedProposalName(name: string): boolean {
  return PROPOSAL_GLOB.test(name);
}

/** The number of a `P<digits>` pattern ID, or 0 for anything else (absent, null, malformed). */
export function patternNumber(value: unknown): number {
  return typeof value === "string" && PATTERN_ID.test(value)
    ? Number.parseInt(value.slice(1), 10)
    : 0;
}

/** The next pattern ID above `patternCount`, the given entry IDs' numbers and `proposalsHighest`. */
export function nextPatternIdFrom(
  patternCount: number,
  tier3EntryIds: Iterable<string>,
  proposalsHighest: number,
): string {
  let highest = Math.max(patternCount, proposalsHighest, 0);
  for (const id of tier3EntryIds) highest = Math.max(highest, patternNumber(id));
  return patternId(highest + 1);
}

/**
 * The highest proposal pattern number a cache record vouches for when the
 * proposals folder has fingerprint `print`; null when the record is missing,
 * malformed, of another schema or describes another folder state.
 */
export function cachedHighest(text: string | null, print: string | null): number | null {
  if (text === null || print === null) return null;
  try {
    const doc = JSON.parse(text) as { schema?: unknown; print?: unknown; highest?: unknown };
    return doc !== null && typeof doc === "object" && doc.schema === CACHE_SCHEMA &&
        doc.print === print && Number.isSafeInteger(doc.highest) && (doc.highest as number) >= 0
      ? doc.highest as number
      : null;
  } catch {
    return null;
  }
}

/** The highest proposal pattern number, valid for the proposals folder with fingerprint `print`. */
export type ProposalPatterns = { print: string | null; highest: number };

function cachePath(paths: StorePaths): string {
  return paths.folder(CACHE_NAME);
}

function readCacheText(paths: StorePaths): string | null {
  try {
    return Deno.readTextFileSync(cachePath(paths));
  } catch {
    return null;
  }
}

/** Reads every proposal file the reference's scan reads; the highest pattern number among them. */
export function scanProposalPatterns(paths: StorePaths): number {
  const folder = paths.folder("proposals");
  let highest = 0;
  for (const name of listNames(folder)) {
    if (!scannedProposalName(name)) continue;
    // Throws store-corrupt for a link, a non-file or a file that is not a JSON object.
    const record = readRecord(`${folder}/${name}`, `proposal file ${name}`);
    if (record === null) continue;
    highest = Math.max(highest, patternNumber(record.value.pattern_id));
  }
  return highest;
}

/** The highest pattern number held by a proposal file: from the cache when it matches, else a full read. */
export function proposalPatterns(paths: StorePaths): ProposalPatterns {
  const print = folderPrint(paths, "proposals");
  const cached = cachedHighest(readCacheText(paths), print);
  if (cached !== null) return { print, highest: cached };
  return { print, highest: scanProposalPatterns(paths) };
}

/**
 * Call right before creating a proposal file: what the folder is known to
 * hold now (`known`, from this command's allocation, or the cache), or null
 * when nothing vouches for the folder as it is (the record is then left
 * alone and stays stale).
 */
export function beforeProposalWrite(
  paths: StorePaths,
  known: ProposalPatterns | null,
): ProposalPatterns | null {
  const print = folderPrint(paths, "proposals");
  if (print === null) return null;
  if (known !== null && known.print === print) return known;
  const cached = cachedHighest(readCacheText(paths), print);
  return cached === null ? null : { print, highest: cached };
}

/**
 * Call right after the proposal file holding `pattern` (null below Tier 3)
 * was created: moves the record to the folder's new fingerprint.
 */
export function afterProposalWrite(
  paths: StorePaths,
  before: ProposalPatterns | null,
  pattern: string | null,
): void {
  if (before === null) return;
  const print = folderPrint(paths, "proposals");
  if (print === null) return;
  const highest = Math.max(before.highest, patternNumber(pattern));
  try {
    replaceDerived(
      cachePath(paths),
      JSON.stringify({ schema: CACHE_SCHEMA, print, highest }) + "\n",
    );
  } catch {
    // Derived: a record that could not be written is stale (the folder changed) and is re-read next time.
  }
}
