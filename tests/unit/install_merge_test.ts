import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import { BLOCK_END, BLOCK_START, mergeMarkedBlock } from "../../engine/install/merge.ts";
import { GITATTRIBUTES_MARKERS, gitattributesText } from "../../engine/install/gitattributes.ts";
import {
  hookCloseSummary,
  hookSessionIdentity,
  parseHookPayload,
} from "../../engine/install/hook_payload.ts";
import { renderHooks } from "../../engine/install/hooks_config.ts";

const BLOCK = "## New block\n\nUse bimri.\n";
const MARKED = `${BLOCK_START}\n## New block\n\nUse bimri.\n${BLOCK_END}`;

Deno.test("merge: new file, owner prose, replacement and idempotence", () => {
  assertEquals(mergeMarkedBlock(null, BLOCK), MARKED + "\n");
  assertEquals(mergeMarkedBlock(null, BLOCK, "# Title\n"), `# Title\n\n${MARKED}\n`);
  const owner = "# Mine\n\nKeep   this  exactly.\n\n\n";
  const once = mergeMarkedBlock(owner, BLOCK);
  assertEquals(once, `# Mine\n\nKeep   this  exactly.\n\n${MARKED}\n`);
  assertEquals(mergeMarkedBlock(once, BLOCK), once);
  const surrounded = `# Mine\n\n${BLOCK_START}\nold text\n${BLOCK_END}\n\n## After\nowner tail\n`;
  assertEquals(
    mergeMarkedBlock(surrounded, BLOCK),
    `# Mine\n\n${MARKED}\n\n## After\nowner tail\n`,
  );
});

Deno.test("merge: a byte-order mark stays and every line ending becomes LF, as the reference reads", () => {
  assertEquals(mergeMarkedBlock("\ufeff# Mine\n", BLOCK), `\ufeff# Mine\n\n${MARKED}\n`);
  assertEquals(mergeMarkedBlock("\ufeff", BLOCK), `\ufeff\n\n${MARKED}\n`);
  assertEquals(
    mergeMarkedBlock("a\r\nb\rc\u2028d\r\n\r\n", BLOCK),
    `a\nb\nc\u2028d\n\n${MARKED}\n`,
  );
  assertEquals(
    mergeMarkedBlock(`x\r\n${BLOCK_START}\r\nold\r\n${BLOCK_END}\r\ntail\r\n`, BLOCK),
    `x\n${MARKED}\ntail\n`,
  );
});

Deno.test("merge: an orphan start marker and the prose after it stay in place", () => {
  const owner = `# Mine\n\nI once wrote ${BLOCK_START} here by hand.\nMore prose.\n`;
  const first = mergeMarkedBlock(owner, BLOCK);
  assert(first.startsWith(owner.trimEnd()));
  const second = mergeMarkedBlock(first, "## Newer\n");
  assertEquals(
    second,
    `# Mine\n\nI once wrote ${BLOCK_START} here by hand.\nMore prose.\n\n${BLOCK_START}\n## Newer\n${BLOCK_END}\n`,
  );
  // An orphan between blocks never lets a replacement swallow owner text.
  const tricky = `a\n${BLOCK_START}\norphan prose\n${BLOCK_START}\nold\n${BLOCK_END}\nz\n`;
  assertEquals(
    mergeMarkedBlock(tricky, BLOCK),
    `a\n${BLOCK_START}\norphan prose\n${MARKED}\nz\n`,
  );
});

Deno.test("hook payload: diagnosis, identity precedence and reason flattening", () => {
  assertEquals(parseHookPayload("").diagnosis, "stdin was empty");
  assertEquals(parseHookPayload("nope").diagnosis, "stdin was not valid JSON");
  assertEquals(parseHookPayload("[1]").diagnosis, "stdin JSON was not an object");
  assertEquals(parseHookPayload("null").diagnosis, "stdin JSON was not an object");
  assertEquals(hookSessionIdentity({}), null);
  assertEquals(hookSessionIdentity({ session_id: "  ", transcript_path: "/t.jsonl" }), "/t.jsonl");
  assertEquals(hookSessionIdentity({ session_id: "s1", transcript_path: "/t.jsonl" }), "s1");
  // Numbers as json.loads decodes them: an integer literal is an identity (every digit kept),
  // a float literal is not.
  const identityOf = (json: string) => hookSessionIdentity(parseHookPayload(json).payload);
  assertEquals(identityOf('{"session_id": 42}'), "42");
  assertEquals(identityOf('{"session_id": 12345678901234567890}'), "12345678901234567890");
  assertEquals(identityOf('{"session_id": -0}'), "0");
  assertEquals(identityOf('{"session_id": 2.0, "transcript_path": "/t.jsonl"}'), "/t.jsonl");
  assertEquals(identityOf('{"session_id": 1e3}'), null);
  assertEquals(identityOf('{"session_id": "s7", "cost": NaN}'), "s7");
  assertEquals(identityOf('{"session_id": Infinity, "transcript_path": "/t.jsonl"}'), "/t.jsonl");
  assertEquals(hookSessionIdentity({ session_id: true }), null);
  // Blank as Python's strip() sees it: U+001F is blank, U+FEFF is not.
  assertEquals(
    hookSessionIdentity({ session_id: "\u001f", transcript_path: "/t.jsonl" }),
    "/t.jsonl",
  );
  assertEquals(hookSessionIdentity({ session_id: "\ufeff" }), "\ufeff");
  assertEquals(
    hookCloseSummary("logout\nthen\ttabbed reason"),
    "Claude Code SessionEnd: logout then tabbed reason",
  );
  assertEquals(hookCloseSummary(null), "Claude Code SessionEnd: ended");
  // DEL is kept, as `close --summary` keeps it; a reason that is not a string reads as
  // Python's str() prints it.
  assertEquals(hookCloseSummary("a\x7fb"), "Claude Code SessionEnd: a\x7fb");
  const summaryOf = (json: string) => hookCloseSummary(parseHookPayload(json).payload.reason);
  assertEquals(
    summaryOf('{"reason": {"a": 1, "b": [1, 2.5, true, null], "c\'": "x\\ny"}}'),
    `Claude Code SessionEnd: {'a': 1, 'b': [1, 2.5, True, None], "c'": 'x\\ny'}`,
  );
  assertEquals(summaryOf('{"reason": 1e20}'), "Claude Code SessionEnd: 1e+20");
  assertEquals(summaryOf('{"reason": -0.0}'), "Claude Code SessionEnd: -0.0");
  assertEquals(summaryOf('{"reason": [NaN, -Infinity]}'), "Claude Code SessionEnd: [nan, -inf]");
  assertEquals(
    summaryOf('{"reason": 12345678901234567890}'),
    "Claude Code SessionEnd: 12345678901234567890",
  );
  assertEquals(hookCloseSummary(" \u2028 "), "Claude Code SessionEnd: ended");
  const long = hookCloseSummary("é".repeat(500));
  assertEquals([...long].length, "Claude Code SessionEnd: ".length + 200);
  assert(long.endsWith("..."));
});

Deno.test("hooks: a template that lost its shape is refused", () => {
  assertThrows(() => renderHooks("{}", ["/x"]), /hooks-example\.json/);
  assertThrows(() => renderHooks("not json", ["/x"]), /hooks-example\.json/);
});

Deno.test(".gitattributes markers: the owner's lines stay, a stale block is replaced, CRLF becomes LF", () => {
  const block = gitattributesText(null);
  assertEquals(block.split("\n")[0], GITATTRIBUTES_MARKERS.start);
  assertEquals(gitattributesText("*.png binary\r\n"), `*.png binary\n\n${block}`);
  assertEquals(gitattributesText(block), block);
  // A Markdown block in the file is not bimri's .gitattributes block.
  const markdown = `${BLOCK_START}\nx\n${BLOCK_END}\n`;
  assertEquals(gitattributesText(markdown), `${markdown}\n${block}`);
  assertEquals(
    mergeMarkedBlock("a\n# S\nold\n# E\nb\n", "new", "", { start: "# S", end: "# E" }),
    "a\n# S\nnew\n# E\nb\n",
  );
});
