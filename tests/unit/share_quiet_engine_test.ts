/**
 * Team memory's engine prints nothing: what it refuses (a file in this
 * clone's own folder it did not write, say) is returned or noted for the
 * command layer to print (commands/share_wiring.ts), never written to the
 * terminal from engine/share/.
 */
import { ok } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const SHARE = fileURLToPath(new URL("../../engine/share/", import.meta.url));

Deno.test("no file of engine/share/ writes to stdout or stderr", () => {
  const printing: string[] = [];
  for (const entry of Deno.readDirSync(SHARE)) {
    if (!entry.isFile || !entry.name.endsWith(".ts")) continue;
    const text = Deno.readTextFileSync(join(SHARE, entry.name));
    for (const [i, line] of text.split("\n").entries()) {
      if (/\bDeno\.(stderr|stdout)\b|\bconsole\.[a-z]+\(/.test(line)) {
        printing.push(`${entry.name}:${i + 1}: ${line.trim()}`);
      }
    }
  }
  ok(printing.length === 0, `engine/share/ prints:\n${printing.join("\n")}`);
});
