/**
 * The hash-bound records of an unshared store rewritten together by `secrets
 * redact`: every revision, `bimri.md`, proposal, decision, conflict,
 * resolution, archive month, run log and `state.json` that holds the secret
 * gets the marker instead, and every hash that covered the old bytes (line
 * hashes, revision file hashes, proposal file hashes) is replaced by the hash
 * of the new bytes, so both engines' audits still hold. The whole plan (each
 * file's new bytes) is written to the backup folder before the first record
 * changes; an interrupted run applies the same plan again.
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { redactText } from "../model/credentials.ts";
import { parseAnyEntry } from "../model/hot.ts";
import { lineHash, pyStrip, sha256Hex } from "../model/text.ts";
import { atomicReplace, listNames, readBytesOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";

/** One file of the plan: project-relative path, SHA-256 of its bytes before, and its new text. */
export type RechainFile = { file: string; before: string; after: string };

const ARCHIVE_ROW = /^\[ARCHIVED:[0-9-]+\] \[BY:R[0-9]{6}-Q[0-9]{3}\] \[[^\]\r\n]+\] (.+)$/;

/** True when every file holding the secret is one the plan knows how to rewrite. */
export function rechainCovers(files: readonly string[]): boolean {
  return files.every((file) =>
    file === "bimri.md" || file === ".bimri/state.json" || file === ".bimri/index.tsv" ||
    /^\.bimri\/(?:revisions|proposals|decisions|conflicts|resolutions|archive|log)\/[^/]+$/
      .test(file)
  );
}

function strings(value: unknown, out: string[]): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) { for (const item of value) strings(item, out); }
  else if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) strings(item, out);
  }
  return out;
}

function remapHashes(text: string, map: ReadonlyMap<string, string>): string {
  if (map.size === 0) return text;
  return text.replace(/\b[0-9a-f]{64}\b/g, (hash) => map.get(hash) ?? hash);
}

/**
 * The plan for the store at `paths` (null when nothing would change, or when
 * a rewritten entry text would pass `entryMaxChars`, which the audit refuses):
 * `only` maps the fingerprint to its kind. Reads only.
 */
export function planRechain(
  paths: StorePaths,
  only: ReadonlyMap<string, string>,
  entryMaxChars: number,
): RechainFile[] | null {
  const root = paths.root;
  const mask = (text: string) => redactText(text, only);
  const read = (file: string): string | null => {
    const bytes = readBytesOrNull(join(root, file));
    return bytes === null ? null : new TextDecoder().decode(bytes);
  };
  const listed = (folder: string) =>
    listNames(join(paths.dir, folder)).sort().map((name) => `.bimri/${folder}/${name}`);
  const lines = new Map<string, string>(); // old line hash -> new
  const noteLine = (line: string) => {
    const after = mask(line);
    if (after !== line) lines.set(lineHash(pyStrip(line)), lineHash(pyStrip(after)));
  };
  let tooLong = false;
  const noteEntryText = (before: string, after: string) => {
    if (after !== before && after.length > entryMaxChars) tooLong = true;
  };

  // Revisions and the view: line hashes, then file hashes.
  const files = new Map<string, { before: string; after: string }>();
  const revisionHashes = new Map<string, string>();
  for (const file of [...listed("revisions"), "bimri.md"]) {
    const before = read(file);
    if (before === null) continue;
    const after = mask(before);
    if (after === before) continue;
    for (const line of before.split("\n")) noteLine(line);
    files.set(file, { before, after });
    revisionHashes.set(sha256Hex(before), sha256Hex(after));
  }
  // Archive rows: the archived line's hash.
  for (const file of listed("archive")) {
    const before = read(file);
    if (before === null) continue;
    const after = mask(before);
    if (after === before) continue;
    for (const line of before.split("\n")) {
      const row = ARCHIVE_ROW.exec(line);
      if (row !== null) noteLine(row[1]);
    }
    files.set(file, { before, after });
  }
  // Every string a JSON record holds may be a line whose hash another record keeps.
  const jsonFiles = [
    ...["proposals", "decisions", "conflicts", "resolutions"].flatMap(listed),
    ".bimri/state.json",
  ];
  const parsed = new Map<string, string>();
  for (const file of jsonFiles) {
    const text = read(file);
    if (text === null || mask(text) === text) continue;
    parsed.set(file, text);
    try {
      for (const value of strings(JSON.parse(text), [])) noteLine(value);
    } catch {
      return null; // a damaged record: doctor reports it; nothing is rewritten
    }
  }
  for (const [file, { before }] of files) {
    if (!file.startsWith(".bimri/revisions/") && file !== "bimri.md") continue;
    for (const line of before.split("\n")) {
      const masked = mask(line);
      if (masked === line) continue;
      const entry = parseAnyEntry(pyStrip(masked));
      if (entry !== null) noteEntryText(line, entry.text);
    }
  }

  const both = new Map([...lines, ...revisionHashes]);
  // Proposals first: conflicts keep their file hashes.
  const proposalHashes = new Map<string, string>();
  for (const file of listed("proposals")) {
    const before = parsed.get(file) ?? read(file);
    if (before === null) continue;
    const after = remapHashes(mask(before), both);
    if (after === before) continue;
    try {
      const text = (JSON.parse(after) as { text?: unknown }).text;
      const old = (JSON.parse(before) as { text?: unknown }).text;
      if (typeof text === "string" && typeof old === "string") noteEntryText(old, text);
    } catch {
      return null;
    }
    files.set(file, { before, after });
    proposalHashes.set(sha256Hex(before), sha256Hex(after));
  }
  const all = new Map([...both, ...proposalHashes]);
  for (
    const file of [
      ...["decisions", "conflicts", "resolutions", "log"].flatMap(listed),
      ".bimri/state.json",
    ]
  ) {
    const before = read(file);
    if (before === null) continue;
    const after = remapHashes(mask(before), all);
    if (after !== before) files.set(file, { before, after });
  }
  if (tooLong || files.size === 0) return null;
  return [...files].map(([file, { before, after }]) => ({
    file,
    before: sha256Hex(before),
    after,
  }));
}

/**
 * The files of `plan` not written yet (what a resume writes): a file already
 * holding its planned bytes is done; one holding neither its old nor its
 * planned bytes was changed by someone else, and the plan stops there
 * rather than overwrite it.
 */
export function pendingRechain(root: string, plan: readonly RechainFile[]): RechainFile[] {
  const due: RechainFile[] = [];
  for (const item of plan) {
    const bytes = readBytesOrNull(join(root, item.file));
    const now = bytes === null ? "absent" : sha256Hex(bytes);
    if (now === sha256Hex(item.after)) continue;
    if (now !== item.before) {
      throw new BimriError(
        "store-corrupt",
        `${item.file} changed while a redaction was rewriting the store; its old bytes are in ` +
          "the redaction's backup folder. Run `bimri doctor`, then `bimri secrets redact` again.",
      );
    }
    due.push(item);
  }
  return due;
}

/** Writes `file` of the plan by atomic replace. */
export function applyRechainFile(root: string, item: RechainFile): void {
  atomicReplace(join(root, item.file), item.after);
}
