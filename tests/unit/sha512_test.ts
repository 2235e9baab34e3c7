/** The pure SHA-512 against the FIPS 180-4 examples and node:crypto. */
import { createHash } from "node:crypto";
import { strictEqual } from "node:assert/strict";
import { sha512 } from "../../engine/model/sha512.ts";

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function ascii(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

Deno.test("sha512 gives the FIPS 180-4 example digests", () => {
  const vectors: [Uint8Array, string][] = [
    [
      ascii(""),
      "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce" +
      "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
    ],
    [
      ascii("abc"),
      "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a" +
      "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
    ],
    [
      ascii("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c335" +
      "96fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445",
    ],
    [
      ascii(
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno" +
          "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      ),
      "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018" +
      "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909",
    ],
    [
      new Uint8Array(1_000_000).fill(0x61),
      "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb" +
      "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b",
    ],
  ];
  for (const [message, digest] of vectors) {
    strictEqual(hex(sha512(message)), digest, `${message.length} bytes`);
  }
});

Deno.test("sha512 matches node:crypto at the padding edges and on 200 random lengths 0..300", () => {
  // 111/112 bytes: the last length that fits the first block's padding, and the first that does not.
  const lengths = [0, 1, 111, 112, 113, 127, 128, 129, 239, 240, 255, 256, 257];
  for (let i = 0; i < 200; i++) lengths.push(Math.floor(Math.random() * 301));
  for (const length of lengths) {
    const message = crypto.getRandomValues(new Uint8Array(length));
    strictEqual(
      hex(sha512(message)),
      createHash("sha512").update(message).digest("hex"),
      `message ${hex(message)}`,
    );
  }
});

Deno.test("sha512 hashes only the bytes of a view into a larger buffer", () => {
  const buffer = crypto.getRandomValues(new Uint8Array(400));
  const view = buffer.subarray(37, 37 + 250);
  strictEqual(hex(sha512(view)), createHash("sha512").update(view).digest("hex"));
});
