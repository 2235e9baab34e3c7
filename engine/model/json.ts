/** JSON values as plain data: the value types and the object check; no I/O, no formatting. */

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | {
  [key: string]: JsonValue;
};
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** True when `value` is a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
