/**
 * The cheap checks of memory text that need no credential rules: the
 * characters memory text may never hold, and the first pass that tells text
 * that cannot hold a credential apart (credentials.ts holds the rules).
 */
import { BimriError } from "../errors.ts";
import { refusedTextCharacter } from "./visible.ts";

// The cheap first pass: text holding none of these cannot match a rule. It
// was one case-insensitive regular expression (/PRIVATE KEY|sk-|...|credential/i),
// whose compilation alone cost a process ~0.25 ms; the same words are found in
// the lowercased text instead. Lowercasing can only add hits (a non-ASCII
// character may lowercase to an ASCII letter), never lose one, so the pass
// still lets through everything a rule matches (tests/unit/credentials_test.ts).
const TRIGGER_WORDS: readonly string[] = [
  "private key",
  "sk-",
  "github_pat_",
  "gr1348941",
  "npm_",
  "pypi-",
  "xox",
  "xapp-",
  "hooks.slack",
  "_live_",
  "_test_",
  "aiza",
  "key=",
  "signature=",
  "akia",
  "asia",
  "abia",
  "acca",
  "a3t",
  "eyj",
  "pass",
  "pwd",
  "secret",
  "key",
  "token",
  "credential",
];
// Two of the trigger's three patterns, matched in the lowercased text; the third (`://`, then
// an `@` before the next white space) is found by hand (hasUrlCredentials): as an expression each
// `://` read to the next white space, quadratic on a line of `a://a://...`.
const TRIGGER_SHAPES = /gh[pousr]_|gl[a-z]{1,5}-/;

/** True when some `://` in `lower` is followed by an `@` before the next white space. */
function hasUrlCredentials(lower: string): boolean {
  const stop = /[\s@]/g;
  let from = lower.indexOf("://");
  while (from >= 0) {
    stop.lastIndex = from + 3;
    const found = stop.exec(lower);
    if (found === null) return false;
    if (found[0] === "@") return true;
    // Every `://` before this white space would stop at it too.
    from = lower.indexOf("://", found.index);
  }
  return false;
}

/** False when `text` surely holds nothing a credential rule matches (most text). */
export function mayHoldCredential(text: string): boolean {
  const lower = text.toLowerCase();
  for (const word of TRIGGER_WORDS) if (lower.includes(word)) return true;
  // Each shape begins with one of these: most text never compiles the expression.
  if (!lower.includes("gh") && !lower.includes("gl") && !lower.includes("://")) return false;
  return TRIGGER_SHAPES.test(lower) || hasUrlCredentials(lower);
}

/**
 * Refuses memory text that holds a character memory text may never hold
 * (bidi controls, zero-width characters, C1 controls, DEL); `name` says
 * which text ("journal text").
 */
export function refuseHiddenCharacter(value: string, name: string): void {
  const hidden = refusedTextCharacter(value);
  if (hidden !== null) {
    throw new BimriError(
      "invalid-input",
      `${name} contains the invisible or direction-changing character ${hidden.escape} ` +
        `at character ${hidden.offset}; remove it and write the text again (memory text ` +
        `refuses bidi controls, zero-width characters, C1 controls and DEL, which can hide ` +
        `or reorder what a reader sees).`,
    );
  }
}

/**
 * What a writer screens its memory text with (run_input.ts `loadTextScreen`
 * builds it): refusals of a hidden character or a credential the owner's
 * policy does not allow; `name` says which text.
 */
export type TextScreen = {
  /** Refuses a hidden character or a credential in `value`. */
  refuseUnsafe(value: string, name: string): void;
  /** Refuses a credential in `value`. */
  refuseCredentials(value: string, name: string): void;
};
