/**
 * No store appears by accident (issue 45) and a parent folder's store owned
 * by another user is not used (issue 38): black-box through the CLI.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, hashTree, must, pathExists, tempStore } from "../helpers/cli.ts";

Deno.test("a --root that does not exist is refused with the next step and nothing is created", async () => {
  const base = await tempStore();
  const missing = join(base, "typo", "project");
  for (const args of [["status"], [], ["recall", "--key", "k"], ["doctor"]]) {
    const r = await bimri(missing, args, { cwd: base });
    assertEquals(r.code, 2, r.stdout);
    assertMatch(r.stderr, /^BIMRI ERROR: --root .*typo.*does not exist\. .*mkdir -p/m);
    assertEquals(pathExists(join(base, "typo")), false);
  }
  assertEquals([...Deno.readDirSync(base)].length, 0);
});

Deno.test("start on a --root that does not exist creates it, as the reference does, and says so on stderr", async () => {
  // The reference's scripts and tests start (and migrate, and run hooks) on a fresh --root folder.
  const base = await tempStore();
  const missing = join(base, "fresh", "project");
  const r = await bimri(missing, ["start", "--actor", "codex"], { cwd: base });
  assertEquals(r.code, 0, r.stderr);
  assertMatch(r.stdout, /^BIMRI RUN HANDLE: R000001$/m);
  assertMatch(r.stderr, /^BIMRI: created a new memory store in .*fresh.project/m);
  assertEquals(pathExists(join(missing, ".bimri", "state.json")), true);
});

Deno.test("a BIMRI_ROOT that does not exist is refused and nothing is created", async () => {
  const base = await tempStore();
  const missing = join(base, "nope");
  const r = await bimri(base, ["status"], {
    noRoot: true,
    cwd: base,
    env: { BIMRI_ROOT: missing },
  });
  assertEquals(r.code, 2, r.stdout);
  assertMatch(r.stderr, /^BIMRI ERROR: BIMRI_ROOT .*nope does not exist/m);
  assertEquals(pathExists(missing), false);
});

Deno.test("status in an empty folder creates the store as the reference does and says so on stderr", async () => {
  const root = await tempStore();
  const first = await bimri(root, ["status"]);
  assertEquals(first.code, 0, first.stderr);
  assertMatch(first.stdout, /^BIMRI engine v5\.1\.2 \| memory format v5\.1\.0 \| revision V000000/);
  assertMatch(
    first.stderr,
    /^BIMRI: created a new memory store in .* \(\.bimri\/ and bimri\.md\)/m,
  );
  const again = await bimri(root, ["status"]);
  assertNotMatch(again.stderr, /created a new memory store/);
});

Deno.test("a store created beside an owner's bimri.md never suggests deleting that file", async () => {
  const root = await tempStore();
  const seed = await tempStore();
  await must(seed, ["status"]);
  Deno.copyFileSync(join(seed, "bimri.md"), join(root, "bimri.md"));
  const r = await bimri(root, ["status"]);
  assertEquals(r.code, 0, r.stderr);
  assertMatch(r.stderr, /created a new memory store in .* \(\.bimri\/\)\./);
  assertNotMatch(r.stderr, /delete \.bimri\/ and bimri\.md/);
});

Deno.test("share init outside a git work tree is refused with the next step, nothing written", async () => {
  const root = await tempStore();
  await must(root, ["status"]);
  const before = hashTree(root);
  const r = await bimri(root, ["share", "init", "--yes"]);
  assertEquals(r.code, 2, r.stdout);
  assertMatch(r.stderr, /^BIMRI ERROR: .* is not inside a git work tree.*`git init`/m);
  assertEquals(JSON.stringify([...hashTree(root)]), JSON.stringify([...before]));
});

function processUid(): number | null {
  try {
    const out = new Deno.Command("id", { args: ["-u"], stdout: "piped" }).outputSync();
    return out.success ? Number(new TextDecoder().decode(out.stdout).trim()) : null;
  } catch {
    return null;
  }
}

Deno.test({
  name:
    "a store in a parent folder owned by another user is not used; --root and BIMRI_ROOT still work",
  ignore: Deno.build.os === "windows" || processUid() !== 0,
  async fn() {
    const parent = await tempStore();
    await must(parent, ["status"]);
    for (const entry of walk(join(parent, ".bimri"))) Deno.chownSync(entry, 65534, 65534);
    Deno.chownSync(join(parent, ".bimri"), 65534, 65534);
    const sub = join(parent, "work", "deep");
    Deno.mkdirSync(sub, { recursive: true });
    const before = hashTree(parent);
    const climbed = await bimri(sub, ["status"], {
      noRoot: true,
      cwd: sub,
      env: { BIMRI_ROOT: "" },
    });
    assertEquals(climbed.code, 2, climbed.stdout);
    assertMatch(
      climbed.stderr,
      /^BIMRI ERROR: the nearest memory store .*\.bimri belongs to another user \(uid 65534\).*--root /m,
    );
    assert(climbed.stderr.includes(join(parent, ".bimri")), climbed.stderr);
    assertEquals(JSON.stringify([...hashTree(parent)]), JSON.stringify([...before]));
    assertEquals(pathExists(join(sub, ".bimri")), false);
    const named = await must(parent, ["status"], { cwd: sub });
    assertMatch(named, /revision V000000/);
    const env = await must(sub, ["status"], {
      noRoot: true,
      cwd: sub,
      env: { BIMRI_ROOT: parent },
    });
    assertMatch(env, /revision V000000/);
  },
});

function* walk(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    yield p;
    if (e.isDirectory) yield* walk(p);
  }
}
