import { createHash } from "node:crypto";
import { ok } from "node:assert/strict";
import { sha256ModuleBytes } from "../../engine/model/sha256_wasm.ts";
import { assertEquals } from "../helpers/assert.ts";
import {
  SHA256_WASM_BASE64,
  sha256HexOfBytes,
  sha256HexOfBytesJs,
  sha256Wasm,
} from "../../engine/model/sha256.ts";

Deno.test("sha256 matches node:crypto across block boundaries and known vectors", () => {
  assertEquals(
    sha256HexOfBytes(new Uint8Array()),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
  assertEquals(
    sha256HexOfBytes(new TextEncoder().encode("s1")).slice(0, 20),
    "e8bc163c82eee1873328",
  );
  for (const length of [1, 55, 56, 63, 64, 65, 119, 120, 1000, 49152, 100003]) {
    const bytes = new Uint8Array(length);
    for (let i = 0; i < length; i++) bytes[i] = (i * 31 + length) & 0xff;
    assertEquals(
      sha256HexOfBytes(bytes),
      createHash("sha256").update(bytes).digest("hex"),
      `length ${length}`,
    );
  }
});

Deno.test("the WebAssembly and JavaScript digests agree, across chunks and the switch-over", () => {
  // Lengths around the block boundaries, the switch to WebAssembly and its
  // 4096-block chunks (256 KiB), each compared with node:crypto as well.
  const lengths = [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 2047, 2048, 2049, 6568];
  lengths.push(262143, 262144, 262145, 262144 + 64 * 3 + 17, 600001);
  for (let i = 0; i < 40; i++) lengths.push((i * 7919) % 9000);
  ok(sha256Wasm() !== null, "the WebAssembly block function compiles");
  for (const length of lengths) {
    const bytes = new Uint8Array(length);
    for (let i = 0; i < length; i++) bytes[i] = (i * 131 + length * 7 + (i >> 8)) & 0xff;
    const expected = createHash("sha256").update(bytes).digest("hex");
    assertEquals(sha256HexOfBytesJs(bytes), expected, `js, length ${length}`);
    assertEquals(sha256HexOfBytes(bytes), expected, `digest, length ${length}`);
    // A view into a larger buffer hashes only its own bytes.
    const padded = new Uint8Array(length + 11);
    padded.set(bytes, 5);
    assertEquals(sha256HexOfBytes(padded.subarray(5, 5 + length)), expected, `view ${length}`);
  }
});

Deno.test("the embedded WebAssembly module is exactly what sha256_wasm.ts assembles", () => {
  assertEquals([...Uint8Array.fromBase64(SHA256_WASM_BASE64)], [...sha256ModuleBytes()]);
});
