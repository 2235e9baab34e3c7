/**
 * The head check (`audit-integrity-head.json`) must not vouch for a head
 * revision edited in the same second it was proven: Deno reports ctime in
 * whole seconds, so a same-size edit with its mtime put back keeps every
 * field of the file's fingerprint. Such a head is hashed again, and a forged
 * one is refused instead of served and built into the next revision.
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, must, newSubject, startRun, tempStore } from "../helpers/cli.ts";

Deno.test("a head forged in the second it was written, mtime put back, is refused", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  await must(root, newSubject(run, "k.a", "Genuine value"));
  // Start the commit at a fresh second so the forgery below falls in the same one.
  await new Promise((resolve) => setTimeout(resolve, 1020 - (Date.now() % 1000)));
  await must(root, ["sync", "--run", run]);
  const head = join(root, ".bimri/revisions/V000001.md");
  const info = Deno.statSync(head);
  const text = Deno.readTextFileSync(head);
  const forged = text.replace("Genuine value", "FORGED! value");
  assertEquals(forged.length, text.length);
  Deno.writeTextFileSync(head, forged);
  Deno.utimeSync(head, info.atime!, info.mtime!);
  assertEquals(Deno.statSync(head).mtime?.getTime(), info.mtime?.getTime());

  const get = await bimri(root, ["get", "--key", "k.a"]);
  assertEquals(get.code, 2, get.stdout);
  assertMatch(get.stderr, /state head hash does not match the accepted head revision/);
  const start = await bimri(root, ["start", "--actor", "b"]);
  assertEquals(start.code, 2, start.stdout);
});

Deno.test("a head proven in its own second is proven again by a later writer, then trusted", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  await must(root, newSubject(run, "k.b", "Value"));
  await must(root, ["sync", "--run", run]);
  const head = join(root, ".bimri/revisions/V000001.md");
  const record = () =>
    JSON.parse(Deno.readTextFileSync(join(root, ".bimri/audit-integrity-head.json"))) as {
      revision: number;
      proven_ms: number;
    };
  const ctimeSecondEnd = Math.floor(Deno.statSync(head).ctime!.getTime() / 1000) * 1000 + 1000;
  // The commit proved its own head in the second it wrote it: that proof vouches only after a hash.
  assertEquals(record().revision, 1);
  assertEquals(record().proven_ms < ctimeSecondEnd, true);
  // Once that second is over, the next writer hashes it once more and records a proof that holds.
  await new Promise((resolve) =>
    setTimeout(resolve, Math.max(0, ctimeSecondEnd - Date.now()) + 20)
  );
  await must(root, ["journal", "--run", run, "--text", "later"]);
  await must(root, ["start", "--actor", "b"]);
  assertEquals(record().revision, 1);
  assertEquals(record().proven_ms >= ctimeSecondEnd, true, JSON.stringify(record()));
});
