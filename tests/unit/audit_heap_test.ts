/**
 * The audit's full collections (engine/integrity/heap.ts): off for a small
 * store, and once a large store enables them, a collection really frees
 * unreachable objects. The tests run in order in one process, since enabling
 * lasts for the rest of the process.
 */
import { assert, assertEquals } from "../helpers/assert.ts";
import { collectGarbage } from "../../engine/integrity/heap.ts";
import { prepareAudit } from "../../engine/integrity/doctor.ts";
import { StorePaths } from "../../engine/store/paths.ts";

/** A WeakRef to an object nothing else holds, made in an earlier task so V8 may free it. */
async function unreachable(): Promise<WeakRef<object>> {
  const ref = new WeakRef({ payload: new Array(10_000).fill("x") });
  await new Promise((resolve) => setTimeout(resolve, 0));
  return ref;
}

/** Prepares the audit of a store of `revisions` revisions, then reports whether a collection freed an unreachable object. */
async function collectsAfterPreparing(revisions: number): Promise<boolean> {
  const root = Deno.makeTempDirSync({ prefix: "bimri-heap-" });
  const paths = new StorePaths(root);
  Deno.mkdirSync(paths.folder("revisions"), { recursive: true });
  for (let n = 1; n <= revisions; n++) {
    Deno.writeTextFileSync(`${paths.folder("revisions")}/V${String(n).padStart(6, "0")}.md`, "");
  }
  await prepareAudit(paths);
  Deno.removeSync(root, { recursive: true });
  const ref = await unreachable();
  collectGarbage();
  return ref.deref() === undefined;
}

Deno.test("a small store's audit does not enable full collections", async () => {
  assert(!(await collectsAfterPreparing(999)), "collectGarbage is a no-op until enabled");
});

Deno.test("a store of 1,000 revisions enables them, and a collection frees unreachable objects", async () => {
  assertEquals(await collectsAfterPreparing(1000), true);
});
