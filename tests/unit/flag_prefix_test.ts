/**
 * commands/command.ts beyond node:util's parseArgs, as the reference's
 * argparse parses: unambiguous long-flag prefixes, negative numbers as
 * values, and integer flags read like Python's int().
 */
import { assertEquals, assertThrows } from "../helpers/assert.ts";
import {
  type Command,
  type FlagSpec,
  GLOBAL_FLAGS,
  parseCommandArgs,
  parseFlags,
  resolveFlagName,
} from "../../commands/command.ts";
import { COMMANDS } from "../../commands/mod.ts";

const SPEC: FlagSpec = {
  run: { type: "string" },
  "run-id": { type: "string" },
  session: { type: "string" },
  summary: { type: "string" },
  all: { type: "boolean" },
  limit: { type: "string", integer: true },
};

Deno.test("a unique prefix names its flag, with or without =value; an exact name always wins", () => {
  assertEquals(parseFlags(SPEC, ["--se", "s1", "--su=done", "--a", "--l", "3"]).flags, {
    session: "s1",
    summary: "done",
    all: true,
    limit: "3",
  });
  assertEquals(parseFlags(SPEC, ["--run-", "R1"]).flags, { "run-id": "R1" });
  // An exact name wins over the longer flags it is a prefix of.
  assertEquals(parseFlags(SPEC, ["--run", "R1"]).flags, { run: "R1" });
  assertEquals(parseFlags(SPEC, ["--run=R1"]).flags, { run: "R1" });
});

Deno.test("a prefix of several flags is refused, naming them", () => {
  assertThrows(
    () => parseFlags(SPEC, ["--s", "x"]),
    /'--s' is ambiguous: it could be --session, --summary\./,
  );
  assertThrows(() => parseFlags(SPEC, ["--ru=R1"]), /could be --run, --run-id/);
  assertThrows(() => parseFlags(SPEC, ["--=x"]), /Unknown option '--'/);
  assertThrows(() => parseFlags(SPEC, ["--al=yes"]), /does not take an argument/);
  assertThrows(() => parseFlags(SPEC, ["--x"]), /Unknown option '--x'/);
});

Deno.test("low-priority flags take a prefix only when no other flag matches", () => {
  const low = new Set(["root", "json"]);
  const journal: FlagSpec = { ...GLOBAL_FLAGS, run: { type: "string" } };
  // argparse's subparsers have no --root: `--r` is --run there.
  assertEquals(resolveFlagName(journal, "r", low), "run");
  assertEquals(resolveFlagName(journal, "ro", low), "root");
  assertEquals(resolveFlagName(journal, "j", low), "json");
  assertEquals(resolveFlagName(journal, "root", low), "root");
  const doctor: FlagSpec = { ...GLOBAL_FLAGS, "read-only": { type: "boolean" } };
  assertEquals(resolveFlagName(doctor, "r", low), "read-only");
  // Without the priority the same prefix is ambiguous.
  assertThrows(() => resolveFlagName(journal, "r"), /could be --root, --run/);
});

Deno.test("a value that looks like a negative number is a value, as in argparse", () => {
  for (const value of ["-1", "-0", "-15", "-1.5", "-.5", "-٣"]) {
    assertEquals(parseFlags(SPEC, ["--run", value]).flags, { run: value }, value);
  }
  for (const value of ["-x", "-1x", "-1.", "-1_0", "--1", "- 1"]) {
    assertThrows(() => parseFlags(SPEC, ["--run", value]), /forget its value/);
  }
});

Deno.test("an integer flag is read like int() and handed on as plain decimal text", () => {
  const cases: [string[], string][] = [
    [["--limit", "1_0"], "10"],
    [["--limit", "+5"], "5"],
    [["--limit", " 5 "], "5"],
    [["--limit", "\u30005\x85"], "5"],
    [["--limit", "007"], "7"],
    [["--limit", "-1"], "-1"],
    [["--limit=-0"], "0"],
    [["--lim=-2_0"], "-20"],
  ];
  for (const [args, expected] of cases) {
    assertEquals(parseFlags(SPEC, args).flags, { limit: expected }, JSON.stringify(args));
  }
  for (const value of ["1__0", "_1", "1_", "1.0", "five", "", "\x1c5"]) {
    assertThrows(
      () => parseFlags(SPEC, [`--limit=${value}`]),
      /'--limit' needs a whole number/,
    );
  }
  // A string flag keeps its text as given.
  assertEquals(parseFlags(SPEC, ["--run", " +1_0 "]).flags, { run: " +1_0 " });
});

const JOURNAL: Command = {
  name: "journal",
  summary: "",
  help: "",
  flags: {
    run: { type: "string" },
    text: { type: "string" },
    importance: { type: "string", integer: true },
  },
  run: () => ({ exitCode: 0, text: "", data: {} }),
};

Deno.test("parseCommandArgs merges the global flags without letting them steal a verb's prefix", () => {
  assertEquals(
    parseCommandArgs(JOURNAL, [
      "--r",
      "R000001",
      "--te",
      "hi",
      "--imp",
      " +4 ",
      "--ro",
      "/x",
      "--j",
    ])
      .flags,
    { run: "R000001", text: "hi", importance: "4", root: "/x", json: true },
  );
  assertThrows(
    () => parseCommandArgs(JOURNAL, ["--imp", "4.0"]),
    /journal: Option '--importance' needs a whole number \(got "4\.0"\)\. See `bimri journal --help`\.$/,
  );
});

Deno.test("a help switch spelled short or abbreviated comes back as help (the dispatcher prints it)", () => {
  for (const args of [["--he"], ["--h"], ["-hh"]]) {
    assertEquals(parseCommandArgs(JOURNAL, args).flags.help, true);
  }
});

// The reference's build_parser declares exactly these options type=int.
const REFERENCE_INT_FLAGS = [
  "get --limit",
  "journal --importance",
  "propose --importance",
  "propose --observations",
  "propose --tier",
  "recall --limit",
  "review --limit",
  "review --offset",
  "search --limit",
];

Deno.test("every flag the reference reads with int() is declared integer", () => {
  const declared = COMMANDS.flatMap((command) =>
    Object.entries(command.flags)
      .filter(([, declaration]) => declaration.integer === true)
      .map(([name]) => `${command.name} --${name}`)
  ).sort();
  assertEquals(declared, REFERENCE_INT_FLAGS);
});
