/**
 * v1-v3 tiered Markdown -> v5 (protocol 14.1, MIGRATION.md "v1-v3 Direct
 * Migration"). The whole source is parsed and converted (legacy_convert.ts), and the result
 * validated, before the first write. Durable steps, in order: exact byte
 * copies of every source under `.bimri/backups/legacy-<name>-<sha256>.bin`;
 * immutable `V000000`; `.bimri/migrations/legacy-to-v5.json`; state; the
 * generated `bimri.md` and retirement of the old root names. Every step
 * reuses byte-identical earlier output, so an interrupted run repeats safely.
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { parseView } from "../model/hot.ts";
import { revisionName } from "../model/ids.ts";
import {
  codePointLength,
  decodeUtf8Strict,
  pyStrip,
  sha256Hex,
  splitLines,
  utf8,
} from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import type { JsonObject, JsonValue } from "../model/json.ts";
import { faultPoint } from "../store/fault.ts";
import {
  atomicReplace,
  createExclusive,
  lstatOrNull,
  readBytesOrNull,
  syncDir,
} from "../store/files.ts";
import { withEngineLock } from "../store/lock.ts";
import { StorePaths } from "../store/paths.ts";
import { ensureLayout } from "../store/store.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import {
  DEFAULT_STATE_FIELDS,
  parseJsonObject,
  rel,
  sameBytes,
  validateActivatedState,
} from "./common.ts";
import { LEGACY_HEADER } from "../records/store_format.ts";
import { finishReceipt, syncViewAndIndex } from "./finish.ts";
import { claimOfRaw } from "../records/legacy_claim.ts";
import { proveLegacyMarker, requireLegacyLineage } from "./legacy_lineage.ts";
import { migratedLines, type MigrationReceipt } from "./receipt.ts";
import { selectMetadataNormalization } from "./v50.ts";
import {
  convertLegacy,
  ENTRY_MAX_CHARS,
  importSummary,
  LEGACY_CONVERTERS,
  type LegacyMapping,
  type LegacyParsed,
  parseLegacy,
  refuse,
} from "./legacy_convert.ts";

/** One legacy memory file found in the project, with its bytes, hash and parse. */
export type Asset = {
  name: string;
  role: string;
  bytes: Uint8Array;
  sha256: string;
  parsed: LegacyParsed;
};

/** The validated plan: which file is authoritative and what it converts to. */
export type LegacyPlan = {
  primary: Asset;
  assets: Asset[];
  parsed: LegacyParsed;
  text: string;
  idMap: LegacyMapping[];
};

function readAsset(root: string, name: string, role: string): Asset {
  const path = join(root, name);
  const info = lstatOrNull(path);
  if (!info || info.isSymlink || !info.isFile) {
    refuse(`${name} must be a regular file (not a link) during migration.`);
  }
  const bytes = Deno.readFileSync(path);
  const text = decodeUtf8Strict(bytes);
  if (text === null) refuse(`${name} is not valid UTF-8.`);
  return {
    name,
    role,
    bytes,
    sha256: sha256Hex(bytes),
    parsed: parseLegacy(text, `${role} ${name}`),
  };
}

function rootNames(root: string, folded: string): string[] {
  return [...Deno.readDirSync(root)].map((e) => e.name).filter((n) => n.toLowerCase() === folded)
    .sort();
}

/** Discovers and validates a v1-v3 source under `root` (pure: reads only). Null when there is none. */
export function planLegacy(root: string): LegacyPlan | null {
  const actives = rootNames(root, "bimri.md");
  const backups = rootNames(root, "bimri-backup.md");
  if (actives.length === 0) {
    if (backups.length > 0) {
      refuse(
        `a legacy BIMRI rolling backup exists without active memory (${
          backups.join(", ")
        }); recovery is ambiguous.`,
      );
    }
    return null;
  }
  if (actives.length === 1 && actives[0] === "bimri.md" && backups.length === 0) {
    const text = decodeUtf8Strict(Deno.readFileSync(join(root, "bimri.md")));
    if (text !== null && !splitLines(text).some((l) => LEGACY_HEADER.test(pyStrip(l)))) return null;
  }
  const active = actives.map((name) => readAsset(root, name, "active memory"));
  if (active.length > 1 && active.some((a) => !sameBytes(a.bytes, active[0].bytes))) {
    refuse(
      `multiple case variants of BIMRI.md differ (${
        actives.join(", ")
      }). Choose the authoritative legacy memory before retrying migration.`,
    );
  }
  if (active.length === 1) {
    const expected = active[0].name.replace(/\.md$/, "") + "-backup.md";
    const mismatched = backups.filter((b) => b !== expected);
    if (mismatched.length > 0) {
      refuse(
        `${mismatched[0]} does not match active ${active[0].name}; backup provenance is ambiguous.`,
      );
    }
  }
  const backupAssets = backups.map((name) => readAsset(root, name, "rolling backup"));
  const primary = active.find((a) => a.name === "bimri.md") ?? active[0];
  const { text, idMap } = convertLegacy(primary.parsed);
  const view = parseView(text, Number.MAX_SAFE_INTEGER);
  if (view.errors.length > 0) {
    refuse(`legacy BIMRI memory could not be converted safely: ${view.errors.join("; ")}.`);
  }
  return { primary, assets: [...active, ...backupAssets], parsed: primary.parsed, text, idMap };
}

function backupName(asset: Asset): string {
  return `legacy-${asset.name}-${asset.sha256}.bin`;
}

/** Files under `.bimri/` a fresh legacy migration (or its retry) may find; anything else is history. */
function checkNamespace(paths: StorePaths, plan: LegacyPlan, metadataRevision: boolean): void {
  const allowed = new Set([
    ".bimri/engine.lock",
    ".bimri/revisions/V000000.md",
    // A historical conversion is followed by its metadata revision (written before state).
    ...(metadataRevision ? [".bimri/revisions/V000001.md"] : []),
    ".bimri/migrations/legacy-to-v5.json",
    ...plan.assets.map((a) => `.bimri/backups/${backupName(a)}`),
  ]);
  const unexpected: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const full = join(dir, entry.name);
      // The installer's own rollback copies are not history (the reference skips them too).
      if (rel(paths.root, full) === ".bimri/install-backups") continue;
      // An atomic write killed before its rename leaves its temporary file: not history.
      if (entry.isFile && /^\.bimri-(tmp|new)-/.test(entry.name)) continue;
      if (entry.isDirectory && !entry.isSymlink) walk(full);
      else if (!allowed.has(rel(paths.root, full))) unexpected.push(rel(paths.root, full));
    }
  };
  const info = lstatOrNull(paths.dir);
  if (info && (info.isSymlink || !info.isDirectory)) refuse(".bimri is not a regular folder.");
  if (info) walk(paths.dir);
  if (unexpected.length > 0) {
    refuse(
      `state.json is missing while unrelated BIMRI history exists: ${
        unexpected.sort().join(", ")
      }. Restore state.json from a backup, or move these aside.`,
    );
  }
}

function writeOrReuse(path: string, bytes: Uint8Array, what: string): void {
  const existing = readBytesOrNull(path);
  if (existing !== null) {
    if (lstatOrNull(path)?.isSymlink || !sameBytes(existing, bytes)) {
      refuse(`${what} already exists and conflicts with the deterministic legacy migration.`);
    }
    return;
  }
  createExclusive(path, bytes);
}

/** The V000000 text a migration writes or continues, with the converter release that makes it. */
type Conversion = { text: string; idMap: LegacyMapping[]; version: string };

/**
 * The conversion to write, or to continue: a V000000 that an interrupted
 * migration by the 5.0 converter left is the same memory in that release's
 * template and keeps its bytes (the record names that converter); any other
 * existing V000000 is refused later as a conflict.
 */
function chooseConversion(paths: StorePaths, plan: LegacyPlan): Conversion {
  const current = { text: plan.text, idMap: plan.idMap, version: AUTHORITY_FORMAT };
  const info = lstatOrNull(paths.revision(0));
  const existing = info?.isFile && !info.isSymlink ? readBytesOrNull(paths.revision(0)) : null;
  if (existing === null || sameBytes(existing, utf8(plan.text))) return current;
  const historical = convertLegacy(plan.parsed, LEGACY_CONVERTERS.get("5.0")!);
  if (!sameBytes(existing, utf8(historical.text))) return current;
  const view = parseView(historical.text, Number.MAX_SAFE_INTEGER);
  if (view.errors.length > 0) {
    refuse(`legacy BIMRI memory could not be converted safely: ${view.errors.join("; ")}.`);
  }
  return { ...historical, version: "5.0" };
}

/** Refuses a migration record that does not prove itself, before any state or retirement. */
function proveRetryMarker(paths: StorePaths, marker: JsonObject): void {
  try {
    proveLegacyMarker(paths, marker);
  } catch (error) {
    if (!(error instanceof BimriError)) throw error;
    throw new BimriError(
      "store-corrupt",
      `${error.message} BIMRI wrote no state and retired no legacy source. Restore .bimri/migrations/legacy-to-v5.json from a backup, or move it aside so migrate rebuilds it from the unchanged sources, then run migrate again.`,
    );
  }
}

/** Migrates v1-v3 memory at `root` to a v5.1.0 store and returns the receipt. */
export function migrateLegacy(root: string): MigrationReceipt {
  const paths = new StorePaths(root);
  const plan = planLegacy(root);
  if (plan === null) refuse("no v1-v3 BIMRI memory was found.");
  const conversion = chooseConversion(paths, plan);
  const revisionBytes = utf8(conversion.text);
  const revisionHash = sha256Hex(revisionBytes);
  const state: JsonObject = structuredClone(DEFAULT_STATE_FIELDS) as JsonObject;
  state.run_count = plan.parsed.sessions;
  state.head_hash = revisionHash;
  state.legacy_migration = "legacy-to-v5";
  const typed = validateActivatedState(state, `${plan.parsed.version} (legacy)`);
  // A historical V000000 keeps its bytes; the accepted head gets today's metadata.
  const normalized = selectMetadataNormalization(conversion.text, typed);
  checkNamespace(paths, plan, normalized !== null);
  const headBytes = normalized === null ? revisionBytes : utf8(normalized);
  const metadataRevision = normalized === null ? null : revisionName(1);
  const assets: JsonObject[] = plan.assets.map((a) => ({
    role: a.role,
    source_path: a.name,
    source_version: a.parsed.version,
    sha256: a.sha256,
    byte_length: a.bytes.length,
    backup_path: `.bimri/backups/${backupName(a)}`,
  }));
  const summary = importSummary(plan.parsed);
  const markerCore: JsonObject = {
    migration: "legacy-to-v5",
    source_version: plan.parsed.version,
    source_hot_hash: plan.primary.sha256,
    revision: "V000000",
    revision_sha256: revisionHash,
    assets,
    id_map: conversion.idMap as unknown as JsonValue,
  };
  const markerPath = join(paths.folder("migrations"), "legacy-to-v5.json");
  const existingMarker = parseJsonObject(readBytesOrNull(markerPath));
  if (readBytesOrNull(markerPath) !== null) {
    if (
      existingMarker === null ||
      Object.entries(markerCore).some(([k, v]) =>
        canonicalJson(existingMarker[k] ?? null) !== canonicalJson(v)
      )
    ) {
      refuse("the existing legacy migration record conflicts with the deterministic conversion.");
    }
  }
  ensureLayout(paths);
  withEngineLock(paths, () => {
    for (const asset of plan.assets) {
      const current = readBytesOrNull(join(root, asset.name));
      if (!sameBytes(current, asset.bytes)) {
        refuse(`${asset.name} changed while migration was preparing; retry when quiescent.`);
      }
      writeOrReuse(
        join(paths.folder("backups"), backupName(asset)),
        asset.bytes,
        `.bimri/backups/${backupName(asset)}`,
      );
    }
    faultPoint("legacy-after-backups");
    writeOrReuse(paths.revision(0), revisionBytes, ".bimri/revisions/V000000.md");
    const marker = existingMarker ?? {
      ...markerCore,
      converter_version: conversion.version,
      receipt: { source_file: plan.primary.name, source_version: plan.parsed.version, ...summary },
      completed_at: utcTimestamp(),
    };
    if (existingMarker === null) atomicReplace(markerPath, canonicalJson(marker));
    // A retry after a crash finds the record a previous run wrote: its core
    // matched above, but the rest (completion time, receipt, converter) may be
    // damaged. The whole record must prove itself before it authorizes state
    // and the retirement of the sources it preserved.
    proveRetryMarker(paths, marker);
    faultPoint("legacy-after-marker");
    if (normalized !== null) {
      writeOrReuse(paths.revision(1), headBytes, ".bimri/revisions/V000001.md");
      state.head_revision = 1;
      state.head_hash = sha256Hex(headBytes);
      state.last_revision_reason = `v${AUTHORITY_FORMAT} metadata normalization`;
    }
    atomicReplace(paths.state, canonicalJson(state));
    faultPoint("legacy-after-state");
    // Retire the old root names: the generated view replaces bimri.md; other
    // names are removed only while their bytes still equal the preserved copy.
    for (const asset of plan.assets) {
      const current = readBytesOrNull(join(root, asset.name));
      if (
        current !== null && !sameBytes(current, asset.bytes) && !sameBytes(current, headBytes)
      ) {
        throw new BimriError(
          "io",
          `${asset.name} changed before retirement; the preserved copy in .bimri/backups remains authoritative. Run migrate again when quiescent.`,
        );
      }
    }
    atomicReplace(paths.view, headBytes);
    for (const asset of plan.assets) {
      if (asset.name === "bimri.md") continue;
      try {
        Deno.removeSync(join(root, asset.name));
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    syncDir(root);
  });
  const notices = syncViewAndIndex(root);
  const overflow = plan.idMap
    .filter((_, i) => codePointLength(plan.parsed.claims[i].text) > ENTRY_MAX_CHARS)
    .map((m) => m.target_key);
  const counts = plan.parsed.claims;
  const tier1 = counts.filter((c) => c.source_tier === 1).length;
  const tier2 = counts.filter((c) => c.source_tier !== 1).length;
  const patterns = counts.filter((c) => c.source_tier === 3).length;
  const backups = plan.assets.map((a) => `.bimri/backups/${backupName(a)}`);
  return finishReceipt(
    root,
    {
      mode: "legacy-to-v5",
      detected_format: "legacy",
      detected_version: `v${plan.parsed.version}`,
      source_file: plan.primary.name,
      imported: { tier1, tier2, tier3: 0 },
      converted_patterns: patterns,
      inherited_overflow: overflow,
      backup: backups.join(", "),
      migration_record: ".bimri/migrations/legacy-to-v5.json",
      metadata_revision: metadataRevision,
      warnings: notices,
    },
    migratedLines(
      String(plan.parsed.version),
      plan.primary.name,
      { tier1, tier2, tier3: 0, patterns, overlength: overflow.length },
      backups,
      metadataRevision,
      ".bimri/migrations/legacy-to-v5.json",
    ),
  );
}

/**
 * Completes the retirement of old root names after a legacy migration was
 * interrupted once its state was durable (called on a 5.1.0 store). Files are
 * removed only while their bytes equal the copies the migration record names.
 * Returns notices (empty when there was nothing to do).
 */
export function finishLegacyRetirement(root: string): string[] {
  const paths = new StorePaths(root);
  const markerPath = join(paths.folder("migrations"), "legacy-to-v5.json");
  const marker = parseJsonObject(readBytesOrNull(markerPath));
  const state = parseJsonObject(readBytesOrNull(paths.state));
  if (marker === null || state === null || state.legacy_migration !== "legacy-to-v5") return [];
  if (!Array.isArray(marker.assets)) return [];
  // Agents may have committed before anyone reran the migration: the files are
  // still retired (they equal the preserved copies), and the view is the
  // generated V000000 only while that is the head (later heads sync it).
  const atGenesis = state.head_revision === 0;
  const pending = (marker.assets as JsonObject[]).filter((asset) => {
    const name = String(asset.source_path ?? "");
    return name !== "bimri.md" && /^bimri(-backup)?\.md$/i.test(name) &&
      lstatOrNull(join(root, name)) !== null;
  });
  if (pending.length === 0) return [];
  return withEngineLock(paths, () => {
    // Only a record that proves itself (with its byte-exact copies) may retire files.
    requireLegacyLineage(paths, claimOfRaw(state));
    const revision = readBytesOrNull(paths.revision(0));
    if (revision === null || sha256Hex(revision) !== marker.revision_sha256) {
      throw new BimriError(
        "store-corrupt",
        "V000000 does not match the legacy migration record; restore it before retrying. Nothing was changed.",
      );
    }
    for (const asset of pending) {
      const current = readBytesOrNull(join(root, String(asset.source_path)));
      if (current !== null && sha256Hex(current) !== asset.sha256) {
        throw new BimriError(
          "refused",
          `${asset.source_path} changed after the legacy migration; the preserved copy remains authoritative. Ask the owner which memory is current; nothing was changed.`,
        );
      }
    }
    if (atGenesis && !sameBytes(readBytesOrNull(paths.view), revision)) {
      atomicReplace(paths.view, revision);
    }
    for (const asset of pending) {
      try {
        Deno.removeSync(join(root, String(asset.source_path)));
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    syncDir(root);
    return [`retired legacy root files: ${pending.map((a) => a.source_path).join(", ")}`];
  });
}
