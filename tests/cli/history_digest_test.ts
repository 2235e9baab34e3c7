/**
 * Issue 11: `.bimri/audit-integrity-history.{tsv,json}` is derived. Searches
 * give the same answers with it, without it, with it corrupted or stale; the
 * engine keeps it current as it archives; a change it did not make (an archive
 * edited or appended by someone else, the digest itself edited) is never
 * trusted.
 */
import { basename, join } from "node:path";
import { assert, assertEquals } from "../helpers/assert.ts";
import { bimri, copyStore, expectOk, startRun, tempStore } from "../helpers/cli.ts";
import { fingerprint } from "../../engine/store/files.ts";

const DIGEST = ".bimri/audit-integrity-history.tsv";
const CHECKPOINT = ".bimri/audit-integrity-history.json";
/** The single archive month file of a test store. */
function monthFile(root: string): string {
  const names = [...Deno.readDirSync(join(root, ".bimri/archive"))].map((e) => e.name);
  assertEquals(names.length, 1, "one archive month");
  return join(root, ".bimri/archive", names[0]);
}

const QUERIES = ["retry", "history replaced", "cooled", "owner retry idempotent", "zebra"];

/** A store with replaced, closed and (with a small ceiling) cooled generations. */
async function storeWithHistory(): Promise<string> {
  const root = await tempStore();
  const run = await startRun(root, "agent");
  const propose = (args: string[]) => bimri(root, ["propose", "--run", run, ...args]);
  for (let i = 1; i <= 4; i++) {
    expectOk(
      await propose([
        "--tier",
        "2",
        "--new-subject",
        "--key",
        `ops.s${i}`,
        "--text",
        `Subject ${i}: keep the retry path idempotent.`,
      ]),
      "propose",
    );
  }
  expectOk(await bimri(root, ["sync", "--run", run]), "sync");
  expectOk(await propose(["--key", "ops.s1", "--text", "Subject 1: the owner retries."]), "update");
  expectOk(await propose(["--operation", "close", "--key", "ops.s2"]), "close op");
  expectOk(await bimri(root, ["close", "--run", run, "--outcome", "success"]), "close");
  return root;
}

async function answers(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const query of QUERIES) {
    for (const limit of ["1", "20"]) {
      for (const rank of [[], ["--rank"]]) {
        const args = ["recall", "--query", query, "--limit", limit, "--json", ...rank];
        const result = await bimri(root, args);
        out.push(`${result.code}\n${result.stdout}`);
      }
    }
  }
  return out;
}

Deno.test("the engine keeps the digest current, and answers match the full archive read", async () => {
  const root = await storeWithHistory();
  // Written by the engine's own archive appends, never by recall.
  assert(Deno.statSync(join(root, DIGEST)).size > 0, "the digest exists");
  const archive = Deno.readTextFileSync(monthFile(root));
  const rows = archive.split("\n").filter((line) => line.startsWith("[ARCHIVED:")).length;
  assertEquals(Deno.readTextFileSync(join(root, DIGEST)).split("\n").filter(Boolean).length, rows);
  const withDigest = await answers(root);
  const appended = Deno.readTextFileSync(join(root, DIGEST));
  const checkpoint = Deno.readTextFileSync(join(root, CHECKPOINT));
  Deno.removeSync(join(root, CHECKPOINT));
  assertEquals(await answers(root), withDigest, "without the digest");
  Deno.writeTextFileSync(join(root, CHECKPOINT), checkpoint);
  assertEquals(await answers(root), withDigest, "restored digest");
  // The digest really is what answers: one vouched for by a forged checkpoint is believed.
  const digestPath = join(root, DIGEST);
  Deno.writeTextFileSync(
    digestPath,
    Deno.readTextFileSync(digestPath).replaceAll("idempotent", "zzzzzzzzzz"),
  );
  const forged = JSON.parse(checkpoint);
  forged.digest = fingerprint(Deno.lstatSync(digestPath), undefined, false);
  Deno.writeTextFileSync(join(root, CHECKPOINT), JSON.stringify(forged) + "\n");
  const fooled = await bimri(root, ["recall", "--query", "zzzzzzzzzz", "--json"]);
  assert(JSON.parse(fooled.stdout).total > 0, "the forged digest was used");
  // With the checkpoint gone, index rebuilds from the archive exactly what the
  // engine's appends wrote (a digest that still vouches is left as it is).
  Deno.removeSync(join(root, CHECKPOINT));
  expectOk(await bimri(root, ["index"]), "index");
  assertEquals(Deno.readTextFileSync(join(root, DIGEST)), appended);
  assertEquals(await answers(root), withDigest, "rebuilt digest");
});

Deno.test("a digest edited in place, or an archive changed by someone else, is not trusted", async () => {
  const root = await storeWithHistory();
  const truth = await answers(root);
  // Same size, different text: a digest that claims every row matches "zebra".
  const digestPath = join(root, DIGEST);
  const digest = Deno.readTextFileSync(digestPath);
  Deno.writeTextFileSync(digestPath, digest.replaceAll("retry", "zebra"));
  assertEquals(await answers(root), truth, "edited digest");
  expectOk(await bimri(root, ["index"]), "index");
  // A row appended to the archive by another writer is found at once.
  const archivePath = monthFile(root);
  const outsider =
    "[ARCHIVED:2026-12-02] [BY:R000009-Q001] [replaced] [R000009-E001] [K:ops.outsider] [I:3] [active] [T:working] [SRC:agent] [F:R000009] [L:R000009] [] Zebra crossing notes. -> .bimri/log/R000009.md\n";
  Deno.writeTextFileSync(archivePath, outsider, { append: true });
  const zebra = await bimri(root, ["recall", "--query", "zebra", "--json"]);
  assertEquals(JSON.parse(zebra.stdout).total, 1, zebra.stdout);
  // The next archiving commit does not extend a digest that no longer vouches for the month.
  const run = await startRun(root, "second");
  expectOk(
    await bimri(root, ["propose", "--run", run, "--key", "ops.s3", "--text", "Subject 3 again."]),
    "p",
  );
  expectOk(await bimri(root, ["sync", "--run", run]), "sync");
  const after = JSON.parse((await bimri(root, ["recall", "--query", "zebra", "--json"])).stdout);
  assertEquals([after.total, after.matches[0].key], [1, "ops.outsider"]);
  let stale = true;
  try {
    Deno.statSync(join(root, CHECKPOINT));
  } catch {
    stale = false;
  }
  assert(!stale, "the stale digest was dropped, not extended");
});

/** True when the checkpoint vouches for the month file and the digest as they are now. */
function vouches(root: string): boolean {
  const checkpoint = JSON.parse(Deno.readTextFileSync(join(root, CHECKPOINT)));
  const month = monthFile(root);
  const name = basename(month);
  const print = (path: string) => fingerprint(Deno.lstatSync(path), undefined, false);
  return Object.keys(checkpoint.months).length === 1 &&
    checkpoint.months[name] === print(month) &&
    checkpoint.digest === print(join(root, DIGEST));
}

async function openAndClose(root: string, actor: string): Promise<void> {
  const run = await startRun(root, actor);
  expectOk(await bimri(root, ["close", "--run", run, "--outcome", "success"]), "close");
}

Deno.test("a close renews a digest that no longer vouches: a copied store, another engine's row", async () => {
  const original = await storeWithHistory();
  const truth = await answers(original);
  const digest = Deno.readTextFileSync(join(original, DIGEST));
  assert(vouches(original), "the engine's own digest vouches");
  // A copy (or a clone) gives every file a new inode: the digest vouches for nothing there.
  const root = await copyStore(original);
  assert(!vouches(root), "a copied digest does not vouch");
  assertEquals(await answers(root), truth, "searched without the digest");
  // A start alone (and every read) leaves it as it is; the next close rebuilds it.
  await startRun(root, "reader");
  assert(!vouches(root), "start does not rebuild");
  await openAndClose(root, "closer");
  assert(vouches(root), "the close renewed the digest");
  assertEquals(Deno.readTextFileSync(join(root, DIGEST)), digest, "the same rows as before");
  assertEquals(await answers(root), truth, "searched with the renewed digest");
  // A row another engine appended: the next close takes it into the digest.
  const outsider =
    "[ARCHIVED:2026-12-02] [BY:R000009-Q001] [replaced] [R000009-E001] [K:ops.outsider] [I:3] [active] [T:working] [SRC:agent] [F:R000009] [L:R000009] [] Zebra crossing notes. -> .bimri/log/R000009.md\n";
  Deno.writeTextFileSync(monthFile(root), outsider, { append: true });
  await openAndClose(root, "closer");
  assert(vouches(root), "renewed after the outside append");
  const rows = Deno.readTextFileSync(join(root, DIGEST)).split("\n").filter(Boolean);
  assertEquals(rows.length, digest.split("\n").filter(Boolean).length + 1);
  const zebra = JSON.parse((await bimri(root, ["recall", "--query", "zebra", "--json"])).stdout);
  assertEquals([zebra.total, zebra.matches[0].key], [1, "ops.outsider"]);
});

Deno.test("a digest that cannot be renewed leaves the close as it would be without it", async () => {
  const root = await copyStore(await storeWithHistory());
  // A month file that is not UTF-8: searches refuse it; the close must not.
  Deno.writeFileSync(monthFile(root), new Uint8Array([0xff, 0x0a]), { append: true });
  await openAndClose(root, "closer");
  assert(!vouches(root), "left stale");
  const refused = await bimri(root, ["recall", "--query", "retry"]);
  assertEquals(refused.code, 2, refused.stderr);
});
