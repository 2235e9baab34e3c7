/**
 * v5.0, v5.0.1 and v5.0.2 -> v5.1.0 state upgrade (protocol 14.3, 14.4): the
 * route `migrate` takes for every older v5 state, as the reference's loader
 * sends all three versions to one upgrade. (The installer's code-only update
 * activates a 5.0.2 store differently, see v502.ts.)
 *
 * Durable steps, in order: validate the old state and its accepted head;
 * preserve the exact old state as `.bimri/backups/state-v<ver>-<sha256>.json`;
 * write (or reuse byte-identical) one metadata-only next revision when the
 * head still carries historical header/cap comments; save the 5.1.0 state;
 * refresh the view (an edited view goes through manual-edit recovery).
 * Every step is idempotent, so an interrupted upgrade simply runs again.
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { parseView } from "../model/hot.ts";
import { revisionName } from "../model/ids.ts";
import { codePointLength, sha256Hex, utf8, utf8Length } from "../model/text.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import type { JsonObject } from "../model/json.ts";
import { faultPoint } from "../store/fault.ts";
import { atomicReplace, createExclusive, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { withEngineLock } from "../store/lock.ts";
import { StorePaths } from "../store/paths.ts";
import { ensureLayout } from "../store/store.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import {
  activatedStateObject,
  checkCoreHead,
  LIMIT_FIELDS,
  pointerInside,
  sameBytes,
  validateActivatedState,
} from "./common.ts";
import { readRawState } from "../records/store_format.ts";
import { finishReceipt, syncViewAndIndex } from "./finish.ts";
import { metadataRevisionLine, type MigrationReceipt, profileText } from "./receipt.ts";

/** The stock v5.0 limit profile. */
export const V50_DEFAULT_LIMITS: Readonly<Record<string, number>> = {
  tier1_max: 12,
  tier2_max: 20,
  tier3_max: 8,
  entry_max_chars: 500,
  hot_max_bytes: 16384,
};

/** The v5.1 defaults a stock v5.0 profile expands to. */
export const V51_DEFAULT_LIMITS: Readonly<Record<string, number>> = {
  tier1_max: 20,
  tier2_max: 40,
  tier3_max: 12,
  entry_max_chars: 500,
  hot_max_bytes: 49152,
};

const RICH_METADATA: Readonly<Record<string, string>> = {
  "<!-- BIMRI v5 | Generated view. Do not edit directly. -->":
    "<!-- BIMRI v5.0.2 | Generated view. Do not edit directly. -->",
  "<!-- BIMRI v5.0.1 | Generated view. Do not edit directly. -->":
    "<!-- BIMRI v5.0.2 | Generated view. Do not edit directly. -->",
  "<!-- BIMRI v5.0.1 | Generated. -->": "<!-- BIMRI v5.0.2 | Generated. -->",
  "<!-- Confirmed facts, decisions, preferences and rules. Cap: 12. -->":
    "<!-- Confirmed facts, decisions, preferences and rules. Capacity: state.json. -->",
  "<!-- Current work, risks and next actions. Cap: 20. -->":
    "<!-- Current work, risks and next actions. Capacity: state.json. -->",
  "<!-- Evidence-backed patterns. Cap: 8. -->":
    "<!-- Evidence-backed patterns. Capacity: state.json. -->",
};

const COMPACT_METADATA: Readonly<Record<string, string>> = {
  "<!-- BIMRI v5 | Generated view. Do not edit directly. -->": "<!-- BIMRI v5.0.2 | Generated. -->",
  "<!-- BIMRI v5.0.1 | Generated. -->": "<!-- BIMRI v5.0.2 | Generated. -->",
  "<!-- BIMRI v5.0.1 | Generated view. Do not edit directly. -->":
    "<!-- BIMRI v5.0.2 | Generated. -->",
  "<!-- BIMRI v5.0.2 | Generated view. Do not edit directly. -->":
    "<!-- BIMRI v5.0.2 | Generated. -->",
  "<!-- Confirmed facts, decisions, preferences and rules. Cap: 12. -->":
    "<!-- Tier 1 capacity: state.json. -->",
  "<!-- Current work, risks and next actions. Cap: 20. -->":
    "<!-- Tier 2 capacity: state.json. -->",
  "<!-- Evidence-backed patterns. Cap: 8. -->": "<!-- Tier 3 capacity: state.json. -->",
  "<!-- Confirmed facts, decisions, preferences and rules. Soft target: state.json. -->":
    "<!-- Tier 1 soft target: state.json. -->",
  "<!-- Current work, risks and next actions. Soft target: state.json. -->":
    "<!-- Tier 2 soft target: state.json. -->",
  "<!-- Evidence-backed patterns. Soft target: state.json. -->":
    "<!-- Tier 3 soft target: state.json. -->",
};

/** Rewrites only exact historical metadata lines; entry bytes and line endings stay. */
export function normalizeMetadata(text: string, compact: boolean): string {
  const map = compact ? COMPACT_METADATA : RICH_METADATA;
  return text.split(/(?<=\n)/).map((line) => {
    const body = line.replace(/\r?\n$/, "");
    const ending = line.slice(body.length);
    return (map[body] ?? body) + ending;
  }).join("");
}

/** Bounded-memory overflow of a view: [bytes over ceiling, inherited overlength count, excess]. */
export function overflowVector(
  text: string,
  limits: { entry_max_chars: number; hot_max_bytes: number },
): number[] | null {
  const view = parseView(text, Number.MAX_SAFE_INTEGER);
  if (view.errors.length > 0) return null;
  const excess = view.entries
    .filter(({ entry }) => entry.tier === 3 || entry.source === "legacy")
    .map(({ entry }) => codePointLength(entry.text) - limits.entry_max_chars)
    .filter((n) => n > 0);
  return [
    Math.max(0, utf8Length(text) - limits.hot_max_bytes),
    excess.length,
    excess.reduce((a, b) => a + b, 0),
  ];
}

function worse(after: number[], before: number[]): boolean {
  return after.some((value, i) => value > before[i]);
}

/** Chooses rich or compact truthful metadata without worsening overflow; null when nothing changes. */
export function selectMetadataNormalization(
  text: string,
  limits: { entry_max_chars: number; hot_max_bytes: number },
): string | null {
  let normalized = normalizeMetadata(text, false);
  if (normalized === text) return null;
  const before = overflowVector(text, limits);
  let after = overflowVector(normalized, limits);
  if (before !== null && after !== null && worse(after, before)) {
    normalized = normalizeMetadata(text, true);
    after = overflowVector(normalized, limits);
  }
  if (before === null || after === null || worse(after, before)) {
    throw new BimriError(
      "refused",
      "cannot normalize the v5.0 view metadata without increasing bounded-memory overflow; nothing was changed.",
    );
  }
  return normalized;
}

function limitsOf(state: JsonObject): Record<string, number> {
  const out: Record<string, number> = {};
  for (const field of LIMIT_FIELDS) out[field] = state[field] as number;
  return out;
}

/** The older v5 state versions this upgrade accepts. */
export type UpgradableV5Version = "5.0" | "5.0.1" | "5.0.2";

/**
 * Upgrades a v5.0, v5.0.1 or v5.0.2 store to 5.1.0 and runs the lifecycle
 * repair path (view synchronization, so an edited `bimri.md` is preserved as
 * a manual edit and the view restored; index rebuild; audit).
 */
export function upgradeV50(
  root: string,
  options: { quiescent: boolean },
  sourceVersion: UpgradableV5Version,
): MigrationReceipt {
  if (!options.quiescent) {
    throw new BimriError(
      "refused",
      `this store uses memory format v${sourceVersion}. Stop every agent and BIMRI process using the folder, then rerun with --quiescent to upgrade it to v5.1.0. Nothing was changed.`,
    );
  }
  return upgradeV50Receipt(root, sourceVersion);
}

/** The upgrade's durable steps under the lock, then the view sync; returns what the receipt needs. */
function upgradeCore(root: string, sourceVersion: UpgradableV5Version) {
  const paths = new StorePaths(root);
  const outcome = withEngineLock(paths, () => {
    const raw = readRawState(paths);
    if (raw.bimri_version !== sourceVersion) {
      throw new BimriError(
        "store-unsafe",
        "state.json changed before the upgrade took the lock; rerun migrate.",
      );
    }
    const oldLimits = limitsOf({ ...V50_DEFAULT_LIMITS, ...raw });
    const expanded = sourceVersion === "5.0" &&
      LIMIT_FIELDS.every((f) => oldLimits[f] === V50_DEFAULT_LIMITS[f]);
    const upgraded = activatedStateObject(raw, expanded ? { ...V51_DEFAULT_LIMITS } : {});
    const state = validateActivatedState(upgraded, sourceVersion);
    const oldStateForHead = validateActivatedState(activatedStateObject(raw), sourceVersion);
    const head = checkCoreHead(paths, oldStateForHead, sourceVersion);
    const normalized = selectMetadataNormalization(head.text, state);
    let metadataRevision: string | null = null;
    let newHead: Uint8Array | null = null;
    if (normalized !== null) {
      const check = parseView(normalized, Number.MAX_SAFE_INTEGER);
      const escaping = check.entries.find(({ entry }) =>
        entry.tier !== 3 && entry.pointer !== null && !pointerInside(root, entry.pointer)
      );
      if (check.errors.length > 0 || escaping) {
        throw new BimriError(
          "refused",
          "the normalized view would be invalid; nothing was changed.",
        );
      }
      newHead = utf8(normalized);
      const number = state.head_revision + 1;
      const existing = readBytesOrNull(paths.revision(number));
      if (existing !== null && !sameBytes(existing, newHead)) {
        throw new BimriError(
          "store-unsafe",
          `the v5.1.0 metadata revision conflicts with an existing ${
            revisionName(number)
          }.md; BIMRI stopped without overwriting it.`,
        );
      }
    }
    // Durable step 1: the exact old state.
    const oldBytes = readBytesOrNull(paths.state) as Uint8Array;
    const backupName = `state-v${sourceVersion}-${sha256Hex(oldBytes)}.json`;
    const backupPath = join(paths.folder("backups"), backupName);
    Deno.mkdirSync(paths.folder("backups"), { recursive: true });
    const existingBackup = readBytesOrNull(backupPath);
    if (existingBackup !== null) {
      if (!sameBytes(existingBackup, oldBytes) || lstatOrNull(backupPath)?.isSymlink) {
        throw new BimriError(
          "store-unsafe",
          `${backupName} conflicts with the source state; nothing was changed.`,
        );
      }
    } else createExclusive(backupPath, oldBytes);
    faultPoint("upgrade-after-backup");
    // Durable step 2: the metadata-only revision.
    if (newHead !== null) {
      const number = state.head_revision + 1;
      if (readBytesOrNull(paths.revision(number)) === null) {
        createExclusive(paths.revision(number), newHead);
      }
      upgraded.head_revision = number;
      upgraded.head_hash = sha256Hex(newHead);
      upgraded.last_revision_reason = `v${AUTHORITY_FORMAT} metadata normalization`;
      metadataRevision = revisionName(number);
      faultPoint("upgrade-after-revision");
    }
    // Durable step 3: the state, last.
    if (!sameBytes(readBytesOrNull(paths.state), oldBytes)) {
      throw new BimriError(
        "io",
        "state.json changed while the upgrade was committing; rerun migrate.",
      );
    }
    atomicReplace(paths.state, canonicalJson(upgraded));
    // The view: the old generated head is replaced directly; anything else is
    // a manual edit and goes through recovery (below, under withStore).
    const view = readBytesOrNull(paths.view);
    if (newHead !== null && (view === null || sameBytes(view, head.bytes))) {
      atomicReplace(paths.view, newHead);
    }
    // The upgrade has committed; an edited view is healed only by the sync
    // below, so a crash here leaves it for the next command's sync.
    faultPoint("upgrade-before-view-sync");
    return {
      expanded,
      oldLimits,
      newLimits: limitsOf(upgraded),
      metadataRevision,
      backup: `.bimri/backups/${backupName}`,
    };
  });
  // Lifecycle repair path: layout, view synchronization (manual-edit recovery).
  ensureLayout(paths);
  const notices = syncViewAndIndex(root);
  return { outcome, notices };
}

/**
 * The upgrade a writer performs before it runs (commands/run.ts), as the
 * reference's loader does: the same durable steps as `migrate`. Returns the
 * lines for stderr: what was upgraded, then the view sync's notices.
 */
export function upgradeV50State(root: string, sourceVersion: UpgradableV5Version): string[] {
  const { outcome, notices } = upgradeCore(root, sourceVersion);
  const revision = outcome.metadataRevision === null
    ? ""
    : ` ${metadataRevisionLine(outcome.metadataRevision)}`;
  return [
    `BIMRI NOTICE: memory format v${sourceVersion} was upgraded to v${AUTHORITY_FORMAT} before this command (the old state is kept at ${outcome.backup}).${revision}`,
    ...notices,
  ];
}

function upgradeV50Receipt(
  root: string,
  sourceVersion: UpgradableV5Version,
): MigrationReceipt {
  const { outcome, notices } = upgradeCore(root, sourceVersion);
  // The reference words only 5.0.1 as "limits preserved"; a 5.0.2 source,
  // whose profile is never expanded either, reads "custom limits preserved".
  const disposition = sourceVersion === "5.0.1"
    ? "limits preserved"
    : outcome.expanded
    ? "stock limits expanded"
    : "custom limits preserved";
  const memoryLines = [
    `Memory: upgraded v${sourceVersion} to v${AUTHORITY_FORMAT}; ${disposition} (${
      profileText(outcome.newLimits)
    }).`,
    `Previous limits: ${profileText(outcome.oldLimits)}.`,
    `State backup: ${outcome.backup}.`,
  ];
  if (outcome.metadataRevision !== null) {
    memoryLines.push(metadataRevisionLine(outcome.metadataRevision));
  }
  return finishReceipt(root, {
    mode: "state-upgrade",
    detected_format: sourceVersion,
    detected_version: sourceVersion,
    source_file: ".bimri/state.json",
    imported: { tier1: 0, tier2: 0, tier3: 0 },
    converted_patterns: 0,
    inherited_overflow: [],
    backup: outcome.backup,
    migration_record: null,
    metadata_revision: outcome.metadataRevision,
    warnings: notices,
  }, memoryLines);
}
