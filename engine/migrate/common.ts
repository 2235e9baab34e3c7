/**
 * Pieces shared by the migrations: the path inventory that proves what an
 * activation must not touch, validation of an older v5 state and its accepted
 * head (without the strict 5.1.0 loader), and small byte helpers.
 */
import { join, relative, resolve, sep } from "node:path";
import { BimriError } from "../errors.ts";
import { type ParsedView, parseView } from "../model/hot.ts";
import { genesisState, parseState, type State, stateToJson } from "../model/state.ts";
import { decodeUtf8Strict, sha256Hex } from "../model/text.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import type { JsonObject, JsonValue } from "../model/json.ts";
import { lstatOrNull, readBytesOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";

/** One inventoried path: its type and exact content hash or link target. */
export type InventoryEntry = {
  path: string;
  type: "file" | "directory" | "symlink" | "other";
  sha256?: string;
  target?: string;
};

/** Paths under `.bimri/` that an activation may write (excluded from preservation). */
export const ACTIVATION_MUTABLE: ReadonlySet<string> = new Set([
  ".bimri/engine.lock",
  ".bimri/runtime.local.json",
  ".bimri/hooks.claude.local.json",
  ".bimri/state.json",
]);

/** The v5.1 state fields a 5.1.0 state must have, with the values a new store starts from. */
export const DEFAULT_STATE_FIELDS: Readonly<Record<string, JsonValue>> = stateToJson({
  ...genesisState(""),
  head_hash: null,
});

/** Fields a pre-5.1 state may lack because 5.1 introduced them (filled, never guessed otherwise). */
export const LIFECYCLE_FIELDS: readonly string[] = ["cold_current"];

/** The five limit fields of a store's profile. */
export const LIMIT_FIELDS: readonly string[] = [
  "tier1_max",
  "tier2_max",
  "tier3_max",
  "entry_max_chars",
  "hot_max_bytes",
];

/** Root-relative POSIX path. */
export function rel(root: string, path: string): string {
  return relative(root, path).split(sep).join("/");
}

function walk(root: string, dir: string, out: InventoryEntry[], skip: ReadonlySet<string>): void {
  let names: string[];
  try {
    names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  } catch (error) {
    throw new BimriError(
      "io",
      `could not list ${rel(root, dir)} (${(error as Error).message}); nothing was changed.`,
    );
  }
  for (const name of names) {
    const full = join(dir, name);
    const path = rel(root, full);
    if (skip.has(path)) continue;
    const info = Deno.lstatSync(full);
    if (info.isSymlink) {
      out.push({ path, type: "symlink", target: Deno.readLinkSync(full) });
    } else if (info.isDirectory) {
      out.push({ path, type: "directory" });
      walk(root, full, out, skip);
    } else if (info.isFile) {
      out.push({ path, type: "file", sha256: sha256Hex(Deno.readFileSync(full)) });
    } else {
      out.push({ path, type: "other" });
    }
  }
}

/**
 * Every path under `.bimri/` plus root `bimri.md`, with types, content hashes
 * and symlink targets, sorted by path; the mutable paths are left out.
 */
export function inventoryStore(paths: StorePaths): InventoryEntry[] {
  const out: InventoryEntry[] = [];
  const view = lstatOrNull(paths.view);
  if (view !== null) {
    if (view.isSymlink) {
      out.push({ path: "bimri.md", type: "symlink", target: Deno.readLinkSync(paths.view) });
    } else if (view.isFile) {
      out.push({
        path: "bimri.md",
        type: "file",
        sha256: sha256Hex(Deno.readFileSync(paths.view)),
      });
    } else out.push({ path: "bimri.md", type: "other" });
  }
  walk(paths.root, paths.dir, out, ACTIVATION_MUTABLE);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** SHA-256 of the inventory's canonical JSON (one digest for the whole protected tree). */
export function inventoryDigest(entries: InventoryEntry[]): string {
  return sha256Hex(canonicalJson(entries as unknown as JsonValue));
}

/** Paths whose type, hash or target differ between two inventories (added and removed included). */
export function inventoryDifferences(before: InventoryEntry[], after: InventoryEntry[]): string[] {
  const key = (e: InventoryEntry) => `${e.type}|${e.sha256 ?? ""}|${e.target ?? ""}`;
  const a = new Map(before.map((e) => [e.path, key(e)]));
  const b = new Map(after.map((e) => [e.path, key(e)]));
  const out: string[] = [];
  for (const [path, value] of a) if (b.get(path) !== value) out.push(path);
  for (const path of b.keys()) if (!a.has(path)) out.push(path);
  return out.sort();
}

/** Equality of two byte arrays. */
export function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Builds the 5.1.0 form of an older v5 state: every field it had is kept
 * verbatim, missing lifecycle fields are added, the version advances. Refuses
 * a state missing any other required field (never filled from defaults).
 */
export function activatedStateObject(raw: JsonObject, extra: JsonObject = {}): JsonObject {
  const missing = Object.keys(DEFAULT_STATE_FIELDS).filter((field) =>
    !(field in raw) && !LIFECYCLE_FIELDS.includes(field)
  );
  if (missing.length > 0) {
    throw new BimriError(
      "store-corrupt",
      `state.json is missing required v5 field(s): ${
        missing.join(", ")
      }. BIMRI stopped without filling them from defaults; nothing was changed.`,
    );
  }
  const out: JsonObject = { ...raw };
  for (const field of LIFECYCLE_FIELDS) {
    if (!(field in out)) out[field] = structuredClone(DEFAULT_STATE_FIELDS[field]);
  }
  Object.assign(out, extra);
  out.bimri_version = AUTHORITY_FORMAT;
  return out;
}

/** Validates a would-be 5.1.0 state object with the strict loader's rules. */
export function validateActivatedState(state: JsonObject, sourceVersion: string): State {
  try {
    return parseState(state);
  } catch (error) {
    if (error instanceof BimriError) {
      throw new BimriError(
        "store-corrupt",
        `the v${sourceVersion} state cannot be upgraded: ${error.message} Nothing was changed.`,
      );
    }
    throw error;
  }
}

/** A validated accepted head of an older store. */
export type CheckedHead = { bytes: Uint8Array; text: string; view: ParsedView };

/** True when a pointer resolves inside the project root. */
export function pointerInside(root: string, pointer: string): boolean {
  const base = resolve(root);
  const target = resolve(base, pointer);
  return target === base || target.startsWith(base + sep);
}

/**
 * Checks core authority of a v5 store of any version: the head revision
 * exists as a regular file, matches `head_hash`, is UTF-8, parses with the
 * hot grammar and its pointers stay inside the project. Throws on damage.
 */
export function checkCoreHead(
  paths: StorePaths,
  state: State,
  sourceVersion: string,
): CheckedHead {
  const label = `V${String(state.head_revision).padStart(6, "0")}`;
  const path = paths.revision(state.head_revision);
  const info = lstatOrNull(path);
  const stop = (problem: string): never => {
    throw new BimriError(
      "store-corrupt",
      `cannot upgrade v${sourceVersion}: ${problem} Repair core authority (restore it from a backup), then retry; nothing was changed.`,
    );
  };
  if (info === null || !info.isFile || info.isSymlink) {
    stop(`the accepted head revision is missing or unsafe (${label}).`);
  }
  const bytes = readBytesOrNull(path) as Uint8Array;
  if (sha256Hex(bytes) !== state.head_hash) {
    stop(`state head_hash does not match the head revision ${label}.`);
  }
  const text = decodeUtf8Strict(bytes);
  if (text === null) return stop(`the head revision ${label} is not valid UTF-8.`);
  const view = parseView(text, state.entry_max_chars);
  if (view.errors.length > 0) stop(`the head revision is invalid: ${view.errors.join("; ")}.`);
  for (const { entry } of view.entries) {
    if (entry.tier !== 3 && entry.pointer && !pointerInside(paths.root, entry.pointer)) {
      stop(`entry ${entry.id}: pointer escapes the BIMRI project.`);
    }
  }
  return { bytes, text, view };
}

/** Parses a JSON object from bytes, or null. */
export function parseJsonObject(bytes: Uint8Array | null): JsonObject | null {
  if (bytes === null) return null;
  const text = decodeUtf8Strict(bytes);
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? value as JsonObject
      : null;
  } catch {
    return null;
  }
}

/** The limit profile of the state at `paths` (as stored), for receipts. */
export function stateLimits(paths: StorePaths): Record<string, number> {
  const state = parseJsonObject(readBytesOrNull(paths.state)) ?? {};
  const out: Record<string, number> = {};
  for (const field of LIMIT_FIELDS) {
    const value = state[field];
    out[field] = typeof value === "number" ? value : Number(DEFAULT_STATE_FIELDS[field]);
  }
  return out;
}
