import { createHash } from "node:crypto";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, pathExists, tempStore } from "../helpers/cli.ts";

const HISTORICAL_HEADER = "<!-- BIMRI v5 | Generated view. Do not edit directly. -->";
const CURRENT_HEADER = "<!-- BIMRI v5.0.2 | Generated view. Do not edit directly. -->";

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A migrated 5.1.0 store whose accepted head V000000 is rewritten to `edit(head)`. */
async function currentStoreWithHead(
  edit: (head: string) => string,
): Promise<{ root: string; head: string }> {
  const root = await tempStore();
  assertEquals((await bimri(root, ["migrate"])).code, 0);
  const revision = join(root, ".bimri/revisions/V000000.md");
  const head = edit(Deno.readTextFileSync(revision));
  Deno.writeTextFileSync(revision, head);
  Deno.writeTextFileSync(join(root, "bimri.md"), head);
  const statePath = join(root, ".bimri/state.json");
  const state = JSON.parse(Deno.readTextFileSync(statePath));
  state.head_hash = sha256(new TextEncoder().encode(head));
  Deno.writeTextFileSync(statePath, JSON.stringify(state, null, 2) + "\n");
  return { root, head };
}

Deno.test("migrate of a current store gives stale historical view metadata its own revision, keeping an edited view", async () => {
  const { root } = await currentStoreWithHead((head) =>
    head.replace(CURRENT_HEADER, HISTORICAL_HEADER).replace(
      "Soft target: state.json.",
      "Cap: 12.",
    )
  );
  const edit = "An owner's edit of the stale view.\n";
  Deno.writeTextFileSync(join(root, "bimri.md"), edit);
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stderr);
  assertMatch(result.stdout, /Memory metadata normalized in immutable revision V000001\.md\./);
  assertMatch(result.stderr, /direct edit to bimri\.md was preserved/);
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri/state.json")));
  assertEquals(state.head_revision, 1);
  const normalized = Deno.readTextFileSync(join(root, ".bimri/revisions/V000001.md"));
  assert(normalized.includes(CURRENT_HEADER) && !normalized.includes("Cap: 12."), normalized);
  assertEquals(Deno.readTextFileSync(join(root, "bimri.md")), normalized);
  const kept = [...Deno.readDirSync(join(root, ".bimri/recovery"))]
    .filter((e) => e.name.startsWith("manual-hot-"));
  assertEquals(kept.length, 1);
  assertEquals(Deno.readTextFileSync(join(root, ".bimri/recovery", kept[0].name)), edit);
  const again = await bimri(root, ["migrate"]);
  assertMatch(again.stdout, /existing v5\.1\.0 verified; no migration performed/);
  assert(!pathExists(join(root, ".bimri/revisions/V000002.md")));
});

Deno.test("migrate of a current store refuses when the metadata revision's number holds other bytes", async () => {
  const { root, head } = await currentStoreWithHead((h) =>
    h.replace(CURRENT_HEADER, HISTORICAL_HEADER)
  );
  const state = Deno.readFileSync(join(root, ".bimri/state.json"));
  const other = "unrelated revision bytes\n";
  Deno.writeTextFileSync(join(root, ".bimri/revisions/V000001.md"), other);
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 2);
  assertMatch(result.stderr, /metadata revision conflicts/);
  assertEquals(Deno.readFileSync(join(root, ".bimri/state.json")), state);
  assertEquals(Deno.readTextFileSync(join(root, "bimri.md")), head);
  assertEquals(Deno.readTextFileSync(join(root, ".bimri/revisions/V000001.md")), other);
});

Deno.test("migrate of a current store refuses a head with a duplicate key before writing", async () => {
  const anchor =
    "<!-- Confirmed facts, decisions, preferences and rules. Soft target: state.json. -->";
  const { root } = await currentStoreWithHead((head) =>
    head.replace(
      anchor,
      `${anchor}\n\n[R0-E1] [K:twice.key] [fact] [T:working] [SRC:legacy] [] One.\n\n` +
        "[R0-E2] [K:twice.key] [fact] [T:working] [SRC:legacy] [] Two.",
    )
  );
  const index = join(root, ".bimri/index.tsv");
  Deno.writeTextFileSync(index, "sentinel\n");
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 2);
  assertMatch(
    result.stderr,
    /accepted head memory grammar is invalid: .*duplicate memory key: twice\.key/,
  );
  assert(!result.stdout.includes("Validation: PASSED"));
  assertEquals(Deno.readTextFileSync(index), "sentinel\n");
});

Deno.test("migrate of a v4 state without bimri.md says no replacement memory was created", async () => {
  const root = await tempStore();
  Deno.mkdirSync(join(root, ".bimri"));
  const state = JSON.stringify({ bimri_version: "4.0", project_id: "p", run_count: 2 }) + "\n";
  Deno.writeTextFileSync(join(root, ".bimri/state.json"), state);
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 2);
  assertMatch(result.stderr, /v4 state exists but bimri\.md is missing/);
  assertMatch(result.stderr, /stopped without creating replacement memory/);
  assert(!pathExists(join(root, "bimri.md")));
  assertEquals(Deno.readTextFileSync(join(root, ".bimri/state.json")), state);
});
