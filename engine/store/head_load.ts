/**
 * Loading the accepted head: the verified read of the head revision
 * (`loadHead`), the `Head` it yields (`makeHead`), and the reading side of
 * the head check that lets an unchanged head file skip its hash (head_cache.ts
 * notes and records it). store.ts loads this module on demand with the view
 * parsing (`loadHeadViews`), so journal, which never reads the head, loads
 * none of it.
 */
import { BimriError } from "../errors.ts";
import { type HeadFacts, headFacts, type ParsedView, parseViewShared } from "../model/hot.ts";
import type { State } from "../model/state.ts";
import { sha256Hex } from "../model/text.ts";
import { decodeUtf8Strict } from "../model/plain_text.ts";
import { fingerprint, lstatOrNull, readBytesOrNull, refuseSymlink } from "./files.ts";
import { cachePath, HEAD_CACHE_SCHEMA, type HeadCheck, noteHeadVerified } from "./head_cache.ts";
import type { StorePaths } from "./paths.ts";

/** The accepted head: revision number, exact text, hash, parsed view and its facts. */
export type Head = {
  revision: number;
  text: string;
  hash: string;
  /** Parsed on first use: a command that needs only `facts` never parses the head. */
  readonly view: ParsedView;
  /** Entries per tier and the runs Tier 2 lines name (from the head check, else from `view`). */
  readonly facts: HeadFacts;
};

/**
 * A Head over `text`. `view` and `facts`, when already known (a commit's
 * parsed plan, a verified head check), are used as they are; otherwise each
 * is derived on first use.
 */
export function makeHead(
  revision: number,
  text: string,
  hash: string,
  entryMaxChars: number,
  known: { view?: ParsedView; facts?: HeadFacts } = {},
): Head {
  let view = known.view ?? null;
  let facts = known.facts ?? null;
  const parsed = (): ParsedView => view ??= parseViewShared(text, entryMaxChars);
  return {
    revision,
    text,
    hash,
    get view(): ParsedView {
      return parsed();
    },
    get facts(): HeadFacts {
      return facts ??= headFacts(parsed(), entryMaxChars);
    },
  };
}

/**
 * Loads and verifies the accepted head named by `state`. With
 * `recordVerified` (under the lock), a full hash that matched is noted so the
 * command's state write records it for the next command (head_cache.ts).
 */
export function loadHead(
  paths: StorePaths,
  state: State,
  options: { recordVerified?: boolean } = {},
): Head {
  const path = paths.revision(state.head_revision);
  // A proof holds from before the file was looked at: an edit after this moment moves its print.
  const provenMs = Date.now();
  const info = lstatOrNull(path);
  if (info?.isSymlink) {
    refuseSymlink(path, `.bimri/revisions/V${String(state.head_revision).padStart(6, "0")}.md`);
  }
  const bytes = info === null ? null : readBytesOrNull(path);
  if (info === null || bytes === null) {
    throw new BimriError(
      "store-corrupt",
      `the accepted head revision is missing (V${
        String(state.head_revision).padStart(6, "0")
      }.md); run doctor.`,
    );
  }
  // A head file unchanged since a full hash proved it is not hashed again (head_cache.ts).
  const expected = state.head_hash;
  // Set when the record could vouch only after hashing (a proof taken in the
  // head's own ctime second): a writer records the proof again, now later, so
  // the next commands skip the hash instead of repeating it until the head moves.
  let rehashed = false;
  const known = expected === null ? null : verifiedHeadFacts(
    paths,
    state.head_revision,
    expected,
    info,
    state.entry_max_chars,
    () => {
      rehashed = true;
      return sha256Hex(bytes);
    },
  );
  const verified = known !== null;
  const hash = verified && expected !== null ? expected : sha256Hex(bytes);
  if (hash !== state.head_hash) {
    throw new BimriError(
      "store-corrupt",
      "state head hash does not match the accepted head revision; run doctor.",
    );
  }
  const text = decodeUtf8Strict(bytes);
  if (text === null) {
    throw new BimriError(
      "store-corrupt",
      "the accepted head revision is not valid UTF-8; run doctor.",
    );
  }
  const head = makeHead(state.head_revision, text, hash, state.entry_max_chars, {
    facts: known ?? undefined,
  });
  const reprove = rehashed && provesWithoutHash(info, provenMs);
  if ((!verified || reprove) && options.recordVerified) {
    noteHeadVerified(paths, state.head_revision, hash, info, head.facts, provenMs);
  }
  return head;
}

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
