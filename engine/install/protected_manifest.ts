/** The manifest of a store's protected tree (path -> type, size, SHA-256) that proves a code-only update left every record as it was. */
import { join } from "node:path";
import { BulkReader, nativeSha256 } from "../integrity/bulk_read.ts";
import { collectGarbage } from "../integrity/heap.ts";
import { sha256Hex } from "../model/text.ts";
import type { JsonObject, JsonValue } from "../model/json.ts";
import { lstatOrNull } from "../store/files.ts";
import { UNPROTECTED_STORE_PATHS } from "./project_files.ts";

/** What the update manifest records about one program path before it is replaced. */
export type PathRecord =
  | { type: "file"; bytes: number; sha256: string }
  | { type: "directory" }
  | { type: "symlink"; target: string; target_bytes_hex: string }
  | { type: "other"; mode: number }
  | { type: "missing" };

/**
 * The reference's protected-tree digest: SHA-256 of the records as compact,
 * key-sorted, ASCII-escaped JSON (Python `json.dumps(sort_keys=True,
 * separators=(",", ":"), ensure_ascii=True)`), so its receipt validator can
 * recompute the digest bimri writes.
 */
function treeDigest(records: Record<string, PathRecord>): string {
  const sortKeys = (value: JsonValue): JsonValue => {
    if (Array.isArray(value)) return value.map(sortKeys);
    if (value !== null && typeof value === "object") {
      const out: JsonObject = {};
      for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key]);
      return out;
    }
    return value;
  };
  const compact = JSON.stringify(sortKeys(records as unknown as JsonValue)).replace(
    /[\u0080-\uffff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return sha256Hex(compact);
}

/** Path type and exact content of `bimri.md` and everything under `.bimri/` that is memory. */
export type ProtectedManifest = {
  records: Record<string, PathRecord>;
  tree_digest: string;
  bimri_md_sha256: string | null;
  state_sha256: string | null;
  accepted_head_revision: number | null;
  accepted_head_hash: string | null;
};

function pathRecord(path: string, reader: BulkReader): PathRecord {
  const info = lstatOrNull(path);
  if (!info) return { type: "missing" };
  if (info.isSymlink) {
    const target = Deno.readLinkSync(path);
    const hex = Array.from(
      new TextEncoder().encode(target),
      (b) => b.toString(16).padStart(2, "0"),
    );
    return { type: "symlink", target, target_bytes_hex: hex.join("") };
  }
  if (info.isDirectory) return { type: "directory" };
  if (info.isFile) {
    const bytes = reader.read(path);
    if (bytes === null) return { type: "missing" };
    return { type: "file", bytes: bytes.length, sha256: nativeSha256(bytes) };
  }
  // The file-type bits of st_mode, as the reference records them (stat.S_IFMT).
  return { type: "other", mode: (info.mode ?? 0) & 0o170000 };
}

/** Describes every protected store path without following symbolic links. */
export function protectedManifest(target: string): ProtectedManifest {
  // Every record of the store, hundreds of MB at 10,000 runs: read through one
  // reused buffer and hashed natively, as the audit reads them (bulk_read.ts).
  const reader = new BulkReader();
  const records: Record<string, PathRecord> = {
    "bimri.md": pathRecord(join(target, "bimri.md"), reader),
  };
  // `name` is the folder's path relative to `target`, with `/` (as the receipt records it).
  const walk = (dir: string, name: string) => {
    const names = [...Deno.readDirSync(dir)].map((entry) => entry.name).sort();
    for (const entryName of names) {
      const path = join(dir, entryName);
      const entryRel = `${name}/${entryName}`;
      if (UNPROTECTED_STORE_PATHS.includes(entryRel)) continue;
      const record = pathRecord(path, reader);
      records[entryRel] = record;
      if (record.type === "directory") walk(path, entryRel);
    }
    // A folder of thousands of records leaves tens of MB of garbage (see heap.ts).
    if (names.length >= 1000) collectGarbage();
  };
  walk(join(target, ".bimri"), ".bimri");
  const hot = records["bimri.md"];
  const state = records[".bimri/state.json"];
  let head: { revision: number | null; hash: string | null } = { revision: null, hash: null };
  try {
    const raw = JSON.parse(Deno.readTextFileSync(join(target, ".bimri", "state.json")));
    head = {
      revision: typeof raw.head_revision === "number" ? raw.head_revision : null,
      hash: typeof raw.head_hash === "string" ? raw.head_hash : null,
    };
  } catch { /* the audit reports an unreadable state */ }
  return {
    records,
    tree_digest: treeDigest(records),
    bimri_md_sha256: hot.type === "file" ? hot.sha256 : null,
    state_sha256: state?.type === "file" ? state.sha256 : null,
    accepted_head_revision: head.revision,
    accepted_head_hash: head.hash,
  };
}

/** Differences between two protected manifests (empty when memory is untouched). */
export function manifestDifferences(before: ProtectedManifest, after: ProtectedManifest): string[] {
  const out: string[] = [];
  const names = new Set([...Object.keys(before.records), ...Object.keys(after.records)]);
  for (const name of [...names].sort()) {
    const a = before.records[name];
    const b = after.records[name];
    if (!a) out.push(`created protected path ${name}`);
    else if (!b) out.push(`removed protected path ${name}`);
    else if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`changed protected path ${name}`);
  }
  return out;
}
