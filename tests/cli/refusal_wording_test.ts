/**
 * Refusals that scripts written against the reference engine look for carry
 * the reference's words inside bimri's own messages, and still write nothing.
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { expectRefused, must, newSubject, startRun, tempStore } from "../helpers/cli.ts";

Deno.test("a bimri.md that is a link, or no v5 view, is refused before a store is created", async () => {
  const root = await tempStore("bimri-wording-view-");
  const outside = await Deno.makeTempFile({ prefix: "bimri-wording-outside-" });
  Deno.writeTextFileSync(outside, "outside sentinel\n");
  Deno.symlinkSync(outside, join(root, "bimri.md"), { type: "file" });
  for (const verb of [["migrate"], ["status"], ["start", "--actor", "codex"]]) {
    await expectRefused(
      root,
      verb,
      /^BIMRI ERROR: bimri\.md cannot be a symbolic link or reparse point;/,
    );
  }
  assertEquals(Deno.readTextFileSync(outside), "outside sentinel\n");
  Deno.removeSync(join(root, "bimri.md"));
  const notes = "# Project Notes\n\nAn ordinary Markdown file with no BIMRI tier headings.\n";
  Deno.writeTextFileSync(join(root, "bimri.md"), notes);
  for (const verb of [["doctor"], ["start", "--actor", "codex"]]) {
    await expectRefused(
      root,
      verb,
      /initial hot memory is invalid: .*exactly one ordered Tier 1, Tier 2 and Tier 3 heading/,
    );
  }
  assertEquals(Deno.readTextFileSync(join(root, "bimri.md")), notes);
  await Deno.remove(root, { recursive: true });
  await Deno.remove(outside);
});

Deno.test("an unreadable or misnamed proposal stops sync in the reference's words", async () => {
  const root = await tempStore("bimri-wording-records-");
  const run = await startRun(root);
  const id = (await must(root, newSubject(run, "wording.key", "A legitimate body."))).trim();
  const path = join(root, ".bimri", "proposals", `${id}.json`);
  const original = Deno.readTextFileSync(path);
  const record = JSON.parse(original);
  record.proposal_id = "../../../outside-proposal-target";
  Deno.writeTextFileSync(path, JSON.stringify(record, null, 2) + "\n");
  await expectRefused(
    root,
    ["sync", "--run", run],
    /invalid proposal ID "\.\.\/\.\.\/\.\.\/outside/,
  );
  Deno.writeTextFileSync(path, original);
  const broken = join(root, ".bimri", "proposals", `${run}-Q999.json`);
  Deno.writeTextFileSync(broken, "{ definitely not JSON");
  await expectRefused(
    root,
    ["sync", "--run", run],
    /Q999\.json\): is unreadable; BIMRI stopped without resetting it: it is not valid JSON/,
  );
  assertEquals(Deno.readTextFileSync(broken), "{ definitely not JSON");
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri", "state.json")));
  assertMatch(String(state.head_revision), /^0$/);
  await Deno.remove(root, { recursive: true });
});
