import { assertEquals } from "../helpers/assert.ts";
import { COMMANDS } from "../../commands/mod.ts";
import { COMMAND_LOADERS, loadCommand } from "../../main.ts";

Deno.test("the lazy loaders and the full registry name the same verbs and objects", async () => {
  const names = COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]).sort();
  assertEquals(Object.keys(COMMAND_LOADERS).sort(), names);
  for (const command of COMMANDS) {
    for (const name of [command.name, ...(command.aliases ?? [])]) {
      assertEquals(await loadCommand(name), command, name);
    }
  }
  assertEquals(await loadCommand("constructor"), undefined);
  assertEquals(await loadCommand("no-such-verb"), undefined);
});
