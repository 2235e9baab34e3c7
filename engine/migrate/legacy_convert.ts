/**
 * v1-v3 memory text -> the v5 genesis revision: parses the explicitly
 * versioned v1-v3 grammar without inference and converts its claims into the
 * V000000 text and the deterministic ID map of each converter release (pure).
 */
import { BimriError } from "../errors.ts";
import { GENESIS_VIEW, linesToText, normalizeTags, tierInsertionIndex } from "../model/hot.ts";
import { KEY, TAG } from "../model/ids.ts";
import {
  codePointLength,
  hasLineBreakOrControl,
  pyStrip,
  sha256Hex,
  splitLines,
} from "../model/text.ts";
import type { JsonObject } from "../model/json.ts";
import { LEGACY_HEADER } from "../records/store_format.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";

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

/** Refuses a legacy source or conversion: nothing was written. */
export function refuse(message: string): never {
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
