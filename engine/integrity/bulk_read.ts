/**
 * Reading a whole store for the full audit (doctor): tens of thousands of
 * files and, in the revisions folder, hundreds of megabytes at 10,000 runs.
 *
 * Why not `Deno.readFileSync` per file: every call allocates a fresh buffer
 * outside the JavaScript heap, which the garbage collector frees late, so a
 * full pass held over a hundred megabytes of dead file bytes and spent a
 * third of its time in allocation. One growing buffer, reused for every
 * file, keeps the pass flat in memory and several times faster. Callers
 * must use (decode, hash, parse) the bytes before the next read, or copy them.
 *
 * Why not `TextDecoder({ fatal: true })`: validating with `isUtf8` and then
 * decoding without the fatal flag gives the same string for valid UTF-8 and
 * the same refusal for invalid bytes, about four times faster.
 *
 * Only the full audit imports this module (loading `node:buffer` and
 * `node:crypto` costs start-up time the everyday commands do not pay).
 */
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { openToReadOrNull, readOpenFile } from "../store/files.ts";

const looseDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** True when `bytes` are valid UTF-8 (what `decodeUtf8Strict` accepts). */
export function isUtf8Bytes(bytes: Uint8Array): boolean {
  return isUtf8(bytes);
}

/** Strict UTF-8 decoding (same answers as `decodeUtf8Strict`); null when not UTF-8. */
export function decodeUtf8Fast(bytes: Uint8Array): string | null {
  return isUtf8(bytes) ? looseDecoder.decode(bytes) : null;
}

/** Lowercase hex SHA-256 with the native digest (same answers as `sha256Hex`). */
export function nativeSha256(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Reads files one after another into one reused buffer. */
export class BulkReader {
  private buffer = new Uint8Array(256 * 1024);

  /**
   * The bytes of the file at `path` (links are followed, as `readFileSync`
   * does), or null when it does not exist. The view is only valid until the
   * next `read`: copy it (`slice()`) to keep it.
   */
  read(path: string): Uint8Array | null {
    const file = openToReadOrNull(path);
    if (file === null) return null;
    try {
      const { buffer, length } = readOpenFile(file, this.buffer);
      this.buffer = buffer;
      return buffer.subarray(0, length);
    } finally {
      file.close();
    }
  }
}
