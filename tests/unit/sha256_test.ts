import { createHash } from "node:crypto";
import { assertEquals } from "../helpers/assert.ts";
import { sha256HexOfBytes } from "../../engine/model/sha256.ts";

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
