/**
 * v1-v3 tiered Markdown -> v5 (protocol 14.1, MIGRATION.md "v1-v3 Direct
 * Migration"). The whole source is parsed and converted, and the result
 * validated, before the first write. Durable steps, in order: exact byte
 * copies of every source under `.bimri/backups/legacy-<name>-<sha256>.bin`;
 * immutable `V000000`; `.bimri/migrations/legacy-to-v5.json`; state; the
 * generated `bimri.md` and retirement of the old root names. Every step
 * reuses byte-identical earlier output, so an interrupted run repeats safely.
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import {
  GENESIS_VIEW,
  linesToText,
  normalizeTags,
  parseView,
  tierInsertionIndex,
} from "../model/hot.ts";
import { KEY, revisionName, TAG } from "../model/ids.ts";
import {
  codePointLength,
  decodeUtf8Strict,
  hasLineBreakOrControl,
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

/** Longest inherited text accepted (the serialized-entry ceiling). */
export const MAX_SERIALIZED_ENTRY_CHARS = 4096;
/** The v5 ceiling for new entry text; longer inherited text is reported as overflow. */
export const ENTRY_MAX_CHARS = 500;

const V3_META =
  /^\[ID:(T2-[0-9]{8}-[0-9]+)\]\s+\[IMP:([1-5])\]\s+\[CREATED:([0-9]{4}-[0-9]{2}-[0-9]{2})\]\s+\[SESSION:([0-9]+)\]\s+\[LAST_USED:([0-9]{4}-[0-9]{2}-[0-9]{2})\]\s+\[LAST_USED_SESSION:([0-9]+)\]\s+\[TAGS:([^\]]*)\]\s+\[W:([0-9]+(?:\.[0-9]+)?)\]$/;
const V1_META =
  /^\[IMPORTANCE:([1-5])\]\s+\[TIMESTAMP:([0-9]{4}-[0-9]{2}-[0-9]{2})\]\s+\[TAGS:([^\]]*)\]\s+\[WEIGHT:([0-9]+(?:\.[0-9]+)?)\]$/;
const PATTERN_META =
  /^\[PATTERN\]\s+\[CONFIDENCE:(EMERGING|DEVELOPING|ESTABLISHED)\]\s+\[OBSERVATIONS:([0-9]+)\]\s+\[TAGS:([^\]]*)\]$/i;

/** One claim read from a legacy file. */
export type LegacyClaim = {
  source_id: string;
  source_tier: 1 | 2 | 3;
  text: string;
  importance: number;
  tags: string[];
};

/** A parsed legacy file. */
export type LegacyParsed = { version: number; sessions: number; claims: LegacyClaim[] };

function refuse(message: string): never {
  throw new BimriError("refused", `${message} BIMRI stopped without mutation.`);
}

function metaMatch(
  line: string,
): { id?: string; imp: number; created: string; lastUsed?: string; tags: string } | null {
  const v3 = V3_META.exec(line);
  if (v3) return { id: v3[1], imp: Number(v3[2]), created: v3[3], lastUsed: v3[5], tags: v3[7] };
  const v1 = V1_META.exec(line);
  if (v1) return { imp: Number(v1[1]), created: v1[2], tags: v1[3] };
  return null;
}

function checkDate(value: string, label: string): void {
  const parsed = new Date(value + "T00:00:00Z");
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== value) {
    refuse(`${label} is invalid: ${value}.`);
  }
}

function claimText(line: string, label: string): string {
  let text = pyStrip(line);
  const bullet = /^(?:[-*+]\s+|[0-9]+[.)]\s+)(.+)$/.exec(text);
  if (bullet) text = pyStrip(bullet[1]);
  if (
    text === "" || ["#", "<!--", "```", "|", ">"].some((p) => text.startsWith(p)) ||
    (text.startsWith("[") && text.includes("]"))
  ) {
    refuse(`${label} is not a parseable one-line memory claim.`);
  }
  if (/\s+->\s+/.test(text)) {
    refuse(
      `${label} contains the reserved v5 pointer delimiter ' -> '; rewrite that claim before migration.`,
    );
  }
  if (hasLineBreakOrControl(text)) refuse(`${label} contains control characters.`);
  if (codePointLength(text) > MAX_SERIALIZED_ENTRY_CHARS) {
    refuse(
      `${label} exceeds ${MAX_SERIALIZED_ENTRY_CHARS} characters and cannot be kept losslessly.`,
    );
  }
  return text;
}

function claimTags(value: string, label: string): string[] {
  const tags = normalizeTags(value.split(","));
  if (tags.length > 12 || tags.some((t) => !TAG.test(t))) refuse(`${label} has invalid tags.`);
  return tags;
}

/** Parses the explicitly versioned v1-v3 grammar without inference (throws on anything else). */
export function parseLegacy(text: string, label: string): LegacyParsed {
  const lines = splitLines(text);
  const headers = lines.map((l) => LEGACY_HEADER.exec(pyStrip(l))).filter((m) => m !== null);
  if (headers.length !== 1) refuse(`${label} must contain exactly one BIMRI v1, v2, or v3 header.`);
  const version = Number(headers[0]![1]);
  const headerLine = pyStrip(headers[0]![0]);
  const sections: Record<1 | 2 | 3, Array<[number, string]>> = { 1: [], 2: [], 3: [] };
  const headings: number[] = [];
  let tier: 0 | 1 | 2 | 3 = 0;
  const names: Record<string, 1 | 2 | 3> = {
    "## tier 1: core intelligence": 1,
    "## tier 2: active context": 2,
    "## tier 3: pattern recognition": 3,
  };
  lines.forEach((raw, index) => {
    const line = pyStrip(raw);
    const low = line.toLowerCase();
    if (low in names) {
      tier = names[low];
      headings.push(tier);
      return;
    }
    if (line === "" || line.startsWith("<!--")) return;
    if (tier === 0 && low === "# bimri: memory file") return;
    if (tier === 0) {
      refuse(`${label} line ${index + 1} contains unparseable content outside a tier.`);
    }
    if (line.startsWith("## ")) {
      refuse(`${label} line ${index + 1} contains an unknown tier heading.`);
    }
    sections[tier as 1 | 2 | 3].push([index + 1, line]);
  });
  if (headings.join(",") !== "1,2,3") {
    refuse(`${label} must contain exactly one ordered Tier 1, Tier 2 and Tier 3 heading.`);
  }
  const claims: LegacyClaim[] = [];
  const seen = new Set<string>();
  const add = (claim: LegacyClaim) => {
    if (seen.has(claim.source_id)) {
      refuse(`${label} contains duplicate source ID ${claim.source_id}.`);
    }
    seen.add(claim.source_id);
    claims.push(claim);
  };
  const pairText = (list: Array<[number, string]>, at: number, number: number) => {
    if (at + 1 >= list.length) refuse(`${label} line ${number} has no following memory claim.`);
    const [textNumber, textLine] = list[at + 1];
    return claimText(textLine, `${label} line ${textNumber}`);
  };
  let ordinal = 0;
  for (let at = 0; at < sections[1].length;) {
    const [number, line] = sections[1][at];
    ordinal++;
    const meta = metaMatch(line);
    if (meta) {
      const text = pairText(sections[1], at, number);
      checkDate(meta.created, `${label} line ${number} date`);
      if (meta.lastUsed) checkDate(meta.lastUsed, `${label} line ${number} last-used date`);
      const tags = claimTags(meta.tags, `${label} line ${number}`);
      add({
        source_id: meta.id ?? `T1-${String(ordinal).padStart(4, "0")}`,
        source_tier: 1,
        text,
        importance: meta.imp,
        tags,
      });
      at += 2;
    } else {
      const text = claimText(line, `${label} line ${number}`);
      add({
        source_id: `T1-${String(ordinal).padStart(4, "0")}`,
        source_tier: 1,
        text,
        importance: 5,
        tags: [],
      });
      at += 1;
    }
  }
  let t2 = 0;
  for (let at = 0; at < sections[2].length; at += 2) {
    const [number, line] = sections[2][at];
    const meta = metaMatch(line);
    if (!meta) refuse(`${label} line ${number} is not a recognized v1-v3 Tier 2 metadata line.`);
    const text = pairText(sections[2], at, number);
    checkDate(meta.created, `${label} line ${number} date`);
    if (meta.lastUsed) checkDate(meta.lastUsed, `${label} line ${number} last-used date`);
    const tags = claimTags(meta.tags, `${label} line ${number}`);
    t2++;
    add({
      source_id: meta.id ?? `T2-LEGACY-${String(t2).padStart(4, "0")}`,
      source_tier: 2,
      text,
      importance: meta.imp,
      tags,
    });
  }
  let patterns = 0;
  for (let at = 0; at < sections[3].length; at += 2) {
    const [number, line] = sections[3][at];
    const meta = PATTERN_META.exec(line);
    if (!meta) refuse(`${label} line ${number} is not a recognized v1-v3 Tier 3 pattern line.`);
    if (at + 1 >= sections[3].length) {
      refuse(`${label} line ${number} has no following pattern claim.`);
    }
    const [textNumber, textLine] = sections[3][at + 1];
    const text = claimText(textLine, `${label} line ${textNumber}`);
    if (Number(meta[2]) < 1) refuse(`${label} line ${number} observations must be positive.`);
    const tags = claimTags(meta[3], `${label} line ${number}`);
    patterns++;
    add({
      source_id: `PATTERN-${String(patterns).padStart(4, "0")}`,
      source_tier: 3,
      text,
      importance: 3,
      tags,
    });
  }
  const sessionsMatch = /\bSessions:\s*([0-9]+)\b/i.exec(headerLine);
  const sessions = sessionsMatch ? Number(sessionsMatch[1]) : 0;
  if (sessions > 999999) refuse(`${label} session count exceeds the v5 run ID space.`);
  return { version, sessions, claims };
}

/** One ID-map row of the migration record. */
export type LegacyMapping = {
  source_id: string;
  source_tier: number;
  target_id: string;
  target_key: string;
  target_tier: number;
  source_text_sha256: string;
};

function legacyKey(version: number, sourceId: string, ordinal: number): string {
  const slug = sourceId.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  let key = `legacy.v${version}.${slug || `entry-${String(ordinal).padStart(4, "0")}`}`;
  if (key.length > 80) {
    key = `legacy.v${version}.entry-${String(ordinal).padStart(4, "0")}-${
      sha256Hex(sourceId).slice(0, 12)
    }`;
  }
  return key;
}

/**
 * Inserts `block` at the end of tier `tier`'s section (before its trailing
 * blank lines), as one block: the 5.0 converter put a blank line before it.
 */
function insertBlock(
  lines: string[],
  tier: 1 | 2,
  block: string[],
  leadingBlank: boolean,
): string[] {
  if (block.length === 0) return lines;
  const at = tierInsertionIndex(lines, tier);
  return [...lines.slice(0, at), ...(leadingBlank ? [""] : []), ...block, ...lines.slice(at)];
}

/**
 * The view template a converter release started V000000 from. Each release
 * wrote the same entries into its own genesis text; a migration record (and
 * the V000000 it names) from any of them stays valid.
 */
export type LegacyConverter = { template: string; leadingBlank: boolean };

/** The converter of this release (the 5.1.0 genesis view, entries packed under each comment). */
export const CURRENT_CONVERTER: LegacyConverter = { template: GENESIS_VIEW, leadingBlank: false };

/** The genesis view of the 5.0 release, whose converter also left a blank line before the entries. */
const V5_0_TEMPLATE = [
  "# BIMRI Memory",
  "",
  "<!-- BIMRI v5 | Generated view. Do not edit directly. -->",
  "<!-- Full history: .bimri/log/ | Revisions: .bimri/revisions/ -->",
  "",
  "## Tier 1: Core Intelligence",
  "",
  "<!-- Confirmed facts, decisions, preferences and rules. Cap: 12. -->",
  "",
  "## Tier 2: Active Context",
  "",
  "<!-- Current work, risks and next actions. Cap: 20. -->",
  "",
  "## Tier 3: Pattern Recognition",
  "",
  "<!-- Evidence-backed patterns. Cap: 8. -->",
  "",
  "<!-- END BIMRI -->",
  "",
].join("\n");

/** 5.0.2 said "Capacity" where 5.1.0 says "Soft target"; 5.0.1 also stamped its own version. */
const V5_0_2_TEMPLATE = GENESIS_VIEW.replaceAll("Soft target", "Capacity");

/**
 * Every converter release a migration record may name (`converter_version`),
 * oldest first; a record without the field was written by one of them.
 */
export const LEGACY_CONVERTERS: ReadonlyMap<string, LegacyConverter> = new Map([
  ["5.0", { template: V5_0_TEMPLATE, leadingBlank: true }],
  ["5.0.1", { template: V5_0_2_TEMPLATE.replace("v5.0.2", "v5.0.1"), leadingBlank: false }],
  ["5.0.2", { template: V5_0_2_TEMPLATE, leadingBlank: false }],
  [AUTHORITY_FORMAT, CURRENT_CONVERTER],
]);

/** Converts parsed claims into the genesis revision text and the deterministic ID map. */
export function convertLegacy(
  parsed: LegacyParsed,
  converter: LegacyConverter = CURRENT_CONVERTER,
): { text: string; idMap: LegacyMapping[] } {
  const tier1: string[] = [];
  const tier2: string[] = [];
  const idMap: LegacyMapping[] = [];
  const keys = new Set<string>();
  parsed.claims.forEach((claim, index) => {
    const ordinal = index + 1;
    const targetId = `R0-E${ordinal}`;
    let key = legacyKey(parsed.version, claim.source_id, ordinal);
    if (keys.has(key)) {
      key = `legacy.v${parsed.version}.entry-${String(ordinal).padStart(4, "0")}-${
        sha256Hex(claim.source_id).slice(0, 8)
      }`;
    }
    if (!KEY.test(key) || key.length > 80) refuse(`legacy key ${key} is not a valid v5 key.`);
    keys.add(key);
    const tags = claim.tags.join(",");
    if (claim.source_tier === 1) {
      tier1.push(
        `[${targetId}] [K:${key}] [fact] [T:working] [SRC:legacy] [${tags}] ${claim.text}`,
      );
    } else {
      const status = claim.source_tier === 3 ? "watch" : "active";
      tier2.push(
        `[${targetId}] [K:${key}] [I:${claim.importance}] [${status}] [T:working] [SRC:legacy] [F:R0] [L:R0] [${tags}] ${claim.text}`,
      );
    }
    idMap.push({
      source_id: claim.source_id,
      source_tier: claim.source_tier,
      target_id: targetId,
      target_key: key,
      target_tier: claim.source_tier === 1 ? 1 : 2,
      source_text_sha256: sha256Hex(claim.text),
    });
  });
  let lines = splitLines(converter.template);
  lines = insertBlock(lines, 1, tier1, converter.leadingBlank);
  lines = insertBlock(lines, 2, tier2, converter.leadingBlank);
  return { text: linesToText(lines), idMap };
}

/** Import counts recorded in the migration record's receipt. */
export function importSummary(parsed: LegacyParsed): JsonObject {
  const lengths = parsed.claims.map((c) => codePointLength(c.text));
  return {
    claims_imported: parsed.claims.length,
    tier1_imported: parsed.claims.filter((c) => c.source_tier === 1).length,
    tier2_imported: parsed.claims.filter((c) => c.source_tier !== 1).length,
    patterns_converted_to_watches: parsed.claims.filter((c) => c.source_tier === 3).length,
    inherited_overlength_claims: lengths.filter((n) => n > ENTRY_MAX_CHARS).length,
    longest_claim_chars: Math.max(0, ...lengths),
  };
}

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
