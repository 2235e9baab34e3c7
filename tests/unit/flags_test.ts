/**
 * commands/command.ts parseFlags against node:util's parseArgs (strict, with
 * positionals): the same values and positionals on accepted input, and a
 * refusal wherever parseArgs refuses.
 */
import { parseArgs } from "node:util";
import { assertEquals, assertThrows } from "../helpers/assert.ts";
import { type FlagSpec, parseFlags } from "../../commands/command.ts";

const SPEC: FlagSpec = {
  root: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  run: { type: "string" },
  text: { type: "string" },
  "new-subject": { type: "boolean" },
};

function viaNode(args: string[]) {
  const parsed = parseArgs({
    args,
    options: SPEC,
    strict: true,
    allowPositionals: true,
    allowNegative: false,
  });
  return { flags: { ...parsed.values }, positionals: parsed.positionals };
}

const ACCEPTED: string[][] = [
  [],
  ["--run", "R000001", "--text", "hello world"],
  ["--run=R000001", "--text=--looks-like-a-flag"],
  ["--text="],
  ["--json", "--new-subject", "-h"],
  ["C000001", "--json"],
  ["--run", "R1", "--run", "R2"],
  ["--", "--json", "-h", "x"],
  ["-", "--text", "-"],
  ["--text", "ünïcode ✓", "pos"],
  ["-hh"],
];

const REFUSED: string[][] = [
  ["--nope"],
  ["-x"],
  ["-hx"],
  ["--json=yes"],
  ["--run"],
  ["--run", "--json"],
  ["--text", "-oops"],
  ["--__proto__"],
];

Deno.test("parseFlags accepts what parseArgs accepts, with the same result", () => {
  for (const args of ACCEPTED) {
    assertEquals(parseFlags(SPEC, args), viaNode(args), JSON.stringify(args));
  }
});

Deno.test("parseFlags refuses what parseArgs refuses", () => {
  for (const args of REFUSED) {
    assertThrows(() => viaNode(args));
    assertThrows(() => parseFlags(SPEC, args));
  }
});
