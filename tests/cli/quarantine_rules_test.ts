/**
 * The rules of quarantine-authority and restore-authority: refusals write
 * nothing (no approval, valid record, unreferenced ID, bad kind), a replacement
 * that fails validation stays behind its stub without a receipt, linked
 * quarantines restore in stages until the whole graph validates, a restore
 * is never staged past a record that is damaged but not quarantined, and the
 * replacement must be a regular file, never a symbolic link.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, tempStore } from "../helpers/cli.ts";
import { buildHealthyStore, copyStore, recordFile } from "../helpers/healthy_store.ts";

const healthy = buildHealthyStore();

Deno.test("refused quarantines write nothing", async () => {
  const s = await healthy;
  const root = await copyStore(s.root);
  const before = hashTree(root);
  const cases: [string[], RegExp][] = [
    [["--kind", "decision", "--id", `${s.closedRun}-Q001`], /--human-approved/],
    [["--kind", "decision", "--id", `${s.closedRun}-Q001`, "--human-approved"], /is valid/],
    [
      ["--kind", "proposal", "--id", "R000099-Q001", "--human-approved"],
      /no run log, dependent record or conflict counter refers/,
    ],
    [["--kind", "conflict", "--id", "C000009", "--human-approved"], /nothing was quarantined/],
    [
      ["--kind", "journal", "--id", "R000001-E001", "--human-approved"],
      /argument --kind: invalid choice: 'journal' \(choose from /,
    ],
    [["--kind", "proposal", "--id", "../../etc", "--human-approved"], /invalid proposal ID/],
  ];
  for (const [args, pattern] of cases) {
    const r = await bimri(root, ["quarantine-authority", ...args]);
    assertEquals(r.code, 2, args.join(" "));
    assertMatch(r.stderr, /^BIMRI ERROR: /);
    assertMatch(r.stderr, pattern);
  }
  const restore = await bimri(root, [
    "restore-authority",
    "--kind",
    "decision",
    "--id",
    `${s.closedRun}-Q001`,
    "--from",
    recordFile(root, "decisions", `${s.closedRun}-Q001`),
    "--human-approved",
  ]);
  assertEquals(restore.code, 2);
  assertMatch(restore.stderr, /is not quarantined/);
  const filter = (t: Map<string, string>) =>
    new Map([...t].filter(([k]) => !k.startsWith(".bimri/audit-")));
  assertEquals(diffTrees(filter(before), filter(hashTree(root))), null);
});

Deno.test("linked quarantines restore in stages; an invalid replacement stays behind its stub", async () => {
  const s = await healthy;
  const root = await copyStore(s.root);
  const proposalId = `${s.loserRun}-Q001`;
  const proposalPath = recordFile(root, "proposals", proposalId);
  const conflictPath = recordFile(root, "conflicts", "C000001");
  const reviewedProposal = join(root, "proposal.json");
  const reviewedConflict = join(root, "conflict.json");
  Deno.copyFileSync(proposalPath, reviewedProposal);
  Deno.copyFileSync(conflictPath, reviewedConflict);
  Deno.writeTextFileSync(proposalPath, "{");
  Deno.writeTextFileSync(conflictPath, "");
  for (const [kind, id] of [["proposal", proposalId], ["conflict", "C000001"]]) {
    const q = await bimri(root, quarantineArgs(kind, id));
    assertEquals(q.code, 0, q.stderr);
  }
  // A replacement whose candidate hash is wrong fails the shadow graph check.
  const wrong = JSON.parse(Deno.readTextFileSync(reviewedConflict));
  wrong.proposal_hashes[proposalId] = "0".repeat(64);
  const wrongPath = join(root, "wrong.json");
  Deno.writeTextFileSync(wrongPath, JSON.stringify(wrong));
  const stubBefore = Deno.readFileSync(conflictPath);
  const recoveryBefore = [...Deno.readDirSync(join(root, ".bimri/recovery"))].length;
  // First the proposal, so the conflict's candidate check can run.
  const staged = await bimri(root, [
    "restore-authority",
    "--kind",
    "proposal",
    "--id",
    proposalId,
    "--from",
    reviewedProposal,
    "--human-approved",
  ]);
  assertEquals(staged.code, 0, staged.stderr);
  assertMatch(staged.stdout, /^BIMRI: restored staged (proposal|decision) /m);
  assertMatch(staged.stdout, /^Staged: shared-memory writes stay paused/m);
  assertMatch(staged.stdout, /conflict C000001/);
  const sync = await bimri(root, ["sync", "--run", s.winnerRun]);
  assertEquals(sync.code, 2, "writes stay paused while a linked stub remains");
  const bad = await bimri(root, [
    "restore-authority",
    "--kind",
    "conflict",
    "--id",
    "C000001",
    "--from",
    wrongPath,
    "--human-approved",
  ]);
  assertEquals(bad.code, 2);
  assertMatch(bad.stderr, /stays behind its quarantine stub and no receipt was written/);
  assertEquals(Deno.readFileSync(conflictPath), stubBefore);
  assertEquals(
    [...Deno.readDirSync(join(root, ".bimri/recovery"))].length,
    recoveryBefore + 1,
    "only the proposal's receipt exists",
  );
  const good = await bimri(root, [
    "restore-authority",
    "--kind",
    "conflict",
    "--id",
    "C000001",
    "--from",
    reviewedConflict,
    "--human-approved",
  ]);
  assertEquals(good.code, 0, good.stderr);
  // The reference's words, which scripts may look for.
  assertMatch(good.stdout, /^BIMRI: restored validated conflict C000001; receipt /);
  assertMatch(good.stdout, /Authority validates again/);
  const doctor = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(doctor.code, 0, doctor.stdout);
  const receipts = [...Deno.readDirSync(join(root, ".bimri/recovery"))]
    .filter((e) => e.name.startsWith("authority-restore-"));
  assertEquals(receipts.length, 2);
  // Altered evidence fails doctor even though authority itself is valid again.
  const evidence = [...Deno.readDirSync(join(root, ".bimri/recovery"))]
    .find((e) => e.name.startsWith("authority-conflict-"))!;
  Deno.writeTextFileSync(join(root, ".bimri/recovery", evidence.name), "x");
  const altered = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(altered.code, 1);
  assert(altered.stdout.includes(evidence.name), altered.stdout);
});

/** The store's files, without the derived audit caches a read may refresh. */
function authorityTree(root: string): Map<string, string> {
  return new Map([...hashTree(root)].filter(([k]) => !k.startsWith(".bimri/audit-")));
}

function quarantineArgs(kind: string, id: string): string[] {
  return ["quarantine-authority", "--kind", kind, "--id", id, "--human-approved"];
}

function restoreArgs(kind: string, id: string, from: string): string[] {
  return ["restore-authority", "--kind", kind, "--id", id, "--from", from, "--human-approved"];
}

Deno.test("restore refuses a replacement that is a symbolic link or not a regular file", async () => {
  const s = await healthy;
  const root = await copyStore(s.root);
  const id = `${s.closedRun}-Q001`;
  const path = recordFile(root, "decisions", id);
  // The reviewed copy lives outside the store, as an owner's would.
  const outside = await tempStore("bimri-reviewed-");
  const reviewed = join(outside, "reviewed.json");
  Deno.copyFileSync(path, reviewed);
  const link = join(outside, "link.json");
  Deno.symlinkSync(reviewed, link, { type: "file" });
  Deno.writeTextFileSync(path, "");
  const q = await bimri(root, quarantineArgs("decision", id));
  assertEquals(q.code, 0, q.stderr);
  const before = authorityTree(root);
  const viaLink = await bimri(root, restoreArgs("decision", id, link));
  assertEquals(viaLink.code, 2, viaLink.stdout);
  assertMatch(viaLink.stderr, /^BIMRI ERROR: .*is a symbolic link.*copy the reviewed record/);
  const folder = await bimri(root, restoreArgs("decision", id, outside));
  assertEquals(folder.code, 2, folder.stdout);
  assertMatch(folder.stderr, /^BIMRI ERROR: .*is not a regular file/);
  assertEquals(diffTrees(before, authorityTree(root)), null, "a refused restore writes nothing");
  // The same bytes from the regular file restore: only the link was at fault.
  const direct = await bimri(root, restoreArgs("decision", id, reviewed));
  assertEquals(direct.code, 0, direct.stderr);
  assertMatch(direct.stdout, /Authority validates again/);
});

Deno.test("restore is not staged while another record is damaged rather than quarantined", async () => {
  const s = await healthy;
  const root = await copyStore(s.root);
  const [first, second] = [`${s.closedRun}-Q001`, `${s.closedRun}-Q002`];
  const outside = await tempStore("bimri-reviewed-");
  const reviewed = (id: string) => join(outside, `${id}.json`);
  for (const id of [first, second]) {
    Deno.copyFileSync(recordFile(root, "decisions", id), reviewed(id));
    Deno.writeTextFileSync(recordFile(root, "decisions", id), "");
  }
  const quarantine = (id: string) => bimri(root, quarantineArgs("decision", id));
  const quarantined = await quarantine(first);
  assertEquals(quarantined.code, 0);
  assertMatch(
    quarantined.stdout,
    /^BIMRI: quarantined decision \S+ \(file\); exact bytes preserved at /,
  );
  const before = authorityTree(root);
  const refused = await bimri(root, restoreArgs("decision", first, reviewed(first)));
  assertEquals(refused.code, 2, refused.stdout);
  assertMatch(refused.stderr, /^BIMRI ERROR: /);
  assert(refused.stderr.includes(`decision ${second}`), refused.stderr);
  assertMatch(refused.stderr, /quarantine or repair them first/);
  assertEquals(diffTrees(before, authorityTree(root)), null, "no receipt, no replacement");
  // Once the other record is quarantined too, the same restore stages.
  assertEquals((await quarantine(second)).code, 0);
  const staged = await bimri(root, restoreArgs("decision", first, reviewed(first)));
  assertEquals(staged.code, 0, staged.stderr);
  assertMatch(staged.stdout, /^BIMRI: restored staged (proposal|decision) /m);
  assertMatch(staged.stdout, /^Staged: shared-memory writes stay paused/m);
  assert(staged.stdout.includes(`decision ${second}`), staged.stdout);
  const last = await bimri(root, restoreArgs("decision", second, reviewed(second)));
  assertEquals(last.code, 0, last.stderr);
  assertMatch(last.stdout, /Authority validates again/);
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});

Deno.test("an answered conflict that lost both its answer and the chosen decision can be quarantined and restored in either order", async () => {
  const s = await healthy;
  for (const order of [["resolution", "decision"], ["decision", "resolution"]]) {
    const root = await copyStore(s.root);
    const chosen = `${s.loserRun}-Q001`;
    const r = await bimri(root, ["resolve", "C000001", "--choose", chosen, "--human-approved"]);
    assertEquals(r.code, 0, r.stderr);
    const outside = await tempStore("bimri-reviewed-");
    const files: Record<string, [string, string]> = {
      decision: [chosen, recordFile(root, "decisions", chosen)],
      resolution: ["C000001", recordFile(root, "resolutions", "C000001")],
    };
    for (const [kind, [, path]] of Object.entries(files)) {
      Deno.copyFileSync(path, join(outside, `${kind}.json`));
      Deno.removeSync(path);
    }
    // The head still carries the chosen value: evidence that an answer existed.
    for (const kind of order) {
      const [id] = files[kind];
      const q = await bimri(root, quarantineArgs(kind, id));
      assertEquals(q.code, 0, `${order}: quarantine ${kind}: ${q.stderr}`);
    }
    for (const kind of order) {
      const [id] = files[kind];
      const restored = await bimri(root, restoreArgs(kind, id, join(outside, `${kind}.json`)));
      assertEquals(restored.code, 0, `${order}: restore ${kind}: ${restored.stderr}`);
    }
    const doctor = await bimri(root, ["doctor", "--read-only"]);
    assertEquals(doctor.code, 0, `${order}: ${doctor.stdout}`);
  }
});
