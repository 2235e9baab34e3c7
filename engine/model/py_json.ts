/**
 * A JSON document as the reference's Python sees it: `json.loads` keeps
 * integers exact and tells them from floats, and `str()` of what it decoded
 * prints Python's repr (`True`, `{'a': 1.0}`), not JSON.
 */
import { pyStringRepr } from "./py_repr.ts";

/** A JSON number with its literal kept: Python decodes `2` as int and `2.0` as float. */
export class PyNumber {
  /** `source` is the number's literal exactly as the document wrote it. */
  constructor(readonly source: string) {}

  /** True for an integer literal (no fraction, no exponent, not NaN or Infinity): Python's `int`. */
  get isInt(): boolean {
    return !/[.eEaI]/.test(this.source);
  }

  /** Python's `str()` of the decoded number. */
  toString(): string {
    if (this.isInt) {
      const digits = this.source.replace(/^-/, "");
      return /^0+$/.test(digits) ? "0" : this.source; // JSON has no leading zeros; "-0" is 0
    }
    if (this.source === "NaN") return "nan";
    return pyFloatRepr(Number(this.source)); // Number("Infinity") is Infinity
  }
}

type SourceContext = { source?: string };
type Reviver = (key: string, value: unknown, context?: SourceContext) => unknown;

/**
 * Parses JSON as `json.loads` decodes it, every number a PyNumber, the
 * `NaN`, `Infinity` and `-Infinity` literals Python also accepts included.
 * Throws SyntaxError where `json.loads` would fail too.
 */
export function parsePyJson(text: string): unknown {
  try {
    return JSON.parse(text, literalKeeper(new Map()));
  } catch (error) {
    const stand = standInsForSpecialFloats(text);
    if (stand === null) throw error;
    return JSON.parse(stand.text, literalKeeper(stand.literals));
  }
}

function literalKeeper(literals: Map<string, string>): (key: string, value: unknown) => unknown {
  const keep: Reviver = (_key, value, context) => {
    if (typeof value !== "number") return value;
    const source = context?.source ?? String(value);
    return new PyNumber(literals.get(source) ?? source);
  };
  return keep as (key: string, value: unknown) => unknown;
}

/**
 * `text` with each NaN, Infinity and -Infinity outside a string replaced by
 * a number literal the text does not contain (so each stand-in maps back to
 * its word), or null when there is none to replace.
 */
function standInsForSpecialFloats(
  text: string,
): { text: string; literals: Map<string, string> } | null {
  let nonce = 1;
  const unused = () => {
    while (text.includes(`0e-${nonce}7`)) nonce++;
    return `0e-${nonce++}7`;
  };
  const literals = new Map<string, string>();
  const byWord = new Map<string, string>();
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      out += ch;
      if (ch === "\\") out += text[++i] ?? "";
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    const word = ["-Infinity", "Infinity", "NaN"].find((w) => text.startsWith(w, i));
    if (word === undefined) {
      out += ch;
      continue;
    }
    if (word !== "-Infinity" && out.endsWith("-")) return null; // json.loads takes no -NaN
    let literal = byWord.get(word);
    if (literal === undefined) {
      literal = unused();
      byWord.set(word, literal);
      literals.set(literal, word);
    }
    out += literal;
    i += word.length - 1;
  }
  return literals.size === 0 ? null : { text: out, literals };
}

/** Python's `str()` of a decoded JSON value: a string as itself, anything else as its repr. */
export function pyStr(value: unknown): string {
  return typeof value === "string" ? value : pyRepr(value);
}

/**
 * Python's `repr()` of a decoded JSON value. Object keys come in JavaScript's
 * order, which lists integer-like keys first where Python keeps the
 * document's order.
 */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (value instanceof PyNumber) return value.toString();
  if (typeof value === "number") {
    return Number.isInteger(value) ? String(value) : pyFloatRepr(value);
  }
  if (typeof value === "string") return pyStringRepr(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (typeof value === "object") {
    const items = Object.entries(value as Record<string, unknown>);
    return `{${items.map(([k, v]) => `${pyStringRepr(k)}: ${pyRepr(v)}`).join(", ")}}`;
  }
  return String(value);
}

/**
 * Python's `repr(float)`: the shortest digits that round-trip (JavaScript
 * finds the same ones), in positional notation for exponents -4..15 and
 * `1e+16` style outside them, always with a fractional part or exponent.
 */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const [mantissa, exponentText] = Math.abs(x).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : "";
    const magnitude = String(Math.abs(exponent)).padStart(2, "0");
    return `${sign}${digits[0]}${fraction}e${exponent < 0 ? "-" : "+"}${magnitude}`;
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
  const fraction = digits.slice(exponent + 1);
  return `${sign}${whole}.${fraction || "0"}`;
}
