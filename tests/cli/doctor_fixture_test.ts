/**
 * The reference's v5.0.2 fixture, with its state stamped 5.1.0 the way an
 * activation does, audits clean: frozen v5.0.2 proposals, decisions (an
 * applying one included), conflicts without `extra` and resolutions without
 * `intended_revision_after` keep their own contract.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree } from "../helpers/cli.ts";
import { copyStore } from "../helpers/healthy_store.ts";

const FIXTURE = fileURLToPath(
  new URL("../fixtures/reference-v5.0.2-populated", import.meta.url),
);

Deno.test({
  name: "an activated v5.0.2 reference store passes the read-only audit and is left untouched",
  async fn() {
    const root = await copyStore(FIXTURE);
    const bimriDir = join(root, ".bimri");
    // The repository's copy holds every revision (tests/fixtures/README.md); the
    // head is byte-identical to bimri.md (FIXTURE-MANIFEST.json).
    const manifest = JSON.parse(Deno.readTextFileSync(join(root, "FIXTURE-MANIFEST.json")));
    const head = join(
      bimriDir,
      "revisions",
      `V${String(manifest.accepted_head_revision).padStart(6, "0")}.md`,
    );
    assertEquals(Deno.readFileSync(head), Deno.readFileSync(join(root, "bimri.md")));
    const statePath = join(bimriDir, "state.json");
    const state = JSON.parse(Deno.readTextFileSync(statePath));
    state.bimri_version = "5.1.0";
    state.cold_current ??= {};
    Deno.writeTextFileSync(statePath, JSON.stringify(state, null, 2) + "\n");
    const before = hashTree(root);
    const r = await bimri(root, ["doctor", "--read-only"]);
    assertEquals(r.code, 0, r.stdout);
    assertMatch(r.stdout, /^BIMRI doctor \(read-only\): PASSED$/m);
    assertMatch(r.stdout, /unfinished applying decision R000011-Q001/);
    assertMatch(r.stdout, /abandoned temporary file \.bimri\/recovery\/\.bimri-tmp-fixture/);
    assertEquals(diffTrees(before, hashTree(root)), null);
  },
});
