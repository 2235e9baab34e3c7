/**
 * Legacy lineage: proves that a v1-v3 migration's record
 * (`.bimri/migrations/legacy-to-v5.json`), the byte-exact source copies it
 * names under `.bimri/backups/`, `V000000` and `state.legacy_migration` still
 * claim each other, with the reference's rules and wording. Reads one record,
 * its one or two backups and V000000: constant work whatever the history.
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { KEY, KEY_MAX } from "../model/ids.ts";
import { decodeUtf8Strict, sha256Hex, utf8 } from "../model/text.ts";
import { TIMESTAMP } from "../model/time.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../model/json.ts";
import { lstatOrNull, readBytesOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { sameBytes } from "./common.ts";
import {
  LEGACY_MIGRATION,
  legacyMarkerPath,
  type LineageClaim,
  lineageProblem,
  type RecordProver,
  requireLineage,
} from "../records/legacy_claim.ts";
import {
  convertLegacy,
  importSummary,
  LEGACY_CONVERTERS,
  type LegacyParsed,
  parseLegacy,
} from "./legacy_convert.ts";

/** A record that proved itself: the V000000 bytes it names and the converter release that made them. */
export type ProvenMarker = { revisionBytes: Uint8Array; converterVersion: string };

const HASH = /^[0-9a-f]{64}$/;
const LEGACY_ENTRY = /^R[0-9]+-E[0-9]+$/;

function fail(message: string): never {
  throw new BimriError("store-corrupt", message);
}

function isCount(value: JsonValue | undefined): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

function isSourceVersion(value: JsonValue | undefined): value is 1 | 2 | 3 {
  return value === 1 || value === 2 || value === 3;
}

/** A stored UTC timestamp that names a real instant (`YYYY-MM-DDTHH:MM:SSZ`). */
function isTimestamp(value: JsonValue | undefined): boolean {
  if (typeof value !== "string" || !TIMESTAMP.test(value)) return false;
  const parsed = new Date(value);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 19) + "Z" === value;
}

/** The role a root file name played in v1-v3 memory, or null. */
function rootRole(name: string): string | null {
  const folded = name.toLowerCase();
  if (folded === "bimri.md") return "active memory";
  if (folded === "bimri-backup.md") return "rolling backup";
  return null;
}

/** Reads a regular file's bytes, or null when it is missing, a link or not a file. */
function regularFileBytes(path: string): Uint8Array | null {
  const info = lstatOrNull(path);
  if (info === null || info.isSymlink || !info.isFile) return null;
  return readBytesOrNull(path);
}

type ProvenAsset = { role: string; sourcePath: string; parsed: LegacyParsed };

/** Checks one asset record against its byte-exact copy and returns the copy's parse. */
function proveAsset(paths: StorePaths, asset: JsonValue, seen: Set<string>): ProvenAsset {
  if (!isJsonObject(asset)) fail("legacy migration marker contains an invalid asset record.");
  const { backup_path: backupPath, source_path: sourcePath, sha256: digest } = asset;
  if (
    typeof backupPath !== "string" || typeof sourcePath !== "string" ||
    /[/\\]/.test(sourcePath) || rootRole(sourcePath) === null ||
    typeof digest !== "string" || !HASH.test(digest) || !isCount(asset.byte_length) ||
    !isSourceVersion(asset.source_version)
  ) {
    fail("legacy migration marker contains invalid backup authority.");
  }
  if (seen.has(sourcePath)) fail("legacy migration marker contains duplicate source paths.");
  seen.add(sourcePath);
  if (asset.role !== rootRole(sourcePath)) {
    fail("legacy migration marker asset role does not match its source path.");
  }
  // Only the content-addressed name directly under .bimri/backups is
  // authority: a path that walks elsewhere could point at any bytes.
  const name = `legacy-${sourcePath}-${digest}.bin`;
  if (backupPath !== `.bimri/backups/${name}`) {
    fail("legacy migration backup path is not the deterministic direct .bimri/backups authority.");
  }
  const bytes = regularFileBytes(join(paths.folder("backups"), name));
  if (bytes === null || bytes.length !== asset.byte_length || sha256Hex(bytes) !== digest) {
    fail(`legacy migration backup is missing or damaged: ${backupPath}`);
  }
  const text = decodeUtf8Strict(bytes);
  if (text === null) fail(`legacy migration backup is not valid UTF-8: ${backupPath}`);
  const parsed = parseLegacy(text, `preserved ${asset.role} ${sourcePath}`);
  if (parsed.version !== asset.source_version) {
    fail("legacy migration marker asset version does not match its backup.");
  }
  return { role: asset.role as string, sourcePath, parsed };
}

function checkIdMapShape(idMap: JsonValue | undefined): void {
  if (!Array.isArray(idMap)) fail("legacy migration marker ID map must be a list.");
  const ids = new Set<string>();
  const keys = new Set<string>();
  for (const mapping of idMap) {
    const ok = isJsonObject(mapping) && typeof mapping.target_id === "string" &&
      LEGACY_ENTRY.test(mapping.target_id) && !ids.has(mapping.target_id) &&
      typeof mapping.target_key === "string" && !keys.has(mapping.target_key) &&
      mapping.target_key.length <= KEY_MAX && KEY.test(mapping.target_key.trim().toLowerCase()) &&
      isSourceVersion(mapping.source_tier) && (mapping.target_tier === 1 ||
        mapping.target_tier === 2) &&
      typeof mapping.source_text_sha256 === "string" && HASH.test(mapping.source_text_sha256);
    if (!ok) fail("legacy migration marker contains an invalid ID mapping.");
    ids.add(mapping.target_id as string);
    keys.add(mapping.target_key as string);
  }
}

/**
 * Proves a parsed migration record against the store's files: its fields,
 * each byte-exact source copy (content-addressed, directly under
 * `.bimri/backups`), V000000 as the deterministic conversion of the preserved
 * active source by the converter release it names, the ID map and receipt,
 * and, given `claim`, that state claims the migration and (at V000000) its
 * head. Throws BimriError with the first problem (reference wording, no next
 * step: callers add theirs).
 */
export function proveLegacyMarker(
  paths: StorePaths,
  marker: JsonObject,
  claim?: LineageClaim,
): ProvenMarker {
  if (marker.migration !== LEGACY_MIGRATION) {
    fail("legacy migration marker has an invalid migration type.");
  }
  const sourceHash = marker.source_hot_hash;
  if (
    !isSourceVersion(marker.source_version) || typeof sourceHash !== "string" ||
    !HASH.test(sourceHash)
  ) {
    fail("legacy migration marker has invalid source authority.");
  }
  const revisionHash = marker.revision_sha256;
  if (
    marker.revision !== "V000000" || typeof revisionHash !== "string" || !HASH.test(revisionHash)
  ) {
    fail("legacy migration marker has invalid revision authority.");
  }
  if (!isTimestamp(marker.completed_at)) {
    fail("legacy migration marker has an invalid completion time.");
  }
  const revisionBytes = regularFileBytes(paths.revision(0));
  if (revisionBytes === null) {
    fail("legacy migration marker exists but V000000 is missing or unsafe.");
  }
  if (sha256Hex(revisionBytes) !== revisionHash) {
    fail("legacy migration V000000 does not match its durable marker.");
  }
  const assets = marker.assets;
  if (!Array.isArray(assets) || assets.length === 0) {
    fail("legacy migration marker must contain preserved assets.");
  }
  const seen = new Set<string>();
  const proven = assets.map((asset) => proveAsset(paths, asset, seen));
  const activeHashes = new Set(
    assets.filter((a) => isJsonObject(a) && a.role === "active memory").map((a) =>
      (a as JsonObject).sha256
    ),
  );
  if (activeHashes.size !== 1 || !activeHashes.has(sourceHash)) {
    fail("legacy migration marker source hash has no active asset.");
  }
  // Every active copy has the same bytes (one hash), so the first one speaks for all.
  const active = proven.find((a) => a.role === "active memory")!;
  if (marker.source_version !== active.parsed.version) {
    fail("legacy migration marker source version does not match its active backup.");
  }
  checkIdMapShape(marker.id_map);
  const named = marker.converter_version;
  if (
    named !== undefined && named !== null &&
    !(typeof named === "string" && LEGACY_CONVERTERS.has(named))
  ) {
    fail("legacy migration marker has an unsupported converter version.");
  }
  // A record without converter_version predates the field: any release may have made it.
  const candidates = typeof named === "string" ? [named] : [...LEGACY_CONVERTERS.keys()];
  let converterVersion: string | null = null;
  let expectedIdMap: JsonValue = null;
  for (const version of candidates) {
    const converted = convertLegacy(active.parsed, LEGACY_CONVERTERS.get(version)!);
    expectedIdMap = converted.idMap as unknown as JsonValue;
    if (sameBytes(utf8(converted.text), revisionBytes)) {
      converterVersion = version;
      break;
    }
  }
  if (converterVersion === null) {
    fail(
      "legacy migration revision is not the deterministic conversion of its preserved active source.",
    );
  }
  if (canonicalJson(marker.id_map as JsonValue) !== canonicalJson(expectedIdMap)) {
    fail("legacy migration ID map is not the deterministic source-to-v5 mapping.");
  }
  checkReceipt(marker.receipt, proven, active.parsed);
  if (claim !== undefined) {
    if (claim.legacyMigration !== LEGACY_MIGRATION) {
      fail("v5 state does not claim its legacy migration authority.");
    }
    if (claim.headRevision === 0 && claim.headHash !== revisionHash) {
      fail("v5 state does not match the legacy migration revision.");
    }
  }
  return { revisionBytes, converterVersion };
}

/** An optional receipt must repeat the counts of the preserved active source. */
function checkReceipt(
  receipt: JsonValue | undefined,
  proven: ProvenAsset[],
  parsed: LegacyParsed,
): void {
  if (receipt === undefined || receipt === null) return;
  if (!isJsonObject(receipt)) fail("legacy migration receipt must be an object.");
  const activeSources = proven.filter((a) => a.role === "active memory").map((a) => a.sourcePath);
  if (typeof receipt.source_file !== "string" || !activeSources.includes(receipt.source_file)) {
    fail("legacy migration receipt source file is invalid.");
  }
  if (receipt.source_version !== parsed.version) {
    fail("legacy migration receipt source version is invalid.");
  }
  for (const [key, value] of Object.entries(importSummary(parsed))) {
    if (receipt[key] !== value) fail("legacy migration receipt counts are invalid.");
  }
}

/**
 * Proves a present, claimed migration record (`RecordProver`): readable, a
 * JSON object, and every rule of the reference's record check.
 */
export const proveLegacyRecord: RecordProver = (paths, claim) => {
  const path = legacyMarkerPath(paths);
  const info = lstatOrNull(path);
  if (info === null) return "legacy-to-v5.json is missing.";
  if (info.isSymlink) return "legacy-to-v5.json cannot be a symbolic link or reparse point.";
  const bytes = info.isFile ? readBytesOrNull(path) : null;
  const text = bytes === null ? null : decodeUtf8Strict(bytes);
  let marker: unknown;
  try {
    marker = text === null ? undefined : JSON.parse(text);
  } catch {
    marker = undefined;
  }
  if (marker === undefined) {
    return "legacy-to-v5.json is unreadable; BIMRI stopped without resetting it.";
  }
  if (!isJsonObject(marker as JsonValue)) return "legacy-to-v5.json must contain a JSON object.";
  try {
    proveLegacyMarker(paths, marker as JsonObject, claim);
  } catch (error) {
    if (error instanceof BimriError) return error.message;
    throw error;
  }
  return null;
};

/** The whole lineage check (claims, then the record's proof); see `lineageProblem`. */
export function legacyLineageProblem(paths: StorePaths, claim: LineageClaim): string | null {
  return lineageProblem(paths, claim, proveLegacyRecord);
}

/** Refuses a store whose legacy lineage does not prove itself, with the next step. */
export function requireLegacyLineage(paths: StorePaths, claim: LineageClaim): void {
  requireLineage(paths, claim, proveLegacyRecord);
}
