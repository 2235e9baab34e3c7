/**
 * INSTALL.md and README say what the program does (issue 45): the documented
 * counts and lists of MCP tools, portable files and uninstall steps are
 * compared with the program's own lists.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "../helpers/assert.ts";
import { TOOL_SPECS } from "../../mcp/tools.ts";
import { LOCAL_FILES, PACKAGE_FILES } from "../../engine/install/project_files.ts";
import { TEMPLATES } from "../../templates/mod.ts";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const INSTALL = Deno.readTextFileSync(join(REPO, "INSTALL.md"));
const README = Deno.readTextFileSync(join(REPO, "README.md"));
const TOOLS = TOOL_SPECS.map((t) => t.name);
const NUMBERS = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
];

/** Markdown text as one line (the formatter wraps prose anywhere). */
function flat(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}

function backticked(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

Deno.test("INSTALL.md states the MCP tool count, first and last as the server lists them", () => {
  const m = /It lists (\w+) tools, from `(memory_\w+)` to `(memory_\w+)`\./.exec(flat(INSTALL));
  assert(m !== null, "INSTALL.md has no 'It lists N tools' sentence");
  assertEquals(NUMBERS.indexOf(m[1]), TOOLS.length);
  assertEquals([m[2], m[3]], [TOOLS[0], TOOLS[TOOLS.length - 1]]);
});

Deno.test("INSTALL.md's grep for the tool names matches every tool name the server lists", () => {
  const m = /grep -o '([^']+)'/.exec(INSTALL);
  assert(m !== null, "INSTALL.md has no grep -o of the tool names");
  // A basic regular expression: `[...]*` and literal quotes read the same in JavaScript.
  const pattern = new RegExp(m[1], "g");
  const listed = JSON.stringify({ tools: TOOLS.map((name) => ({ name })) }).replaceAll(
    '{"name"',
    '"name"',
  );
  const found = [...listed.matchAll(pattern)].map((x) => x[0]);
  assertEquals(found, TOOLS.map((name) => `"name":"${name}"`));
});

Deno.test("README's MCP section names exactly the server's tools", () => {
  const section = README.slice(
    README.indexOf("## Use bimri from an MCP client"),
    README.indexOf("\n## ", README.indexOf("## Use bimri from an MCP client") + 5),
  );
  const named = [...new Set(backticked(section).filter((t) => /^memory_\w+$/.test(t)))];
  assertEquals(named.sort(), [...TOOLS].sort());
});

Deno.test("INSTALL.md states the number and names of the portable files install writes", () => {
  const text = flat(INSTALL);
  const m = /writes (\w+) portable files into the folder: (.*?)\. When the project/.exec(text);
  assert(m !== null, "INSTALL.md has no 'writes N portable files' sentence");
  assertEquals(NUMBERS.indexOf(m[1]), PACKAGE_FILES.length);
  const named = backticked(m[2].replace(/\([^)]*\)/g, ""));
  assertEquals(named, [...PACKAGE_FILES]);
});

Deno.test("INSTALL.md's uninstall removes exactly what install adds", () => {
  const section = INSTALL.slice(INSTALL.indexOf("## 5. Uninstall"));
  const rms = [...section.matchAll(/^ *rm ([^\n]+)$/gm)].map((m) => m[1].split(" "));
  assertEquals(rms[0].sort(), [...PACKAGE_FILES].sort());
  assertEquals(rms[1].sort(), [...LOCAL_FILES].sort());
  // The heading install writes into a new AGENTS.md is the one the steps name.
  const [heading, , line] = TEMPLATES["AGENTS.md"].split("\n");
  const flatSection = flat(section);
  assert(flatSection.includes(`\`${heading}\``), `uninstall does not name ${heading}`);
  assert(flatSection.includes(`\`${line}\``), `uninstall does not name "${line}"`);
  // The guide's other name when the project has its own INSTALL.md.
  assert(flatSection.includes("`BIMRI-INSTALL.md`"));
});

Deno.test("INSTALL.md does not call a silent SessionEnd hook a failure", () => {
  const text = flat(INSTALL);
  assert(!/A hook that prints nothing has failed/.test(text));
  assert(
    /`hook-close` \(SessionEnd\) prints nothing when the agent had already closed its run/.test(
      text,
    ),
  );
});
