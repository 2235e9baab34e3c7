/**
 * v4 engine state -> v5 (protocol 14.2, MIGRATION.md "v4 Migration").
 *
 * Historical IDs, logs, archives, inbox and pattern evidence stay where they
 * are; recognized v4 hot lines gain a deterministic `legacy.*` key,
 * `SRC:legacy` and `T:working`. Everything is converted and validated before
 * the first write. Durable steps: backups of the old state and hot file under
 * `.bimri/backups/`; immutable `V000000`; resumable
 * `.bimri/migrations/v4-to-v5.json`; the v5 state (last authority write);
 * the generated `bimri.md`.
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { normalizeTags, parseView } from "../model/hot.ts";
import { revisionName } from "../model/ids.ts";
import {
  codePointLength,
  decodeUtf8Strict,
  pyStrip,
  sha256Hex,
  splitLines,
  utf8,
} from "../model/text.ts";
import { now, utcTimestamp } from "../model/time.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import type { JsonObject } from "../model/json.ts";
import { faultPoint } from "../store/fault.ts";
import {
  atomicReplace,
  createExclusive,
  listNames,
  lstatOrNull,
  readBytesOrNull,
} from "../store/files.ts";
import { withEngineLock } from "../store/lock.ts";
import { isUnclaimedLegacyRootName } from "../store/legacy_root.ts";
import { StorePaths } from "../store/paths.ts";
import { ensureLayout } from "../store/store.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import {
  DEFAULT_STATE_FIELDS,
  LIMIT_FIELDS,
  parseJsonObject,
  pointerInside,
  sameBytes,
  validateActivatedState,
} from "./common.ts";
import { isV4State } from "../records/store_format.ts";
import { finishReceipt, syncViewAndIndex } from "./finish.ts";
import { migratedLines, type MigrationReceipt } from "./receipt.ts";
import { selectMetadataNormalization } from "./v50.ts";

const V4_T1 =
  /^\[(R\d+-E\d+)\]\s+\[(decision|fact|pref|rule)\]\s+\[([^\]]*)\]\s+(.+?)(?:\s+->\s+(\S+))?$/;
const V4_T2 =
  /^\[(R\d+-E\d+)\]\s+\[I:([1-5])\]\s+\[(active|watch|closed|decision)\]\s+\[F:(R\d+)\]\s+\[L:(R\d+)\]\s+\[([^\]]*)\]\s+(.+?)(?:\s+->\s+(\S+))?$/;
const V4_T3 =
  /^\[(P\d+)\]\s+\[(emerging|developing|established)\]\s+\[obs:(\d+)\]\s+\[ev:([^\]]*)\]\s+(.+?)\s+\|\s+Falsify:\s+(.+)$/;
const V5_T1 = /^\[(R\d+-E\d+)\]\s+\[K:/;
const V5_T3 = /^\[(P\d+)\]\s+\[K:/;

const GENERATED_HEADER = "<!-- BIMRI v5.0.2 | Generated view. Do not edit directly. -->";
const HISTORY_LINE = "<!-- Full history: .bimri/log/ | Revisions: .bimri/revisions/ -->";

function tagsOf(value: string, id: string): string {
  const tags = normalizeTags(value.split(","));
  if (tags.length > 12 || tags.some((t) => !/^[a-z0-9][a-z0-9._-]{0,39}$/.test(t))) {
    throw new BimriError(
      "refused",
      `v4 entry ${id} has tags that cannot become v5 tags; BIMRI stopped without mutation.`,
    );
  }
  return tags.join(",");
}

/** The header the 5.0 converter wrote; a V000000 it left keeps its bytes (the head is normalized). */
const HISTORICAL_HEADER = "<!-- BIMRI v5 | Generated view. Do not edit directly. -->";

/** Converts a v4 hot file line by line (unrecognized lines are kept and later validated). */
export function convertV4View(text: string, header: string = GENERATED_HEADER): string {
  let tier = 0;
  const out = splitLines(text).map((line) => {
    const stripped = pyStrip(line);
    const low = stripped.toLowerCase();
    if (stripped.startsWith("<!-- BIMRI v4")) return header;
    if (stripped.startsWith("<!-- Engine:")) return HISTORY_LINE;
    if (low.startsWith("## tier 1")) tier = 1;
    else if (low.startsWith("## tier 2")) tier = 2;
    else if (low.startsWith("## tier 3")) tier = 3;
    if (tier === 1 && !V5_T1.test(stripped)) {
      const m = V4_T1.exec(stripped);
      if (m) {
        const ptr = m[5] ? ` -> ${m[5]}` : "";
        return `[${m[1]}] [K:legacy.${m[1].toLowerCase()}] [${m[2]}] [T:working] [SRC:legacy] [${
          tagsOf(m[3], m[1])
        }] ${m[4]}${ptr}`;
      }
    } else if (tier === 2 && !V5_T1.test(stripped)) {
      const m = V4_T2.exec(stripped);
      if (m) {
        const status = m[3] === "decision" ? "watch" : m[3];
        const ptr = m[8] ? ` -> ${m[8]}` : "";
        return `[${m[1]}] [K:legacy.${m[1].toLowerCase()}] [I:${
          m[2]
        }] [${status}] [T:working] [SRC:legacy] [F:${m[4]}] [L:${m[5]}] [${tagsOf(m[6], m[1])}] ${
          m[7]
        }${ptr}`;
      }
    } else if (tier === 3 && !V5_T3.test(stripped)) {
      const m = V4_T3.exec(stripped);
      if (m) {
        return `[${m[1]}] [K:legacy.pattern-${m[1].toLowerCase()}] [${m[2]}] [obs:${m[3]}] [ev:${
          m[4]
        }] ${m[5]} | Falsify: ${m[6]}`;
      }
    }
    return line;
  });
  return out.join("\n") + "\n";
}

/**
 * The V000000 text to write or continue: the current conversion, unless an
 * existing V000000 is the 5.0 converter's conversion of the same v4 file
 * (only its header differs), which is kept byte for byte.
 */
function chooseV4Conversion(text: string, existing: Uint8Array | null): string {
  const current = convertV4View(text);
  if (existing === null || sameBytes(existing, utf8(current))) return current;
  const historical = convertV4View(text, HISTORICAL_HEADER);
  return sameBytes(existing, utf8(historical)) ? historical : current;
}

function refuse(message: string): never {
  throw new BimriError(
    "refused",
    `${message} BIMRI stopped without mutation; the v4 files are unchanged.`,
  );
}

function backupStamp(): string {
  const d = now();
  const p = (n: number) => String(n).padStart(2, "0");
  const random = Array.from(
    crypto.getRandomValues(new Uint8Array(4)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${
    p(d.getMinutes())
  }${p(d.getSeconds())}-${random}`;
}

function backupFile(paths: StorePaths, rel: unknown, label: string): Uint8Array {
  if (typeof rel !== "string" || !/^\.bimri\/backups\/[^/\\]+$/.test(rel) || rel.endsWith("/..")) {
    refuse(`the v4 migration record has an invalid ${label} path.`);
  }
  const full = join(paths.root, rel);
  const info = lstatOrNull(full);
  if (!info || info.isSymlink || !info.isFile) {
    refuse(`the v4 migration ${label} ${rel} is missing or unsafe.`);
  }
  return Deno.readFileSync(full);
}

function reusableBackup(paths: StorePaths, prefix: string, bytes: Uint8Array): string | null {
  for (const name of listNames(paths.folder("backups")).reverse()) {
    if (!name.startsWith(prefix)) continue;
    const full = join(paths.folder("backups"), name);
    const info = lstatOrNull(full);
    if (info?.isFile && !info.isSymlink && sameBytes(readBytesOrNull(full), bytes)) {
      return `.bimri/backups/${name}`;
    }
  }
  return null;
}

/**
 * After a v4 migration interrupted once its state was durable, `bimri.md`
 * still holds the v4 source the record names: regenerate it from the head
 * instead of treating it as a manual edit. Returns notices.
 */
export function finishV4View(root: string): string[] {
  const paths = new StorePaths(root);
  const marker = parseJsonObject(
    readBytesOrNull(join(paths.folder("migrations"), "v4-to-v5.json")),
  );
  const view = readBytesOrNull(paths.view);
  if (marker === null || view === null || sha256Hex(view) !== marker.source_hot_hash) return [];
  return withEngineLock(paths, () => {
    const state = parseJsonObject(readBytesOrNull(paths.state));
    if (state === null || state.bimri_version !== AUTHORITY_FORMAT) return [];
    const head = readBytesOrNull(paths.revision(Number(state.head_revision)));
    if (head === null || sha256Hex(head) !== state.head_hash) return [];
    if (!sameBytes(readBytesOrNull(paths.view), view)) return [];
    atomicReplace(paths.view, head);
    return ["bimri.md still held the migrated v4 source; it was regenerated from the head."];
  });
}

/**
 * Refuses to migrate while a v4 agent may still be writing: a v4 writer takes
 * no v5 lock, so converting its store underneath it would lose what it writes
 * next. The v4 state's current run (or, without one, every run log) must show
 * its `[CLOSED:` line; a current run without a log cannot prove it closed.
 * The reference applies the same rule before any v4 upgrade.
 */
export function ensureV4Quiescent(root: string): void {
  const paths = new StorePaths(root);
  const stateBytes = readBytesOrNull(paths.state);
  const old: JsonObject = stateBytes === null
    ? { bimri_version: "4.0" }
    : parseJsonObject(stateBytes) ?? refuse("v4 state.json is not a JSON object.");
  if (!isV4State(old)) return;
  const closedIn = (run: string, path: string): boolean => {
    const info = lstatOrNull(path);
    if (info?.isSymlink) refuse(`the v4 run log of ${run} cannot be a symbolic link.`);
    const text = decodeUtf8Strict(Deno.readFileSync(path));
    if (text === null) refuse(`the v4 run log of ${run} is not valid UTF-8.`);
    return text.split(/\r\n|\r|\n/).some((line) => pyStrip(line).startsWith(`[CLOSED:${run}`));
  };
  const stop = (run: string) =>
    refuse(
      `v4 run ${run} appears active; a v4 writer does not participate in the v5 lock. Stop or close every v4 agent, then retry the migration.`,
    );
  const current = old.current_run_id;
  if (current === undefined || current === null) {
    const runs = listNames(paths.folder("log"))
      .map((name) => /^R([0-9]+)\.md$/.exec(name))
      .filter((m): m is RegExpExecArray => m !== null)
      .sort((a, b) => Number(b[1]) - Number(a[1]));
    for (const m of runs) {
      const run = `R${m[1]}`;
      if (!closedIn(run, paths.folder(`log/${m[0]}`))) stop(run);
    }
    return;
  }
  if (typeof current !== "string" || !/^R[0-9]+$/.test(current)) {
    refuse("the v4 state has an invalid current run ID; repair it before migrating.");
  }
  if (current === "R000") return;
  const log = paths.folder(`log/${current}.md`);
  if (lstatOrNull(log) === null || !closedIn(current, log)) stop(current);
}

/** Migrates a v4 store at `root` to v5.1.0 and returns the receipt. */
export function migrateV4(root: string): MigrationReceipt {
  const paths = new StorePaths(root);
  for (const name of listNames(root)) {
    if (isUnclaimedLegacyRootName(name)) {
      refuse(
        `structured v4 memory coexists with an unclaimed legacy root file ${name}; ask the owner which memory is authoritative.`,
      );
    }
  }
  const hotInfo = lstatOrNull(paths.view);
  if (!hotInfo) {
    refuse(
      "v4 state exists but bimri.md is missing; BIMRI stopped without creating replacement memory. Restore bimri.md from a backup first.",
    );
  }
  if (hotInfo.isSymlink || !hotInfo.isFile) {
    refuse("v4 bimri.md must be a regular file, not a link.");
  }
  const hotBytes = Deno.readFileSync(paths.view);
  const hotText = decodeUtf8Strict(hotBytes);
  if (hotText === null) refuse("v4 bimri.md is not valid UTF-8.");
  const stateInfo = lstatOrNull(paths.state);
  if (stateInfo && (stateInfo.isSymlink || !stateInfo.isFile)) {
    refuse("v4 state.json is not a regular file.");
  }
  const stateBytes = stateInfo ? Deno.readFileSync(paths.state) : null;
  const old: JsonObject = stateBytes === null
    ? {}
    : parseJsonObject(stateBytes) ?? refuse("v4 state.json is not a JSON object.");
  if (stateBytes !== null && !isV4State(old)) refuse("state.json is not a v4 state.");
  ensureV4Quiescent(root);

  const existingRevision = readBytesOrNull(paths.revision(0));
  const converted = chooseV4Conversion(hotText, existingRevision);
  const runNumbers = listNames(paths.folder("log"))
    .map((n) => /^R([0-9]+)\.md$/.exec(n))
    .filter((m) => m !== null)
    .map((m) => Number(m![1]));
  const state: JsonObject = structuredClone(DEFAULT_STATE_FIELDS) as JsonObject;
  for (
    const field of ["project_id", "cadence_class", "prune_policy", "flag_threshold", "run_dates"]
  ) {
    if (field in old) state[field] = old[field];
  }
  for (const field of LIMIT_FIELDS) if (field in old) state[field] = old[field];
  const oldRunCount = old.run_count ?? 0;
  if (typeof oldRunCount !== "number" || !Number.isInteger(oldRunCount) || oldRunCount < 0) {
    refuse("v4 state run_count must be a non-negative integer.");
  }
  state.run_count = Math.max(oldRunCount, 0, ...runNumbers);
  state.head_hash = sha256Hex(utf8(converted));
  const typed = validateActivatedState(state, "4");
  const view = parseView(converted, Number.MAX_SAFE_INTEGER);
  const problems = [...view.errors];
  for (const { entry } of view.entries) {
    if (entry.tier !== 3 && entry.pointer && !pointerInside(root, entry.pointer)) {
      problems.push(`${entry.id} pointer escapes the BIMRI project`);
    }
  }
  if (problems.length > 0) {
    refuse(`v4 memory could not be converted safely: ${problems.join("; ")}.`);
  }
  const normalized = selectMetadataNormalization(converted, typed);
  const revisionBytes = utf8(converted);
  if (existingRevision !== null && !sameBytes(existingRevision, revisionBytes)) {
    refuse(
      "revision V000000 conflicts with the deterministic v4 migration; neither version was overwritten.",
    );
  }
  const markerPath = join(paths.folder("migrations"), "v4-to-v5.json");
  const marker = parseJsonObject(readBytesOrNull(markerPath));
  if (readBytesOrNull(markerPath) !== null) {
    if (marker === null || marker.migration !== "v4-to-v5") {
      refuse("the v4 migration record is damaged.");
    }
    if (marker.source_hot_hash !== sha256Hex(hotBytes)) {
      refuse("the v4 migration record does not match the current v4 bimri.md.");
    }
    if (!sameBytes(backupFile(paths, marker.backup_hot, "hot backup"), hotBytes)) {
      refuse("the v4 migration hot backup does not match the current v4 bimri.md.");
    }
    if (
      stateBytes !== null &&
      !sameBytes(backupFile(paths, marker.backup_state, "state backup"), stateBytes)
    ) {
      refuse("the v4 migration state backup does not match the current v4 state.");
    }
  }
  // A V000000 without a record (a run interrupted between the two, or the 5.0
  // converter's) is reused: it equals the deterministic conversion, checked above.

  ensureLayout(paths);
  let metadataRevision: string | null = null;
  let backups: string[] = [];
  withEngineLock(paths, () => {
    if (
      !sameBytes(readBytesOrNull(paths.view), hotBytes) ||
      !sameBytes(readBytesOrNull(paths.state), stateBytes)
    ) {
      refuse("v4 files changed while the migration was preparing; retry when quiescent.");
    }
    let record = marker;
    if (record === null) {
      // A run interrupted before its record may have left exact copies: reuse them.
      const stamp = backupStamp();
      const hotBackup = reusableBackup(paths, "bimri-v4.md-", hotBytes) ??
        `.bimri/backups/bimri-v4.md-${stamp}`;
      if (readBytesOrNull(join(root, hotBackup)) === null) {
        createExclusive(join(root, hotBackup), hotBytes);
      }
      let stateBackup: string | null = null;
      if (stateBytes !== null) {
        stateBackup = reusableBackup(paths, "state-v4.json-", stateBytes) ??
          `.bimri/backups/state-v4.json-${stamp}`;
        if (readBytesOrNull(join(root, stateBackup)) === null) {
          createExclusive(join(root, stateBackup), stateBytes);
        }
      }
      faultPoint("v4-after-backups");
      if (existingRevision === null) createExclusive(paths.revision(0), revisionBytes);
      record = {
        migration: "v4-to-v5",
        completed_at: utcTimestamp(),
        source_hot_hash: sha256Hex(hotBytes),
        source_state_hash: stateBytes === null ? null : sha256Hex(stateBytes),
        backup_state: stateBackup,
        backup_state_sha256: stateBytes === null ? null : sha256Hex(stateBytes),
        backup_hot: hotBackup,
        backup_hot_sha256: sha256Hex(hotBytes),
      };
      atomicReplace(markerPath, canonicalJson(record));
    } else if (existingRevision === null) {
      createExclusive(paths.revision(0), revisionBytes);
    }
    faultPoint("v4-after-marker");
    backups = [record.backup_state, record.backup_hot].filter((b): b is string =>
      typeof b === "string"
    );
    let headBytes = revisionBytes;
    if (normalized !== null) {
      headBytes = utf8(normalized);
      const existing = readBytesOrNull(paths.revision(1));
      if (existing !== null && !sameBytes(existing, headBytes)) {
        throw new BimriError(
          "store-unsafe",
          "V000001 conflicts with the v5.1.0 metadata revision; nothing was overwritten.",
        );
      }
      if (existing === null) createExclusive(paths.revision(1), headBytes);
      state.head_revision = 1;
      state.head_hash = sha256Hex(headBytes);
      state.last_revision_reason = `v${AUTHORITY_FORMAT} metadata normalization`;
      metadataRevision = revisionName(1);
    }
    atomicReplace(paths.state, canonicalJson(state));
    faultPoint("v4-after-state");
    atomicReplace(paths.view, headBytes);
  });
  const notices = syncViewAndIndex(root);
  const counts = [0, 0, 0];
  const overflow: string[] = [];
  for (const { entry } of view.entries) {
    counts[entry.tier - 1]++;
    const inherited = entry.tier === 3 || entry.source === "legacy";
    if (inherited && codePointLength(entry.text) > typed.entry_max_chars) overflow.push(entry.key);
  }
  const version = typeof old.bimri_version === "string" || typeof old.bimri_version === "number"
    ? String(old.bimri_version)
    : "4.0";
  return finishReceipt(
    root,
    {
      mode: "v4-to-v5",
      detected_format: "v4",
      detected_version: `v${version}`,
      source_file: "bimri.md",
      imported: { tier1: counts[0], tier2: counts[1], tier3: counts[2] },
      converted_patterns: counts[2],
      inherited_overflow: overflow,
      backup: backups.join(", "),
      migration_record: ".bimri/migrations/v4-to-v5.json",
      metadata_revision: metadataRevision,
      warnings: notices,
    },
    migratedLines(
      version,
      "bimri.md",
      {
        tier1: counts[0],
        tier2: counts[1],
        tier3: counts[2],
        patterns: counts[2],
        overlength: overflow.length,
      },
      backups,
      metadataRevision,
      ".bimri/migrations/v4-to-v5.json",
    ),
  );
}
