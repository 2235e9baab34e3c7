/**
 * Authority records on disk (proposals, decisions, conflicts, resolutions):
 * read with their exact bytes, create exclusively, replace atomically.
 */
import { BimriError } from "../errors.ts";
import { decodeUtf8Strict } from "../model/text.ts";
import { canonicalJson } from "./canonical_json.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../model/json.ts";
import { atomicReplace, createExclusive, lstatOrNull, readBytesOrNull } from "./files.ts";

/** A record read from disk: its exact bytes and parsed object. */
export type LoadedRecord = { bytes: Uint8Array; value: JsonObject };

/** Reads a JSON record; null when missing; a BimriError (store-corrupt) when unreadable or not an object. */
export function readRecord(path: string, label: string): LoadedRecord | null {
  const info = lstatOrNull(path);
  if (info === null) return null;
  if (info.isSymlink || !info.isFile) {
    throw new BimriError("store-corrupt", `${label} is not a regular file; run doctor.`);
  }
  const bytes = readBytesOrNull(path);
  if (bytes === null) return null;
  const text = decodeUtf8Strict(bytes);
  let value: JsonValue;
  try {
    if (text === null) throw new Error("not UTF-8");
    value = JSON.parse(text) as JsonValue;
  } catch {
    throw new BimriError(
      "store-corrupt",
      `${label} is unreadable; BIMRI stopped without resetting it: it is not valid JSON. Run doctor.`,
    );
  }
  if (!isJsonObject(value)) {
    throw new BimriError("store-corrupt", `${label} is not a JSON object; run doctor.`);
  }
  return { bytes, value };
}

/** Creates an immutable record exclusively; false when it already exists. */
export function createRecord(path: string, value: JsonObject): boolean {
  return createExclusive(path, canonicalJson(value));
}

/** Atomically replaces a record with `value`. */
export function replaceRecord(path: string, value: JsonObject): void {
  atomicReplace(path, canonicalJson(value));
}
