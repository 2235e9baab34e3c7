/**
 * Store-format detection: which memory generation a folder holds, read
 * without writing anything and without the strict 5.1.0 state loader (older
 * states are exactly what it refuses).
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { decodeUtf8Strict } from "../model/text.ts";
import { isJsonObject, type JsonObject } from "../model/json.ts";
import { lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { StorePaths } from "../store/paths.ts";
import { legacyRootFiles, unclaimedLegacyRootsError } from "../store/legacy_root.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";

/** Every store generation bimri recognizes. */
export type StoreFormat =
  | "empty"
  | "v5-view"
  | "5.1.0"
  | "5.0.2"
  | "5.0.1"
  | "5.0"
  | "v4"
  | "legacy";

/** What `detectStoreFormat` found. */
export type StoreDetection = {
  /** The detected generation. */
  format: StoreFormat;
  /** Root-relative file the generation was read from (null for an empty folder). */
  source: string | null;
};

/** Root file names of v1-v3 memory, uppercase first (the reference's order). */
export const LEGACY_ACTIVE_NAMES: readonly string[] = ["BIMRI.md", "bimri.md"];
/** Root file names of the v1-v3 rolling backup. */
export const LEGACY_BACKUP_NAMES: readonly string[] = ["BIMRI-backup.md", "bimri-backup.md"];

/** v5 state versions that predate the 5.1.0 authority format. */
export const LEGACY_V5_VERSIONS: readonly string[] = ["5.0", "5.0.1", "5.0.2"];

/** The explicit v1-v3 header comment (`<!-- BIMRI v3 ... -->`). */
export const LEGACY_HEADER = /^<!--\s*BIMRI\s+v([123])(?:\.[0-9]+)?\b[^>]*-->$/i;

/** Reads state.json as a plain JSON object, refusing what is not one (no version check). */
export function readRawState(paths: StorePaths): JsonObject {
  const bytes = readBytesOrNull(paths.state);
  const text = bytes === null ? null : decodeUtf8Strict(bytes);
  let raw: unknown = null;
  try {
    if (text !== null) raw = JSON.parse(text);
  } catch {
    raw = null;
  }
  if (!isJsonObject(raw)) {
    throw new BimriError(
      "store-corrupt",
      "state.json is not a readable JSON object; BIMRI will not migrate or reset it. Restore .bimri/state.json from a backup, then run migrate again; nothing was changed.",
    );
  }
  return raw;
}

/** True when a state object has the v4 shape (declared 4.x or the v4 `current_run_id` field). */
export function isV4State(state: JsonObject): boolean {
  const raw = state.bimri_version;
  const version = raw === undefined || raw === null ? "" : String(raw);
  if (version.startsWith("4")) return true;
  return version === "" && "current_run_id" in state;
}

function firstContentLine(text: string): string | null {
  for (const line of text.split(/\r\n|\r|\n/)) {
    const trimmed = line.trim();
    if (trimmed === "" || /^#\s/.test(trimmed) || trimmed === "#") continue;
    return trimmed;
  }
  return null;
}

/** True when a Markdown text carries the explicit v1-v3 header in its leading lines. */
export function hasLegacyHeader(text: string): boolean {
  for (const line of text.split(/\r\n|\r|\n/).slice(0, 12)) {
    if (LEGACY_HEADER.test(line.trim())) return true;
  }
  return false;
}

function legacyCandidatePresent(root: string): string | null {
  let names: string[];
  try {
    names = [...Deno.readDirSync(root)].map((e) => e.name).sort();
  } catch {
    return null;
  }
  for (const name of names) {
    const folded = name.toLowerCase();
    if (folded !== "bimri.md" && folded !== "bimri-backup.md") continue;
    if (name === "bimri.md") {
      const bytes = readBytesOrNull(join(root, name));
      const text = bytes === null ? null : decodeUtf8Strict(bytes);
      if (text !== null && !hasLegacyHeader(text)) continue;
    }
    return name;
  }
  return null;
}

/** True when a view text has the v4 shape (its header or any v4 entry line). */
export function looksLikeV4View(text: string): boolean {
  if (text.includes("BIMRI v4")) return true;
  return text.split(/\r\n|\r|\n/).some((line) => V4_LINE.some((re) => re.test(line.trim())));
}

const V4_LINE: readonly RegExp[] = [
  /^\[(R\d+-E\d+)\]\s+\[(decision|fact|pref|rule)\]\s+\[([^\]]*)\]\s+(.+?)(?:\s+->\s+(\S+))?$/,
  /^\[(R\d+-E\d+)\]\s+\[I:([1-5])\]\s+\[(active|watch|closed|decision)\]\s+\[F:(R\d+)\]\s+\[L:(R\d+)\]\s+\[([^\]]*)\]\s+(.+?)(?:\s+->\s+(\S+))?$/,
  /^\[(P\d+)\]\s+\[(emerging|developing|established)\]\s+\[obs:(\d+)\]\s+\[ev:([^\]]*)\]\s+(.+?)\s+\|\s+Falsify:\s+(.+)$/,
];

/**
 * Detects the memory generation under `root` without writing. Refuses (with
 * BimriError) only when state.json exists but cannot be read at all.
 */
export function detectStoreFormat(root: string): StoreDetection {
  const paths = new StorePaths(root);
  if (lstatOrNull(paths.state) !== null) {
    const state = readRawState(paths);
    const version = state.bimri_version;
    if (version === AUTHORITY_FORMAT) return { format: "5.1.0", source: ".bimri/state.json" };
    if (typeof version === "string" && LEGACY_V5_VERSIONS.includes(version)) {
      return { format: version as StoreFormat, source: ".bimri/state.json" };
    }
    if (isV4State(state)) return { format: "v4", source: ".bimri/state.json" };
    throw new BimriError(
      "store-unsafe",
      `state.json declares an unsupported bimri_version ${
        JSON.stringify(version ?? null)
      }; bimri reads 5.1.0 and migrates 5.0, 5.0.1, 5.0.2, v4 and v1-v3. Nothing was changed.`,
    );
  }
  const legacy = legacyCandidatePresent(root);
  if (legacy !== null) return { format: "legacy", source: legacy };
  const view = readBytesOrNull(paths.view);
  if (view !== null) {
    const text = decodeUtf8Strict(view);
    if (text !== null && !text.includes("BIMRI v5") && looksLikeV4View(text)) {
      return { format: "v4", source: "bimri.md" };
    }
    if (text !== null && firstContentLine(text) !== null) {
      return { format: "v5-view", source: "bimri.md" };
    }
  }
  return { format: "empty", source: null };
}

/**
 * Refuses legacy root files (any case variant of BIMRI.md other than the
 * generated `bimri.md`, or a rolling backup) next to structured state: the
 * owner must say which memory is authoritative. Reads only.
 */
export function rejectUnclaimedLegacyRoots(root: string): void {
  const found = legacyRootFiles(root, new StorePaths(root).view);
  if (found.length > 0) throw unclaimedLegacyRootsError(found);
}
