/**
 * `migrate` on a store already at format 5.1.0: before anything is written,
 * the accepted head must parse with the hot grammar; and a head that still
 * carries historical header or cap comments (a store activated by an older
 * engine) gets the same metadata-only next revision an upgrade writes. The
 * view is then synchronized by the caller, so an edited `bimri.md` goes
 * through manual-edit recovery exactly as in an upgrade.
 */
import { BimriError } from "../errors.ts";
import { parseView } from "../model/hot.ts";
import { revisionName } from "../model/ids.ts";
import { parseState } from "../model/state.ts";
import { decodeUtf8Strict, sha256Hex, utf8 } from "../model/text.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { atomicReplace, createExclusive, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { withEngineLock } from "../store/lock.ts";
import { StorePaths } from "../store/paths.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import { pointerInside, sameBytes } from "./common.ts";
import { readRawState } from "../records/store_format.ts";
import { selectMetadataNormalization } from "./v50.ts";

/**
 * Validates the head of a current store and normalizes stale metadata.
 * Returns the name of the metadata revision written (or reused), else null.
 * Refuses with nothing written when the head is damaged or the next revision
 * number already holds other bytes.
 */
export function normalizeCurrentHead(root: string): string | null {
  const paths = new StorePaths(root);
  if (lstatOrNull(paths.state) === null) return null;
  return withEngineLock(paths, () => {
    const raw = readRawState(paths);
    if (raw.bimri_version !== AUTHORITY_FORMAT) return null;
    let state;
    try {
      state = parseState(raw);
    } catch {
      return null; // the audit reports a damaged state in full
    }
    const bytes = readBytesOrNull(paths.revision(state.head_revision));
    if (bytes === null || sha256Hex(bytes) !== state.head_hash) return null; // audited later
    const text = decodeUtf8Strict(bytes);
    if (text === null) return null;
    const view = parseView(text, Number.MAX_SAFE_INTEGER);
    if (view.errors.length > 0) {
      throw new BimriError(
        "store-corrupt",
        `accepted head memory grammar is invalid: ${view.errors.join("; ")}. Restore ${
          revisionName(state.head_revision)
        }.md from a backup, then run migrate again; nothing was changed.`,
      );
    }
    const normalized = selectMetadataNormalization(text, state);
    if (normalized === null) return null;
    const check = parseView(normalized, Number.MAX_SAFE_INTEGER);
    const escaping = check.entries.find(({ entry }) =>
      entry.tier !== 3 && entry.pointer !== null && !pointerInside(root, entry.pointer)
    );
    if (check.errors.length > 0 || escaping) {
      throw new BimriError("refused", "the normalized view would be invalid; nothing was changed.");
    }
    const newHead = utf8(normalized);
    const number = state.head_revision + 1;
    const existing = readBytesOrNull(paths.revision(number));
    if (existing !== null && !sameBytes(existing, newHead)) {
      throw new BimriError(
        "store-unsafe",
        `the v${AUTHORITY_FORMAT} metadata revision conflicts with an existing ${
          revisionName(number)
        }.md; BIMRI stopped without overwriting it. Move that file aside (keep it), then run migrate again.`,
      );
    }
    if (existing === null) createExclusive(paths.revision(number), newHead);
    atomicReplace(
      paths.state,
      canonicalJson({
        ...raw,
        head_revision: number,
        head_hash: sha256Hex(newHead),
        last_revision_reason: `v${AUTHORITY_FORMAT} metadata normalization`,
      }),
    );
    // The old generated head is replaced directly; an edited view is left for
    // the caller's view synchronization (manual-edit recovery).
    const current = readBytesOrNull(paths.view);
    if (current === null || sameBytes(current, bytes)) atomicReplace(paths.view, newHead);
    return revisionName(number);
  });
}
