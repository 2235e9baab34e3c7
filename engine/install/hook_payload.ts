/**
 * Pure helpers for the Claude Code hooks: reading the hook payload, the
 * session identity it carries, and the bounded one-line end reason.
 */
import { parsePyJson, PyNumber, pyStr } from "../model/py_json.ts";
import { isPySpace, pyStrip } from "../model/text.ts";

/** A parsed hook payload, or why it could not be used. */
export type HookPayload = {
  /** The JSON object Claude sent (empty when unusable). */
  payload: Record<string, unknown>;
  /** Why the payload is unusable, or null. */
  diagnosis: string | null;
};

/**
 * Parses the hook's stdin (its bytes, or text already decoded); an unusable
 * payload yields `{}` and a diagnosis. Bytes are read as the reference reads
 * them: strict UTF-8, and a byte-order mark is not skipped (JSON does not
 * allow one, so such a payload is not valid JSON).
 */
export function parseHookPayload(input: Uint8Array | string): HookPayload {
  let raw: string;
  if (typeof input === "string") raw = input;
  else {
    try {
      raw = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(input);
    } catch {
      return { payload: {}, diagnosis: "stdin could not be read (it is not UTF-8)" };
    }
  }
  if (pyStrip(raw) === "") return { payload: {}, diagnosis: "stdin was empty" };
  let value: unknown;
  try {
    value = parsePyJson(raw); // numbers keep their literal, as json.loads keeps int from float
  } catch {
    return { payload: {}, diagnosis: "stdin was not valid JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { payload: {}, diagnosis: "stdin JSON was not an object" };
  }
  return { payload: value as Record<string, unknown>, diagnosis: null };
}

/**
 * The stable session identity Claude sent: `session_id`, else
 * `transcript_path` (integer literals count as their digits; floats, booleans
 * and blanks do not).
 */
export function hookSessionIdentity(payload: Record<string, unknown>): string | null {
  for (const field of ["session_id", "transcript_path"]) {
    let value = payload[field];
    if (value instanceof PyNumber && value.isInt) value = value.toString();
    if (typeof value === "string" && pyStrip(value) !== "") return value;
  }
  return null;
}

/** Longest end reason kept, in code points. */
export const REASON_MAX = 200;

/**
 * `Claude Code SessionEnd: <reason>` with control characters turned into
 * spaces, whitespace runs collapsed and the reason cut to 200 code points, so
 * a strange reason can never make the close fail.
 */
export function hookCloseSummary(reason: unknown): string {
  let text: string;
  if (typeof reason === "string") text = reason;
  else if (reason === null || reason === undefined) text = "ended";
  else text = pyStr(reason); // as Python's str() prints it: `True`, `{'a': 1}`
  const words: string[] = [];
  let word = "";
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (code < 32 || isPySpace(ch)) { // DEL stays, as in the reference and `close --summary`
      if (word) words.push(word);
      word = "";
    } else word += ch;
  }
  if (word) words.push(word);
  let flat = words.join(" ");
  const points = [...flat];
  if (points.length > REASON_MAX) flat = points.slice(0, REASON_MAX - 3).join("") + "...";
  return `Claude Code SessionEnd: ${flat || "ended"}`;
}
