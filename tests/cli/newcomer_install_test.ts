/**
 * Install never replaces a project file that is not BIMRI's without saying so
 * (issue 45): a project's own INSTALL.md stays, BIMRI's guide goes to
 * BIMRI-INSTALL.md; any other foreign file it replaces is named loudly with
 * where the original went and how to restore it. Black-box through the CLI.
 */
import { join } from "node:path";
import { assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, tempStore } from "../helpers/cli.ts";
import { TEMPLATES } from "../../templates/mod.ts";

const OWN_GUIDE = "# Building Acme\n\nRun make.\n";

Deno.test("a project's own INSTALL.md is left unchanged; BIMRI's guide is written as BIMRI-INSTALL.md, on install and update", async () => {
  const target = await tempStore();
  Deno.writeTextFileSync(join(target, "INSTALL.md"), OWN_GUIDE);
  const r = await bimri(target, ["install", "--target", target]);
  assertEquals(r.code, 0, r.stderr);
  assertMatch(r.stdout, /^BIMRI 5\.1\.2 installed\.$/m);
  assertMatch(
    r.stdout,
    /^The project's own INSTALL\.md is not BIMRI's: it was left unchanged, and BIMRI's install guide was written as BIMRI-INSTALL\.md\.$/m,
  );
  assertMatch(r.stdout, /portable files written: .*BIMRI-INSTALL\.md/);
  assertEquals(Deno.readTextFileSync(join(target, "INSTALL.md")), OWN_GUIDE);
  assertEquals(Deno.readTextFileSync(join(target, "BIMRI-INSTALL.md")), TEMPLATES["INSTALL.md"]);
  const update = await bimri(target, ["install", "--target", target, "--quiescent"]);
  assertEquals(update.code, 0, update.stderr);
  assertEquals(Deno.readTextFileSync(join(target, "INSTALL.md")), OWN_GUIDE);
  assertMatch(update.stdout, /written as BIMRI-INSTALL\.md/);
});

Deno.test("a BIMRI INSTALL.md (an earlier copy) is replaced in place without a notice", async () => {
  const target = await tempStore();
  Deno.writeTextFileSync(join(target, "INSTALL.md"), "# Install BIMRI\n\nold reference guide\n");
  const r = await bimri(target, ["install", "--target", target]);
  assertEquals(r.code, 0, r.stderr);
  assertEquals(Deno.readTextFileSync(join(target, "INSTALL.md")), TEMPLATES["INSTALL.md"]);
  assertNotMatch(r.stdout, /REPLACED|BIMRI-INSTALL\.md/);
});

Deno.test("a foreign file install must replace is named loudly: what, where the original went, how to restore", async () => {
  const target = await tempStore();
  const own = '{"project": "my own hooks"}\n';
  Deno.writeTextFileSync(join(target, "hooks-example.json"), own);
  const r = await bimri(target, ["install", "--target", target]);
  assertEquals(r.code, 0, r.stderr);
  const m =
    /^REPLACED hooks-example\.json: .* The original is kept at (\S+); to restore it: cp '([^']+)' 'hooks-example\.json'\.$/m
      .exec(r.stdout);
  assertEquals(m !== null, true, r.stdout);
  assertEquals(m![1], m![2]);
  assertEquals(Deno.readTextFileSync(join(target, m![1])), own);
});
