/** Small assertion helpers over node:assert/strict (JSR's std/assert is not reachable here). */
import nodeAssert from "node:assert/strict";

/** Asserts `value` is truthy. */
export function assert(value: unknown, message?: string): asserts value {
  nodeAssert.ok(value, message);
}

/** Asserts deep strict equality. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  nodeAssert.deepStrictEqual(actual, expected, message);
}

/** Asserts deep strict inequality. */
export function assertNotEquals<T>(actual: T, expected: T, message?: string): void {
  nodeAssert.notDeepStrictEqual(actual, expected, message);
}

/** Asserts `text` matches `pattern`. */
export function assertMatch(text: string, pattern: RegExp, message?: string): void {
  nodeAssert.match(text, pattern, message);
}

/** Asserts `text` does not match `pattern`. */
export function assertNotMatch(text: string, pattern: RegExp, message?: string): void {
  nodeAssert.doesNotMatch(text, pattern, message);
}

/** Asserts `fn` throws (optionally matching `pattern` in the message). */
export function assertThrows(fn: () => unknown, pattern?: RegExp): void {
  if (pattern) nodeAssert.throws(fn, pattern);
  else nodeAssert.throws(fn);
}
