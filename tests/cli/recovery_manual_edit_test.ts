/**
 * Manual edits of bimri.md (FORMATS 13.1): every kind of edit (appended line,
 * CRLF-only change, invalid UTF-8, empty file) is preserved byte for byte at
 * a content-addressed recovery file, reused on repeat, recorded in one open
 * recovery review, reported with the exact notice, and the view is restored.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, newSubject, startRun, tempStore } from "../helpers/cli.ts";

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function notice(file: string, conflict: string): string {
  return `BIMRI NOTICE: a direct edit to bimri.md was preserved at ${file} and the generated view was restored. Human decision: ${conflict}.\n`;
}

Deno.test("each kind of manual edit is preserved, reused on repeat and reviewed once", async () => {
  const root = await tempStore();
  await startRun(root);
  const view = join(root, "bimri.md");
  const head = Deno.readFileSync(view);
  const appended = new Uint8Array([...head, ...new TextEncoder().encode("hand edit\n")]);
  const crlf = new TextEncoder().encode(new TextDecoder().decode(head).replaceAll("\n", "\r\n"));
  const invalid = new Uint8Array([0xff, 0xfe, 0x20, 0x62, 0x61, 0x64]);
  const empty = new Uint8Array();
  const cases: [string, Uint8Array, string][] = [
    ["appended line", appended, "md"],
    ["CRLF-only change", crlf, "md"],
    ["invalid UTF-8", invalid, "bin"],
    ["empty file", empty, "md"],
  ];
  const expected: string[] = [];
  for (const [label, bytes, extension] of cases) {
    Deno.writeFileSync(view, bytes);
    const s = await bimri(root, ["status"]);
    assertEquals(s.code, 0, s.stderr);
    const file = `.bimri/recovery/manual-hot-${sha256(bytes)}.${extension}`;
    assertEquals(s.stderr, notice(file, "C000001"), label);
    assertEquals(Deno.readFileSync(join(root, file)), bytes, `${label}: exact bytes`);
    assertEquals(Deno.readFileSync(view), head, `${label}: view restored`);
    expected.push(file);
  }
  // Repeating an edit reuses its file and leaves the review as it was.
  const conflictPath = join(root, ".bimri/conflicts/C000001.json");
  const before = Deno.readFileSync(conflictPath);
  Deno.writeFileSync(view, appended);
  const again = await bimri(root, ["status"]);
  assertEquals(again.stderr, notice(expected[0], "C000001"));
  assertEquals(Deno.readFileSync(conflictPath), before);
  const conflict = JSON.parse(new TextDecoder().decode(before));
  expected.sort();
  assertEquals(conflict.type, "manual-edit");
  assertEquals(conflict.key, "manual.bimri");
  assertEquals(conflict.extra, { recovery_file: expected[0], recovery_files: expected });
  assertEquals(conflict.proposal_ids, []);
  assertEquals(conflict.current_line, null);
  assertEquals(conflict.current_hash, "absent");
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri/state.json")));
  assertEquals(state.conflict_count, 1);
  const doctor = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(doctor.code, 0, doctor.stdout);
});

Deno.test("a view equal to a referenced revision heals silently; a missing view is regenerated", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  await bimri(root, newSubject(run, "a.b", "B."));
  const sync = await bimri(root, ["sync", "--run", run]);
  assertEquals(sync.code, 0, sync.stderr);
  const view = join(root, "bimri.md");
  const head = Deno.readFileSync(view);
  Deno.copyFileSync(join(root, ".bimri/revisions/V000000.md"), view);
  const s = await bimri(root, ["status"]);
  assertEquals(s.stderr, "");
  assertEquals(Deno.readFileSync(view), head);
  Deno.removeSync(view);
  const again = await bimri(root, ["status"]);
  assertEquals(again.stderr, "");
  assertEquals(Deno.readFileSync(view), head);
  assert(!Deno.readDirSync(join(root, ".bimri/recovery")).next().value);
});

Deno.test("read-only doctor reports a manual edit in place and writes nothing; doctor recovers it", async () => {
  const root = await tempStore();
  await startRun(root);
  const view = join(root, "bimri.md");
  Deno.writeTextFileSync(view, "stray edit\n", { append: true });
  const before = hashTree(root);
  const ro = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(ro.code, 1);
  assertEquals(
    ro.stdout,
    // Only errors under FAILED, as the reference prints it (the missing index is a warning).
    "BIMRI doctor (read-only): FAILED\n  - generated bimri.md differs from the accepted head; recovery is needed and read-only doctor left the file unchanged.\n",
  );
  assertEquals(diffTrees(before, hashTree(root)), null);
  const fixed = await bimri(root, ["doctor"]);
  assertEquals(fixed.code, 0, fixed.stdout);
  assertMatch(
    fixed.stderr,
    /^BIMRI NOTICE: a direct edit to bimri\.md was preserved at \.bimri\/recovery\/manual-hot-[0-9a-f]{64}\.md and the generated view was restored\. Human decision: C000001\.$/m,
  );
  assertMatch(fixed.stdout, /^BIMRI doctor: PASSED$/m);
  // Doctor rebuilt the index after a clean audit.
  assert(Deno.readTextFileSync(join(root, ".bimri/index.tsv")).startsWith("id\tkey\tloc\t"));
});

Deno.test("altered manual-edit evidence fails doctor", async () => {
  const root = await tempStore();
  await startRun(root);
  Deno.writeTextFileSync(join(root, "bimri.md"), "edited\r\n");
  await bimri(root, ["status"]);
  const name = [...Deno.readDirSync(join(root, ".bimri/recovery"))][0].name;
  Deno.writeTextFileSync(join(root, ".bimri/recovery", name), "tampered");
  const ro = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(ro.code, 1);
  assertMatch(
    ro.stdout,
    /recovery evidence \.bimri\/recovery\/manual-hot-[0-9a-f]{64}\.md was altered/,
  );
});

Deno.test("a direct edit made while a conflict record is damaged is still put to the owner", async () => {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  assertEquals((await bimri(root, newSubject(seed, "m.key", "Seed."))).code, 0);
  assertEquals((await bimri(root, ["sync", "--run", seed])).code, 0);
  const [a, b] = [await startRun(root, "a"), await startRun(root, "b")];
  for (const [run, text] of [[a, "A."], [b, "B."]]) {
    assertEquals(
      (await bimri(root, ["propose", "--run", run, "--key", "m.key", "--text", text])).code,
      0,
    );
  }
  for (const run of [a, b]) assertEquals((await bimri(root, ["sync", "--run", run])).code, 0);
  const damaged = join(root, ".bimri/conflicts/C000001.json");
  const good = Deno.readFileSync(damaged);
  Deno.writeTextFileSync(damaged, "{broken");
  const edited = new TextEncoder().encode("owner wrote this\n");
  Deno.writeFileSync(join(root, "bimri.md"), edited);
  const status = await bimri(root, ["status"]);
  const file = `.bimri/recovery/manual-hot-${sha256(edited)}.md`;
  // The exact bytes are kept and the review is raised under the next free ID.
  assert(status.stderr.includes(notice(file, "C000002")), status.stderr);
  assertEquals(Deno.readFileSync(join(root, file)), edited);
  Deno.writeFileSync(damaged, good);
  const review = await bimri(root, ["review", "--all"]);
  assertEquals(review.code, 0, review.stdout + review.stderr);
  assertMatch(review.stdout, /C000002/);
  assertMatch(review.stdout, /Recovery reviews: 1/);
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});

Deno.test("start and propose preserve a manual edit and restore a missing view as status does", async () => {
  // start and propose load the view repair only when bimri.md differs from
  // the head (engine/memory/view_on_demand.ts): each must still repair it.
  const root = await tempStore();
  const run = await startRun(root);
  const view = join(root, "bimri.md");
  const head = Deno.readFileSync(view);
  const edited = new Uint8Array([...head, ...new TextEncoder().encode("hand edit\n")]);
  const file = `.bimri/recovery/manual-hot-${sha256(edited)}.md`;
  const verbs: string[][] = [
    ["start", "--actor", "late"],
    ["propose", "--run", run, "--key", "m.key", "--tier", "2", "--new-subject", "--text", "M."],
  ];
  for (const args of verbs) {
    Deno.writeFileSync(view, edited);
    const r = await bimri(root, args);
    assertEquals(r.code, 0, `${args[0]}: ${r.stderr}`);
    assertEquals(r.stderr, notice(file, "C000001"), args[0]);
    assertEquals(Deno.readFileSync(join(root, file)), edited, `${args[0]}: exact bytes`);
    assertEquals(Deno.readFileSync(view), head, `${args[0]}: view restored`);
  }
  Deno.removeSync(view);
  const again = await bimri(root, ["start", "--actor", "again"]);
  assertEquals([again.code, again.stderr], [0, ""]);
  assertEquals(Deno.readFileSync(view), head, "a missing view is regenerated");
});
