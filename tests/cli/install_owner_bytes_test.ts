/**
 * The owner's AGENTS.md and CLAUDE.md come out of install with the exact
 * bytes the reference engine writes: its UTF-8 read keeps a byte-order mark
 * and its universal-newline read turns CRLF and lone CR into LF.
 */
import { assert, assertEquals } from "../helpers/assert.ts";
import { bimri, tempStore } from "../helpers/cli.ts";
import { TEMPLATES } from "../../templates/mod.ts";

const START = "<!-- BIMRI:START -->";
const END = "<!-- BIMRI:END -->";
const BOM = "\ufeff";
const AGENTS_BLOCK = `${START}\n${TEMPLATES["BIMRI-AGENT-BLOCK.md"].trim()}\n${END}`;
const CLAUDE_BLOCK = `${START}\n${TEMPLATES["CLAUDE.md"].trim()}\n${END}`;

/** The file's text with nothing dropped or translated (a BOM and every CR stay visible). */
function readExact(path: string): string {
  return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(
    Deno.readFileSync(path),
  );
}

function writeExact(path: string, text: string): void {
  Deno.writeFileSync(path, new TextEncoder().encode(text));
}

async function install(target: string, quiescent = false): Promise<void> {
  const args = ["install", "--target", target, ...(quiescent ? ["--quiescent"] : [])];
  const r = await bimri(target, args, { noRoot: true });
  assertEquals(r.code, 0, r.stderr + r.stdout);
}

Deno.test("install keeps a byte-order mark at the start of AGENTS.md and CLAUDE.md", async () => {
  const target = await tempStore("bimri-install-bom-");
  writeExact(`${target}/AGENTS.md`, `${BOM}# Rules with BOM\n`);
  writeExact(`${target}/CLAUDE.md`, `${BOM}${START}\nold block\n${END}\n\nOwner tail.\n`);
  await install(target);
  assertEquals(readExact(`${target}/AGENTS.md`), `${BOM}# Rules with BOM\n\n${AGENTS_BLOCK}\n`);
  assertEquals(readExact(`${target}/CLAUDE.md`), `${BOM}${CLAUDE_BLOCK}\n\nOwner tail.\n`);
  // The code-only update merges the same way and leaves the mark in place.
  await install(target, true);
  assertEquals(readExact(`${target}/AGENTS.md`), `${BOM}# Rules with BOM\n\n${AGENTS_BLOCK}\n`);
  assertEquals(readExact(`${target}/CLAUDE.md`), `${BOM}${CLAUDE_BLOCK}\n\nOwner tail.\n`);
});

Deno.test("install replaces a portable file that differs from bimri's only by a byte-order mark", async () => {
  // The reference copies every portable file, so the copy must be exact.
  const target = await tempStore("bimri-install-bom-portable-");
  writeExact(`${target}/INSTALL.md`, BOM + TEMPLATES["INSTALL.md"]);
  await install(target);
  assertEquals(readExact(`${target}/INSTALL.md`), TEMPLATES["INSTALL.md"]);
});

Deno.test("install turns CRLF and lone CR line endings of AGENTS.md and CLAUDE.md into LF", async () => {
  const target = await tempStore("bimri-install-crlf-");
  writeExact(`${target}/AGENTS.md`, "# Rules\r\nUse CRLF.\r\nOld Mac line\rend\r\n\r\n");
  writeExact(`${target}/CLAUDE.md`, `a\r\n${START}\r\nold\r\n${END}\r\ntail\r\n`);
  await install(target);
  const agents = `# Rules\nUse CRLF.\nOld Mac line\nend\n\n${AGENTS_BLOCK}\n`;
  assertEquals(readExact(`${target}/AGENTS.md`), agents);
  assertEquals(readExact(`${target}/CLAUDE.md`), `a\n${CLAUDE_BLOCK}\ntail\n`);

  // A checkout that turned the installed files to CRLF gets LF back, although
  // nothing but the line endings differs from the merge.
  writeExact(`${target}/AGENTS.md`, agents.replaceAll("\n", "\r\n"));
  await install(target, true);
  assertEquals(readExact(`${target}/AGENTS.md`), agents);
  assert(!readExact(`${target}/CLAUDE.md`).includes("\r"));
});
