/**
 * Canonical JSON: the byte-exact style of every JSON file in a store
 * (Python `json.dumps(value, indent=2, sort_keys=True)` plus one newline).
 */

import type { JsonObject, JsonValue } from "../model/json.ts";
import { compareCodePoints } from "../model/plain_text.ts";

function escapeString(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const ch = text[i];
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (c < 0x20 || c > 0x7e) out += "\\u" + c.toString(16).padStart(4, "0");
    else out += ch;
  }
  return out + '"';
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) throw new Error("non-finite number in JSON");
  if (Number.isInteger(value) && !Object.is(value, -0)) return String(value);
  return String(value);
}

function write(value: JsonValue, indent: string, out: string[]): void {
  if (value === null) out.push("null");
  else if (typeof value === "boolean") out.push(value ? "true" : "false");
  else if (typeof value === "number") out.push(formatNumber(value));
  else if (typeof value === "string") out.push(escapeString(value));
  else if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push("[]");
      return;
    }
    const inner = indent + "  ";
    out.push("[\n");
    value.forEach((item, i) => {
      out.push(inner);
      write(item, inner, out);
      out.push(i < value.length - 1 ? ",\n" : "\n");
    });
    out.push(indent + "]");
  } else {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort(compareCodePoints);
    if (keys.length === 0) {
      out.push("{}");
      return;
    }
    const inner = indent + "  ";
    out.push("{\n");
    keys.forEach((key, i) => {
      out.push(inner + escapeString(key) + ": ");
      write(value[key], inner, out);
      out.push(i < keys.length - 1 ? ",\n" : "\n");
    });
    out.push(indent + "}");
  }
}

/** Serializes `value` in the store's canonical JSON style, ending with one LF. */
export function canonicalJson(value: JsonValue): string {
  const sorted = sortedCopy(value);
  if (sorted === INDEX_KEY) return canonicalJsonByHand(value);
  // V8's JSON.stringify with two-space indentation lays values out exactly as
  // Python's `indent=2` does; only key order and ASCII escaping differ, and
  // those are settled here. It is native, which matters for state.json
  // (hundreds of KB once many subjects are cold) on every command.
  return JSON.stringify(sorted, null, 2).replace(NOT_PRINTABLE_ASCII, escapeCodeUnit) + "\n";
}

/** The hand-written serializer; the reference for canonicalJson (a test compares them). */
export function canonicalJsonByHand(value: JsonValue): string {
  const out: string[] = [];
  write(value, "", out);
  return out.join("") + "\n";
}

// JSON.stringify already escapes controls below 0x20 as Python does; Python's
// ensure_ascii also escapes DEL and everything above ASCII.
const NOT_PRINTABLE_ASCII = /[\u007f-\uffff]/g;

function escapeCodeUnit(unit: string): string {
  return "\\u" + unit.charCodeAt(0).toString(16).padStart(4, "0");
}

/** Marker: an object key that JavaScript would order numerically ("0", "17"). */
const INDEX_KEY = Symbol("index-key");

const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,9})$/;

function looksLikeIndex(key: string): boolean {
  const first = key.charCodeAt(0); // NaN for "", which is no index
  return first >= 48 && first <= 57 && ARRAY_INDEX.test(key);
}

/**
 * `value` with every object's keys in code-point order (undefined members
 * dropped): the value itself where nothing needs to change (a state read
 * from disk is already in order), fresh objects only where something does;
 * or INDEX_KEY when some key looks like an array index: JavaScript objects
 * list those first whatever the insertion order, so such values take the
 * hand-written path.
 */
function sortedCopy(value: JsonValue): JsonValue | typeof INDEX_KEY {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let items: JsonValue[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const copy = sortedCopy(value[i]);
      if (copy === INDEX_KEY) return INDEX_KEY;
      if (copy !== value[i] && items === null) items = value.slice(0, i);
      items?.push(copy);
    }
    return items ?? value;
  }
  const keys = Object.keys(value);
  let inOrder = true;
  for (let i = 0; i < keys.length; i++) {
    if (looksLikeIndex(keys[i])) return INDEX_KEY;
    if (value[keys[i]] === undefined) inOrder = false;
    if (i > 0 && compareCodePoints(keys[i - 1], keys[i]) >= 0) inOrder = false;
  }
  if (!inOrder) keys.sort(compareCodePoints);
  let out: JsonObject | null = inOrder ? null : {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (value[key] === undefined) continue;
    const copy = sortedCopy(value[key]);
    if (copy === INDEX_KEY) return INDEX_KEY;
    if (out === null && copy !== value[key]) {
      out = {};
      for (let j = 0; j < i; j++) out[keys[j]] = value[keys[j]];
    }
    if (out !== null) out[key] = copy;
  }
  return out ?? value;
}
