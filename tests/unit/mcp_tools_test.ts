import { assertEquals, assertThrows } from "../helpers/assert.ts";
import { checkArguments, inputSchema, toArgv, TOOL_SPECS } from "../../mcp/tools.ts";
import { actorFromClientName, servedTools } from "../../mcp/server.ts";
import { COMMANDS, findCommand } from "../../commands/mod.ts";
import { parseCommandArgs } from "../../commands/command.ts";

const spec = (name: string) => TOOL_SPECS.find((s) => s.name === name)!;

Deno.test("every tool maps onto an existing verb's flags", () => {
  const { tools, missing } = servedTools(findCommand);
  assertEquals(missing, []);
  assertEquals(tools.length, TOOL_SPECS.length);
});

Deno.test("a tool whose verb lacks a mapped flag is not served", () => {
  const journal = findCommand("journal")!;
  const stripped = { ...journal, flags: { run: { type: "string" as const } } };
  const { tools, missing } = servedTools((name) =>
    name === "journal" ? stripped : COMMANDS.find((c) => c.name === name)
  );
  assertEquals(tools.some((t) => t.spec.name === "memory_journal"), false);
  assertEquals(missing.length, 1);
});

Deno.test("arguments become the argv the CLI parses, values kept whole", () => {
  const propose = spec("memory_propose");
  const argv = toArgv(propose, {
    run: "R000001",
    key: "a.b",
    tier: 2,
    new_subject: true,
    needs_human: false,
    tags: ["x", "y"],
    text: "--looks like a flag",
  });
  const { flags } = parseCommandArgs(findCommand("propose")!, argv);
  assertEquals(flags.run, "R000001");
  assertEquals(flags.tier, "2");
  assertEquals(flags["new-subject"], true);
  assertEquals(flags["needs-human"], undefined);
  assertEquals(flags.tags, "x,y");
  assertEquals(flags.text, "--looks like a flag");
  const resolve = spec("memory_resolve");
  const parsed = parseCommandArgs(
    findCommand("resolve")!,
    toArgv(resolve, { conflict: "-C1", choose: "current", human_approved: true }),
  );
  assertEquals(parsed.positionals, ["-C1"]);
  assertEquals(parsed.flags["human-approved"], true);
});

Deno.test("argument shapes are checked; values are left to the verb", () => {
  const journal = spec("memory_journal");
  assertThrows(() => checkArguments(journal, { text: 1 }), /text must be a string/);
  assertThrows(() => checkArguments(journal, {}), /text is required/);
  assertThrows(() => checkArguments(journal, { text: "x", importance: 2.5 }), /integer/);
  assertThrows(() => checkArguments(journal, ["x"]), /must be a JSON object/);
  assertEquals(checkArguments(journal, { text: "x", importance: 99 }), {
    text: "x",
    importance: 99,
  });
  assertEquals(checkArguments(spec("memory_status"), undefined), {});
});

Deno.test("input schemas name the CLI flags in snake_case and forbid extras", () => {
  const schema = inputSchema(spec("memory_propose"));
  assertEquals(schema.additionalProperties, false);
  assertEquals(schema.properties?.new_subject.type, "boolean");
  assertEquals(schema.properties?.tags.type, "array");
  assertEquals(schema.properties?.tier.type, "integer");
  for (const s of TOOL_SPECS) {
    for (const [name, arg] of Object.entries(s.args)) {
      if (arg.flag !== null) assertEquals(arg.flag.replaceAll("-", "_"), name, s.name);
    }
  }
});

Deno.test("the default actor is a slug of the client's name", () => {
  assertEquals(actorFromClientName("Claude Desktop"), "claude-desktop");
  assertEquals(actorFromClientName("cursor-vscode"), "cursor-vscode");
  assertEquals(actorFromClientName("  "), "mcp");
  assertEquals(actorFromClientName(undefined), "mcp");
  assertEquals(actorFromClientName("Zed 🚀"), "zed");
});
