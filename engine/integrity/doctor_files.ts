/**
 * Doctor's checks of the store's files: layout and unsafe nodes, revisions,
 * the head and its view, archive rows, cold-current bindings, run logs,
 * recovery evidence, leftover temporary files and the index shape.
 */
import { isV4ArchiveRow } from "../model/archive_row.ts";
import { isAbsolute, normalize } from "node:path";
import { type MemoryEntry, parseAnyEntry, parseEntryForTier } from "../model/hot.ts";
import { decodeUtf8Strict, lineHash, sha256Hex } from "../model/text.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../model/json.ts";
import { listNames, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { STORE_FOLDERS } from "../store/paths.ts";
import { coldRecordOf } from "../model/state.ts";
import { revisionName } from "../model/ids.ts";
import { decodeUtf8Fast, isUtf8Bytes, nativeSha256 } from "./bulk_read.ts";
import { type AuthorityKind, receiptProblems } from "./schemas.ts";
import { AuditState, type KeyLine, keyLineOf } from "./doctor_state.ts";

/** Folders that may contain only regular files. */
const FLAT_FOLDERS = [
  "proposals",
  "decisions",
  "conflicts",
  "resolutions",
  "revisions",
  "archive",
  "recovery",
];

const ARCHIVE_ROW =
  /^\[ARCHIVED:([0-9]{4}-[0-9]{2}-[0-9]{2})\] \[BY:(R[0-9]{6}-Q[0-9]{3})\] \[(replaced|closed|cooled)\] (.+)$/;

function isTemporary(name: string): boolean {
  return name.startsWith(".bimri-tmp-") || name.startsWith(".bimri-new-");
}

function readJsonObject(path: string): JsonObject | null {
  const bytes = readBytesOrNull(path);
  if (bytes === null) return null;
  const text = decodeUtf8Strict(bytes);
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as JsonValue;
    return isJsonObject(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * True when every non-empty line of index.tsv has exactly eight tab-separated
 * columns. Counted on the bytes (LF and TAB never occur inside a multi-byte
 * UTF-8 sequence): the index has tens of thousands of rows.
 */
function everyRowHasEightColumns(bytes: Uint8Array): boolean {
  const LF = 10;
  const TAB = 9;
  for (let start = 0; start < bytes.length;) {
    let end = bytes.indexOf(LF, start);
    if (end < 0) end = bytes.length;
    if (end > start) {
      let tabs = 0;
      for (let i = bytes.indexOf(TAB, start); i >= 0 && i < end; i = bytes.indexOf(TAB, i + 1)) {
        if (++tabs > 7) return false;
      }
      if (tabs !== 7) return false;
    }
    start = end + 1;
  }
  return true;
}

/** True when a line's pointer stays inside the project root. */
function pointerContained(pointer: string | null): boolean {
  if (pointer === null) return true;
  if (isAbsolute(pointer) || /^[A-Za-z]:/.test(pointer) || pointer.includes("\\")) return false;
  const normalized = normalize(pointer);
  return normalized !== ".." && !normalized.startsWith("../");
}

function entryPointer(entry: MemoryEntry): string | null {
  return entry.tier === 3 ? null : entry.pointer;
}

/** The audits of the store's files, on the state every check shares. */
export abstract class FileAudit extends AuditState {
  protected checkLayout(): void {
    for (const folder of STORE_FOLDERS) {
      const info = lstatOrNull(this.paths.folder(folder));
      // The reference's audit-manifests cache folder may be absent (v5.0.x stores).
      if (!info && folder === "audit-manifests") continue;
      if (info?.isSymlink) {
        // The reference's words: a redirected folder would let writes escape the store.
        this.errors.push(`.bimri/${folder} cannot be a symbolic link.`);
      } else if (!info || !info.isDirectory) {
        this.errors.push(`.bimri/${folder} is missing or unsafe.`);
      }
    }
    for (
      const [path, label] of [
        [this.paths.view, "bimri.md"],
        [this.paths.state, ".bimri/state.json"],
        [this.paths.index, ".bimri/index.tsv"],
        [this.paths.lock, ".bimri/engine.lock"],
      ]
    ) {
      const info = lstatOrNull(path);
      if (info && (info.isSymlink || !info.isFile)) {
        this.errors.push(`${label} is a symbolic link or not a regular file.`);
      } else if (!info && path === this.paths.lock) {
        // A warning, not an error: a store checked out of version control has
        // none (it is machine-local), and the first writing command creates it.
        this.warnings.push(
          ".bimri/engine.lock is missing; the next writing command (or doctor without --read-only) creates it.",
        );
      }
    }
    for (const folder of FLAT_FOLDERS) {
      for (const info of this.entries(folder)) {
        const name = info.name;
        if (info.isSymlink || !info.isFile) {
          // Authority folders are reported with their record by the authority checks.
          if (
            !["proposals", "decisions", "conflicts", "resolutions"].includes(folder) ||
            !/^(R[0-9]{6}-Q[0-9]{3}|C[0-9]{6})\.json$/.test(name)
          ) {
            this.errors.push(
              `.bimri/${folder}/${name} is not a regular file (symbolic link or folder).`,
            );
          }
        } else if (isTemporary(name)) {
          // Reported with every other leftover by reportTemporaryFiles.
        } else if (
          ["proposals", "decisions", "conflicts", "resolutions"].includes(folder) &&
          !/^(R[0-9]{6}-Q[0-9]{3}|C[0-9]{6})\.json$/.test(name)
        ) {
          // The reference's wording for a JSON file no record ID names.
          this.warnings.push(
            name.endsWith(".json")
              ? `ignored non-authority JSON filename in ${folder.slice(0, -1)} directory: ${name}.`
              : `unexpected file .bimri/${folder}/${name}.`,
          );
        }
      }
    }
    for (const info of this.entries("log")) {
      if (info.isSymlink || !info.isFile) {
        this.errors.push(`.bimri/log/${info.name} is not a regular file.`);
      }
    }
    this.collectTemporaryFiles();
  }

  /**
   * Notes the leftovers of interrupted writes (`.bimri-tmp-*` of an atomic
   * replace, `.bimri-new-*` of an exclusive create) wherever a write can leave
   * one: the project root (bimri.md), `.bimri/` (state.json, index.tsv) and
   * every store folder, as the reference looks. Any entry type counts. They
   * are collected here, while the folder listings are at hand, and reported
   * last (reportTemporaryFiles).
   */
  protected collectTemporaryFiles(): void {
    for (const [path, prefix] of [[this.paths.root, ""], [this.paths.dir, ".bimri/"]]) {
      try {
        for (const entry of Deno.readDirSync(path)) {
          if (isTemporary(entry.name)) this.temporaryFiles.push(prefix + entry.name);
        }
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    for (const folder of STORE_FOLDERS) {
      for (const info of this.entries(folder)) {
        if (isTemporary(info.name)) this.temporaryFiles.push(`.bimri/${folder}/${info.name}`);
      }
    }
  }

  /** Warns about each leftover temporary file, in path order (they never fail the audit). */
  protected reportTemporaryFiles(): void {
    const parts = (path: string) => path.split("/");
    const byParts = (a: string, b: string): number => {
      const [x, y] = [parts(a), parts(b)];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
      }
      return x.length - y.length;
    };
    for (const path of this.temporaryFiles.sort(byParts)) {
      this.warnings.push(`abandoned temporary file ${path}.`);
    }
  }

  protected readRevisions(): void {
    // Streamed: each revision is read, hashed and parsed once, answers the key
    // lookups queued for it by prepareAuthority, and is dropped (only the head is kept).
    const folder = this.paths.folder("revisions");
    for (const info of this.entries("revisions")) {
      const name = info.name;
      const match = /^V([0-9]{6})\.md$/.exec(name);
      if (!match) {
        if (!isTemporary(name)) this.warnings.push(`unexpected file .bimri/revisions/${name}.`);
        continue;
      }
      if (!info.isFile || info.isSymlink) continue;
      const n = Number(match[1]);
      // A view into the reused buffer: hashed and parsed at once (the head is copied).
      const bytes = this.reader.read(`${folder}/${name}`);
      if (bytes === null) continue;
      const view = this.parser.parse(bytes);
      if (view === null) this.errors.push(`revision ${name} is not valid UTF-8.`);
      else {
        for (const problem of view.errors) {
          this.errors.push(`revision ${revisionName(n)}: ${problem}.`);
        }
      }
      this.revisionHashes.set(n, nativeSha256(bytes));
      const wanted = this.queries.get(n);
      if (wanted && view) {
        const found = new Map<string, KeyLine>();
        for (const key of wanted) found.set(key, null);
        for (const e of view.entries) {
          if (wanted.includes(e.entry.key)) {
            found.set(e.entry.key, keyLineOf(e.raw, e.entry));
          }
        }
        this.answers.set(n, found);
      }
      if (n === this.state.head_revision) {
        // The parser reuses its buffers and lists: the head keeps copies.
        const kept = view && { entries: [...view.entries], errors: view.errors };
        this.head = { bytes: bytes.slice(), view: kept };
      }
    }
  }

  protected checkHead(): void {
    const head = this.head;
    const headName = revisionName(this.state.head_revision);
    if (!head) {
      this.errors.push(`accepted head revision is missing (${headName}).`);
      return;
    }
    if (this.revisionHashes.get(this.state.head_revision) !== this.state.head_hash) {
      this.errors.push("accepted head revision does not match state.head_hash.");
    }
    // Inherited overflow stays readable; the owner is told a repair is due (the reference's words).
    const repair = "bounded-memory repair needed: ";
    if (head.bytes.length > this.state.hot_max_bytes) {
      this.warnings.push(
        `${repair}hot memory exceeds byte cap: ${head.bytes.length}/${this.state.hot_max_bytes}`,
      );
    }
    if (head.view) {
      const ids = new Set<string>();
      for (const { entry } of head.view.entries) {
        ids.add(entry.id);
        const legacy = entry.tier !== 3 && entry.source === "legacy";
        if (legacy || entry.tier === 3) {
          // Python's len: code points, not UTF-16 units.
          const length = [...entry.text].length;
          if (length > this.state.entry_max_chars) {
            this.warnings.push(
              `${repair}${entry.id} inherited ${
                legacy ? "legacy" : "v4 pattern"
              } text exceeds active entry cap: ${length}/${this.state.entry_max_chars} characters`,
            );
          }
        }
        if (coldRecordOf(this.state, entry.key)) {
          this.errors.push(`key ${entry.key} is current both hot and cold-current.`);
        }
        if (!pointerContained(entryPointer(entry))) {
          this.errors.push(`entry ${entry.id}: pointer escapes the BIMRI project.`);
        }
      }
      for (const cold of Object.values(this.state.cold_current)) {
        if (ids.has(cold.entry_id)) {
          this.errors.push(`entry ID ${cold.entry_id} is current both hot and cold-current.`);
        }
        ids.add(cold.entry_id);
      }
    }
    const viewBytes = this.reader.read(this.paths.view);
    if (viewBytes === null) {
      // An error, as the reference reports it: the view agents read is gone.
      this.errors.push(
        "bimri.md is missing; run doctor without --read-only (or any command) to regenerate it from the head.",
      );
    } else if (nativeSha256(viewBytes) !== nativeSha256(head.bytes)) {
      this.errors.push(
        "generated bimri.md differs from the accepted head; recovery is needed and read-only doctor left the file unchanged.",
      );
    }
  }

  protected readArchive(): void {
    const folder = this.paths.folder("archive");
    for (const name of listNames(folder)) {
      if (!/^[0-9]{4}-[0-9]{2}\.md$/.test(name)) {
        if (!isTemporary(name)) this.warnings.push(`unexpected file .bimri/archive/${name}.`);
        continue;
      }
      const bytes = this.reader.read(`${folder}/${name}`);
      const text = bytes === null ? null : decodeUtf8Fast(bytes);
      if (text === null) {
        this.errors.push(`archive .bimri/archive/${name} is not valid UTF-8.`);
        continue;
      }
      text.split("\n").forEach((line, index) => {
        if (!line.startsWith("[ARCHIVED:") || isV4ArchiveRow(line)) return;
        const match = ARCHIVE_ROW.exec(line.replace(/\r$/, ""));
        if (!match || !parseAnyEntry(match[4]) || !name.startsWith(match[1].slice(0, 7))) {
          this.errors.push(`archive .bimri/archive/${name} line ${index + 1} is malformed.`);
          return;
        }
        const row = { date: match[1], by: match[2], reason: match[3], raw: match[4] };
        const list = this.archiveBy.get(row.by) ?? [];
        list.push(row);
        this.archiveBy.set(row.by, list);
      });
    }
  }

  protected checkCold(): void {
    for (const [key, cold] of Object.entries(this.state.cold_current)) {
      const entry = parseEntryForTier(cold.raw_line, 2);
      if (!entry || entry.key !== key || entry.id !== cold.entry_id) {
        this.errors.push(
          `cold_current.${key} raw_line is not a Tier 2 line of that key and entry.`,
        );
        continue;
      }
      if (lineHash(cold.raw_line) !== cold.line_hash) {
        this.errors.push(`cold_current.${key} line_hash does not match raw_line.`);
      }
      if (!pointerContained(entry.tier === 3 ? null : entry.pointer)) {
        this.errors.push(`cold_current.${key}: pointer escapes the BIMRI project.`);
      }
      const bound = (this.archiveBy.get(cold.archived_by) ?? []).filter((r) =>
        r.date === cold.archived_on && r.by === cold.archived_by && r.reason === "cooled" &&
        r.raw === cold.raw_line
      );
      if (bound.length !== 1) {
        this.errors.push(
          `cold_current.${key} is not bound to exactly one immutable cooled archive row (found ${bound.length}).`,
        );
      }
    }
  }

  protected checkLogs(): void {
    for (const run of Object.keys(this.state.active_runs)) {
      const bytes = readBytesOrNull(this.paths.log(run));
      if (bytes === null) {
        this.errors.push(`active run ${run} has no log.`);
        continue;
      }
      const text = decodeUtf8Strict(bytes);
      if (text === null || !text.startsWith(`# Run ${run} |`)) {
        this.errors.push(`log of active run ${run} does not start with its header.`);
      }
    }
  }
  protected checkEvidenceFile(relative: string, owner: string): void {
    const match = /^\.bimri\/recovery\/([A-Za-z0-9._-]+)$/.exec(relative);
    if (!match) {
      this.errors.push(`${owner} names recovery evidence outside .bimri/recovery: ${relative}.`);
      return;
    }
    const path = this.paths.folder("recovery") + "/" + match[1];
    const info = lstatOrNull(path);
    const bytes = info?.isFile && !info.isSymlink ? readBytesOrNull(path) : null;
    // A restore receipt's evidence is worded as the reference words it.
    const receipt = owner.startsWith("restore receipt ");
    if (bytes === null) {
      this.errors.push(
        receipt
          ? `${owner}: recovery evidence is damaged: authority restore receipt recovery copy is missing (${relative}).`
          : `${owner} names missing recovery evidence ${relative}.`,
      );
      return;
    }
    const hash = /-([0-9a-f]{64})\.(md|bin|json)$/.exec(match[1]);
    if (hash && sha256Hex(bytes) !== hash[1]) {
      this.errors.push(
        receipt
          ? `${owner}: recovery evidence is damaged: authority restore receipt recovery hash does not match (${relative}).`
          : `recovery evidence ${relative} was altered (its hash no longer matches its name).`,
      );
    }
  }

  protected checkRecovery(): void {
    const folder = this.paths.folder("recovery");
    for (const name of listNames(folder)) {
      const info = lstatOrNull(`${folder}/${name}`);
      if (!info?.isFile || info.isSymlink || isTemporary(name)) continue;
      const relative = `.bimri/recovery/${name}`;
      const manual = /^manual-hot-([0-9a-f]{64})\.(md|bin)$/.exec(name);
      const evidence =
        /^authority-(proposal|decision|conflict|resolution)-([A-Z0-9-]+)-([0-9a-f]{64})\.json$/
          .exec(name);
      const receipt =
        /^authority-restore-(proposal|decision|conflict|resolution)-([A-Z0-9-]+)-([0-9a-f]{64})-([0-9a-f]{64})\.json$/
          .exec(name);
      const bytes = readBytesOrNull(`${folder}/${name}`) ?? new Uint8Array();
      if (receipt) {
        const value = readJsonObject(`${folder}/${name}`);
        const [, kind, id, original, replacement] = receipt;
        if (!value) {
          this.errors.push(`restore receipt ${relative} is not valid JSON.`);
          continue;
        }
        const problems = receiptProblems(value, kind as AuthorityKind, id, original, replacement);
        if (problems.length > 0) {
          this.errors.push(`restore receipt ${relative} is invalid: ${problems.join("; ")}.`);
        }
        this.checkEvidenceFile(
          `.bimri/recovery/authority-${kind}-${id}-${original}.json`,
          `restore receipt ${relative}`,
        );
      } else if (manual) {
        if (sha256Hex(bytes) !== manual[1]) {
          this.errors.push(
            `recovery evidence ${relative} was altered (its hash no longer matches its name).`,
          );
        }
        if ((decodeUtf8Strict(bytes) === null) !== (manual[2] === "bin")) {
          this.errors.push(`recovery evidence ${relative} has the wrong extension for its bytes.`);
        }
      } else if (evidence) {
        if (sha256Hex(bytes) !== evidence[3]) {
          this.errors.push(
            `recovery evidence ${relative} was altered (its hash no longer matches its name).`,
          );
        }
      } else {
        this.warnings.push(`unexpected file ${relative}.`);
      }
    }
    // Quarantine stubs were noted while prepareAuthority read every record.
    for (const { kind, id, file } of this.stubEvidence) {
      this.checkEvidenceFile(file, `quarantine stub ${kind} ${id}`);
    }
  }

  protected checkIndex(): void {
    const bytes = this.reader.read(this.paths.index);
    if (bytes === null) {
      this.warnings.push("index is missing; run index to rebuild it.");
      return;
    }
    if (!isUtf8Bytes(bytes) || !everyRowHasEightColumns(bytes)) {
      this.errors.push("index.tsv has rows without 8 columns; run index to rebuild it.");
    }
  }
}
