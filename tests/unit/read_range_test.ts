/**
 * readRangeOrNull returns exactly the bytes a whole read would slice out,
 * fewer where the file ends sooner, and null for a missing file.
 */
import { assertEquals } from "../helpers/assert.ts";
import { readRangeOrNull } from "../../engine/store/files.ts";

Deno.test("a byte range reads what slicing the whole file gives", () => {
  const dir = Deno.makeTempDirSync({ prefix: "bimri-range-" });
  try {
    const path = `${dir}/month.md`;
    const bytes = new TextEncoder().encode("row one\nÜberquerung row two\n".repeat(5000));
    Deno.writeFileSync(path, bytes);
    for (const [offset, length] of [[0, 7], [8, 22], [100_000, 60_000], [bytes.length - 3, 10]]) {
      assertEquals(
        readRangeOrNull(path, offset, length),
        bytes.slice(offset, offset + length),
        `${offset}+${length}`,
      );
    }
    assertEquals(readRangeOrNull(path, bytes.length + 5, 4), new Uint8Array());
    assertEquals(readRangeOrNull(`${dir}/missing.md`, 0, 4), null);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
