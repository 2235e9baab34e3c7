/**
 * What a store command needs of the accepted head, or of the bimri.md a new
 * store adopts: the verified read of the head revision (`loadHead`), the
 * `Head` it yields (`makeHead`), the reading side of the head check that lets
 * an unchanged head file skip its hash (head_cache.ts notes and records it),
 * and the checks before a store's genesis. store.ts loads this module on
 * demand with the view parsing (`loadHeadViews`), so journal, which never
 * reads the head of an existing store, loads none of it.
 */
import { BimriError } from "../errors.ts";
import {
  type HeadFacts,
  headFacts,
  type ParsedView,
  parseView,
  parseViewShared,
} from "../model/hot.ts";
import type { State } from "../model/state.ts";
import { sha256Hex } from "../model/text.ts";
import { decodeUtf8Strict } from "../model/plain_text.ts";
import {
  fingerprint,
  listNames,
  lstatOrNull,
  readBytesOrNull,
  readTextOrNull,
  refuseSymlink,
} from "./files.ts";
import { isUnclaimedLegacyRootName } from "./legacy_root.ts";
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

/**
 * Before a store is created in a folder without state.json: refuses when the
 * folder holds older BIMRI memory, so agents never start from an empty store
 * beside it (the reference imports it on first use; bimri's `migrate` does).
 * Checked before anything is written: the folder is left exactly as it was.
 */
export function refuseOlderMemory(root: string, paths: StorePaths): void {
  let names: string[] = [];
  try {
    names = [...Deno.readDirSync(root)].map((e) => e.name).sort();
  } catch {
    return; // A missing project folder is created by the layout step.
  }
  const legacy = names.find(isUnclaimedLegacyRootName);
  if (legacy !== undefined) {
    throw new BimriError(
      "store-unsafe",
      `this folder holds older BIMRI memory (${legacy}) and no .bimri/state.json. Run \`bimri migrate\` to import it first; nothing was changed.`,
    );
  }
  existingV5View(paths);
}

/**
 * The text of an existing bimri.md that may become the genesis revision, or
 * null when there is none; refuses one that is not a valid v5 view.
 */
export function existingV5View(paths: StorePaths): string | null {
  // Never read through a link: its target is outside what BIMRI may adopt.
  if (lstatOrNull(paths.view)?.isSymlink) {
    throw new BimriError(
      "store-unsafe",
      "bimri.md cannot be a symbolic link or reparse point; BIMRI never follows links in shared memory paths. Replace it with a regular file (or remove it), then run the command again; nothing was changed.",
    );
  }
  const existing = readBytesOrNull(paths.view);
  if (existing === null) return null;
  const text = decodeUtf8Strict(existing);
  const parsed = text === null ? null : parseView(text);
  if (text === null || parsed === null || parsed.errors.length > 0) {
    // "initial hot memory is invalid: ..." are the reference's words for this refusal.
    const why = text === null
      ? "it is not UTF-8"
      : parsed === null
      ? "it is not a BIMRI v5 view"
      : parsed.errors.slice(0, 3).join("; ");
    throw new BimriError(
      "store-unsafe",
      `initial hot memory is invalid: ${why}. bimri.md exists but is not a BIMRI v5 view and there is no .bimri/state.json. Run \`bimri migrate\` (or install --target <project>) to import older memory; nothing was changed.`,
    );
  }
  return text;
}

/**
 * Refuses to initialize a store whose state.json is missing while history
 * exists: starting over would orphan every run and revision, as the reference
 * refuses too. The one tolerated leftover is this initialization's own first
 * step after a crash: a lone V000000 holding exactly the genesis view, with
 * no run log and no proposal yet.
 */
export function refuseResetOverHistory(paths: StorePaths, genesis: string): void {
  const revisions = listNames(paths.folder("revisions")).filter((n) => /^V.*\.md$/s.test(n));
  const ownLeftover = revisions.length === 1 && revisions[0] === "V000000.md" &&
    readTextOrNull(paths.revision(0)) === genesis &&
    listNames(paths.folder("log")).length === 0 &&
    listNames(paths.folder("proposals")).length === 0;
  if (revisions.length === 0 || ownLeftover) return;
  throw new BimriError(
    "store-corrupt",
    ".bimri/state.json is missing while memory revisions already exist. BIMRI stopped rather than start the history over; restore .bimri/state.json from a backup, then run doctor. Nothing was changed.",
  );
}
