/**
 * Refusals and audit findings carry the reference engine's words, which
 * scripts written against it look for; each still says what to do next,
 * exits as before and writes nothing.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, pathExists, tempStore } from "../helpers/cli.ts";
import { copyFixture, fixturePath } from "../fixtures/fixtures.ts";

Deno.test("read-only doctor names a redirected store folder as a symbolic link", async () => {
  const root = await tempStore();
  assertEquals((await bimri(root, ["migrate"])).code, 0);
  const outside = await Deno.makeTempDir({ prefix: "bimri-outside-revisions-" });
  const revisions = join(root, ".bimri", "revisions");
  Deno.renameSync(revisions, join(outside, "revisions"));
  Deno.symlinkSync(join(outside, "revisions"), revisions, { type: "dir" });
  const before = hashTree(root);
  const r = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(r.code, 1, r.stdout);
  assertMatch(r.stdout, /^ {2}- \.bimri\/revisions cannot be a symbolic link\.$/m);
  assertEquals(diffTrees(before, hashTree(root)), null);
  await Deno.remove(outside, { recursive: true });
});

Deno.test("read-only doctor on a v5.0.2 store says the audit needs format 5.1.0 and changes nothing", async () => {
  const root = await copyFixture("reference-v5.0.2-populated");
  const before = hashTree(root);
  const r = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(r.code, 1, r.stdout + r.stderr);
  assertMatch(
    r.stdout,
    /^ {2}- read-only audit requires memory format v5\.1\.0; found 5\.0\.2\. Run install --target <project> --quiescent \(or migrate\) to upgrade it\.$/m,
  );
  assertEquals(diffTrees(before, hashTree(root)), null);
});

Deno.test("a v3 claim too long to serialize is refused as a serialized entry over 4096 characters", async () => {
  const root = await tempStore();
  const v3 = Deno.readTextFileSync(join(fixturePath("legacy-v3"), "BIMRI.md"));
  const source = v3.replace(
    "- Workspace builds the Acme checkout service.",
    `- ${"z".repeat(4096)}`,
  );
  assert(source !== v3);
  Deno.writeTextFileSync(join(root, "BIMRI.md"), source);
  const r = await bimri(root, ["migrate"]);
  assertEquals(r.code, 2, r.stdout);
  assertMatch(r.stderr, /serialized entry exceeds 4096 characters/);
  assertEquals(Deno.readTextFileSync(join(root, "BIMRI.md")), source);
  assert(!pathExists(join(root, ".bimri", "state.json")));
});

Deno.test("install refuses a redirected legacy/ folder before writing anything", async () => {
  const target = await tempStore("bimri-legacy-link-");
  const outside = await Deno.makeTempDir({ prefix: "bimri-outside-legacy-" });
  Deno.writeTextFileSync(join(outside, "keep.txt"), "outside\n");
  Deno.symlinkSync(outside, join(target, "legacy"), { type: "dir" });
  const r = await bimri(target, ["install", "--target", target], { noRoot: true });
  assertEquals(r.code, 2, r.stdout);
  assertMatch(r.stderr, /^BIMRI ERROR: .*redirected directory: legacy is a symbolic link/);
  assertEquals([...Deno.readDirSync(target)].map((e) => e.name), ["legacy"]);
  assertEquals([...Deno.readDirSync(outside)].map((e) => e.name), ["keep.txt"]);
  for (const path of [target, outside]) await Deno.remove(path, { recursive: true });
});
