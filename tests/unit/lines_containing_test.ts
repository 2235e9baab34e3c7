/**
 * readLinesContaining reads a file in 64 KB pieces: a line that straddles a
 * piece boundary, or a multi-byte character split by one, must come back
 * whole, exactly as a search of the whole text finds it.
 */
import { assertEquals } from "../helpers/assert.ts";
import { readLinesContaining } from "../../engine/store/files.ts";

const PIECE = 64 * 1024;

function linesOf(text: string, part: string): string[] {
  return text.split("\n").filter((line) => line.includes(part));
}

Deno.test("lines across the 64 KB piece boundaries come back whole", () => {
  const dir = Deno.makeTempDirSync({ prefix: "bimri-lines-" });
  try {
    const path = `${dir}/month.md`;
    for (const offset of [-40, -1, 0, 1, 40]) {
      // Filler rows, then a marked row that starts `offset` bytes around a boundary.
      const filler = "x".repeat(99) + "\n";
      let text = "";
      while (text.length + filler.length < PIECE + offset - 20) text += filler;
      text += "y".repeat(PIECE + offset - 20 - text.length) + "\n";
      const marked = `[BY:R000001-Q001] [cooled] Überquerung ${"é".repeat(30)} ${offset}`;
      text += marked + "\n" + filler.repeat(700) + marked + " again\n" + "tail without newline";
      Deno.writeTextFileSync(path, text);
      const found = readLinesContaining(path, "[BY:R000001-Q001]");
      assertEquals(found, linesOf(text, "[BY:R000001-Q001]"), `offset ${offset}`);
      assertEquals((found as string[]).length, 2, `offset ${offset}`);
      assertEquals(readLinesContaining(path, "tail without"), ["tail without newline"]);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
