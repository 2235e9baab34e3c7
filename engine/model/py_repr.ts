/**
 * Python's `repr()` of a string, and argparse's invalid-choice refusal built
 * on it: kept apart from py_json.ts so the CLI's flag parser loads only this.
 */

// str.isprintable() is false for these categories (the space character aside).
// Built on first use: a \p{...} regex literal at a module's top level costs
// every process that loads it ~4M instructions (V8 checks it while parsing).
let notPrintable: RegExp | null = null;
function isNotPrintable(ch: string): boolean {
  notPrintable ??= /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;
  return notPrintable.test(ch);
}

/** Python's `repr(str)`: single quotes unless only double quotes avoid escaping. */
export function pyStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += "\\x" + hex(code, 2);
    else if (code < 0x7f || ch === " " || !isNotPrintable(ch)) out += ch;
    else if (code <= 0xff) out += "\\x" + hex(code, 2);
    else if (code <= 0xffff) out += "\\u" + hex(code, 4);
    else out += "\\U" + hex(code, 8);
  }
  return out + quote;
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, "0");
}

/**
 * The refusal of a value outside a flag's choices in argparse's own words
 * (`argument --trust: invalid choice: 'contested' (choose from 'confirmed',
 * 'working')`), which scripts written against the reference engine look for.
 */
export function invalidChoice(name: string, value: string, choices: readonly string[]): string {
  return `argument --${name}: invalid choice: ${pyStringRepr(value)} (choose from ${
    choices.map(pyStringRepr).join(", ")
  })`;
}
