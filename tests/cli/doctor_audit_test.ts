/**
 * doctor / validate: the read-only audit writes nothing at all (not even on a
 * folder without a store), failures exit 1 with one line per error, warnings
 * keep PASSED, and the v5.0.2-era shapes stay valid.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import {
  bimri,
  diffTrees,
  hashTree,
  must,
  newSubject,
  readStoreJson,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { buildHealthyStore, copyStore, recordFile } from "../helpers/healthy_store.ts";

const healthy = buildHealthyStore();

Deno.test("read-only doctor on a folder without a store creates nothing", async () => {
  const root = await tempStore();
  const r = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(r.code, 1);
  assertEquals(
    r.stdout,
    "BIMRI doctor (read-only): FAILED\n  - existing .bimri directory is missing or unsafe.\n",
  );
  assertEquals([...Deno.readDirSync(root)].length, 0);
});

Deno.test("read-only doctor passes a healthy store and writes nothing; validate is an alias", async () => {
  const root = await copyStore((await healthy).root);
  const before = hashTree(root);
  const r = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(r.code, 0, r.stdout);
  assertEquals(
    r.stdout,
    "BIMRI doctor (read-only): PASSED\n  - index is missing; run index to rebuild it.\n",
  );
  assertEquals(diffTrees(before, hashTree(root)), null);
  const v = await bimri(root, ["--json", "validate", "--read-only"]);
  const doc = JSON.parse(v.stdout);
  assertEquals(doc.passed, true);
  assertEquals(doc.read_only, true);
  assertEquals(doc.errors, []);
  assertEquals(diffTrees(before, hashTree(root)), null);
});

Deno.test("doctor fails on damaged state, head and index, and warns on orphans and litter", async () => {
  const base = (await healthy).root;
  const state = await copyStore(base);
  Deno.writeTextFileSync(join(state, ".bimri/state.json"), "{ not json");
  const before = hashTree(state);
  const s = await bimri(state, ["doctor", "--read-only"]);
  assertEquals(s.code, 1);
  assertMatch(
    s.stdout,
    /^ {2}- state\.json is unreadable \(not valid JSON\); BIMRI stopped without resetting it/m,
  );
  assertEquals(diffTrees(before, hashTree(state)), null);
  // Plain doctor opens the store first, as the reference's load does: it stops
  // with exit 2 and resets nothing (--read-only above is the report).
  const repair = await bimri(state, ["doctor"]);
  assertEquals(repair.code, 2, repair.stdout);
  assertEquals(repair.stdout, "");
  assertMatch(
    repair.stderr,
    /^BIMRI ERROR: .*state\.json is unreadable \(not valid JSON\).*doctor --read-only/,
  );
  assertEquals(diffTrees(before, hashTree(state)), null);

  const head = await copyStore(base);
  const stateDoc = JSON.parse(Deno.readTextFileSync(join(head, ".bimri/state.json")));
  const headFile = join(
    head,
    ".bimri/revisions",
    `V${String(stateDoc.head_revision).padStart(6, "0")}.md`,
  );
  Deno.writeTextFileSync(headFile, Deno.readTextFileSync(headFile).replace("Winner.", "Changed."));
  Deno.writeTextFileSync(join(head, ".bimri/index.tsv"), "only\tthree\tcolumns\n");
  Deno.writeTextFileSync(join(head, ".bimri/revisions/V000099.md"), "# orphan\n");
  Deno.writeTextFileSync(join(head, ".bimri/recovery/.bimri-tmp-abc"), "");
  const h = await bimri(head, ["doctor", "--read-only"]);
  assertEquals(h.code, 1);
  assertMatch(h.stdout, /^ {2}- accepted head revision does not match state\.head_hash\.$/m);
  assertMatch(h.stdout, /^ {2}- index\.tsv has rows without 8 columns/m);
  // Warnings (an orphan revision, litter) are not listed under FAILED; --json carries them.
  assertNotMatch(h.stdout, /unreferenced immutable revision|abandoned temporary file/);
  const hj = JSON.parse((await bimri(head, ["doctor", "--read-only", "--json"])).stdout);
  assertEquals(
    hj.warnings.includes(
      "unreferenced immutable revision V000099.md; it may be an interrupted snapshot or an unresolved applying commit.",
    ),
    true,
  );
  assertEquals(
    hj.warnings.includes("abandoned temporary file .bimri/recovery/.bimri-tmp-abc."),
    true,
  );
});

Deno.test("warnings keep PASSED; doctor rebuilds the index only after a clean audit", async () => {
  const root = await copyStore((await healthy).root);
  // A well-formed revision above the head: what a crash before the state update leaves.
  Deno.copyFileSync(
    join(root, ".bimri/revisions/V000000.md"),
    join(root, ".bimri/revisions/V000099.md"),
  );
  const r = await bimri(root, ["doctor"]);
  assertEquals(r.code, 0, r.stdout);
  assertMatch(r.stdout, /^BIMRI doctor: PASSED$/m);
  assertMatch(r.stdout, /V000099/);
  assert(Deno.readTextFileSync(join(root, ".bimri/index.tsv")).startsWith("id\tkey\t"));
  const broken = await copyStore(root);
  Deno.removeSync(join(broken, ".bimri/index.tsv"));
  Deno.writeTextFileSync(recordFile(broken, "conflicts", "C000001"), "{}");
  const f = await bimri(broken, ["doctor"]);
  assertEquals(f.code, 1);
  assertMatch(f.stdout, /^BIMRI doctor: FAILED$/m);
  assert(!Deno.statSync(join(broken, ".bimri")).isFile);
  let indexExists = true;
  try {
    Deno.statSync(join(broken, ".bimri/index.tsv"));
  } catch {
    indexExists = false;
  }
  assertEquals(indexExists, false, "no index rebuild after a failed audit");
});

Deno.test("version-aware rules: v5.0.2 records keep their contract, a v5.1.0 record must be complete", async () => {
  const s = await healthy;
  const root = await copyStore(s.root);
  const decision = recordFile(root, "decisions", `${s.closedRun}-Q001`);
  const value = JSON.parse(Deno.readTextFileSync(decision));
  Deno.writeTextFileSync(
    decision,
    JSON.stringify({ ...value, bimri_version: "5.0.2" }, null, 2) + "\n",
  );
  const ok = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(ok.code, 0, ok.stdout);
  const proposal = recordFile(root, "proposals", `${s.closedRun}-Q001`);
  const p = JSON.parse(Deno.readTextFileSync(proposal));
  delete p.preflight_receipt;
  Deno.writeTextFileSync(proposal, JSON.stringify(p, null, 2) + "\n");
  // A proposal without its receipt stays readable authority (the reference
  // keeps consuming it, refusing only its stale path): a warning, not damage.
  const receiptless = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(receiptless.code, 0, receiptless.stdout);
  assertMatch(receiptless.stdout, /proposal R000001-Q001 has no preflight receipt/);
  p.preflight_receipt = "not a receipt";
  Deno.writeTextFileSync(proposal, JSON.stringify(p, null, 2) + "\n");
  const bad = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(bad.code, 1);
  // A damaged authority record is reported as the reference's doctor does.
  assertMatch(
    bad.stdout,
    /^ {2}- authority recovery needed: proposal R000001-Q001 .*invalid preflight_receipt/m,
  );
  delete p.preflight_receipt;
  p.bimri_version = "5.0.2";
  Deno.writeTextFileSync(proposal, JSON.stringify(p, null, 2) + "\n");
  const old = await bimri(root, ["doctor", "--read-only"]);
  assert(!old.stdout.includes("preflight_receipt"), old.stdout);
});

Deno.test("a preflight receipt may name an earlier 5.1 release, never a later one", async () => {
  const s = await healthy;
  const root = await copyStore(s.root);
  const proposal = recordFile(root, "proposals", `${s.closedRun}-Q001`);
  const p = JSON.parse(Deno.readTextFileSync(proposal));
  assertEquals(p.preflight_receipt.engine_release, "5.1.2");
  for (const [release, accepted] of [["5.1.1", true], ["5.1.0", true], ["5.1.3", false]] as const) {
    p.preflight_receipt.engine_release = release;
    Deno.writeTextFileSync(proposal, JSON.stringify(p, null, 2) + "\n");
    const r = await bimri(root, ["doctor", "--read-only"]);
    if (accepted) assertEquals(r.code, 0, `${release}: ${r.stdout}`);
    else {
      assertEquals(r.code, 1, `${release}: ${r.stdout}`);
      // The reference's words, which scripts may look for.
      assertMatch(r.stdout, /proposal R000001-Q001 .*preflight receipt engine release is invalid/);
    }
  }
});

Deno.test("an accepted touch or close whose decision is moved back to its base revision fails the audit", async () => {
  for (const operation of ["touch", "close"]) {
    const root = await tempStore();
    const seed = await startRun(root, "seed");
    await must(root, newSubject(seed, "audit.effect", "Base value.", ["--importance", "2"]));
    await must(root, ["sync", "--run", seed]);
    const base = readStoreJson(root, "state.json").head_revision;
    const writer = await startRun(root, "writer");
    const id = (await must(root, [
      "propose",
      "--run",
      writer,
      "--operation",
      operation,
      "--key",
      "audit.effect",
    ])).trim();
    await must(root, ["sync", "--run", writer]);
    const path = join(root, ".bimri/decisions", `${id}.json`);
    const decision = JSON.parse(Deno.readTextFileSync(path));
    assertEquals(decision.outcome, "accepted", operation);
    assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0, operation);
    Deno.writeTextFileSync(path, JSON.stringify({ ...decision, revision: base }, null, 2) + "\n");
    const r = await bimri(root, ["doctor", "--read-only"]);
    assertEquals(r.code, 1, `${operation}: ${r.stdout}`);
    assertMatch(
      r.stdout,
      new RegExp(
        `decision ${id} names revision V0+${base}, which does not contain the proposal's recorded effect`,
      ),
    );
  }
});

Deno.test("an owner's chosen set or touch whose answer is moved back to its base revision fails the audit", async () => {
  for (const operation of ["set", "touch"]) {
    const root = await tempStore();
    const key = "audit.chosen";
    const seed = await startRun(root, "seed");
    await must(root, newSubject(seed, key, "Seed value.", ["--importance", "2"]));
    await must(root, ["sync", "--run", seed]);
    const live = await startRun(root, "live");
    const candidate = await startRun(root, "candidate");
    await must(root, ["propose", "--run", live, "--key", key, "--text", "Live value."]);
    const chosen = (await must(root, [
      "propose",
      "--run",
      candidate,
      "--operation",
      operation,
      "--key",
      key,
      ...(operation === "set" ? ["--text", "Candidate value."] : []),
    ])).trim();
    await must(root, ["sync", "--run", live]);
    await must(root, ["sync", "--run", candidate]);
    const conflict = readStoreJson(root, `decisions/${chosen}.json`).conflict_id as string;
    assertMatch(conflict, /^C\d{6}$/, operation);
    await must(root, ["resolve", conflict, "--choose", chosen, "--human-approved"]);
    assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0, operation);
    const resolution = readStoreJson(root, `resolutions/${conflict}.json`);
    const before = resolution.revision_before as number;
    const forge = (path: string, value: Record<string, unknown>) =>
      Deno.writeTextFileSync(join(root, ".bimri", path), JSON.stringify(value, null, 2) + "\n");
    forge(`resolutions/${conflict}.json`, {
      ...resolution,
      revision_after: before,
      intended_revision_after: before,
    });
    forge(`decisions/${chosen}.json`, {
      ...readStoreJson(root, `decisions/${chosen}.json`),
      revision: before,
    });
    const r = await bimri(root, ["doctor", "--read-only"]);
    assertEquals(r.code, 1, `${operation}: ${r.stdout}`);
    // The reference's words for an answer's effect, not a plain decision's.
    assertMatch(
      r.stdout,
      new RegExp(
        `resolved conflict ${conflict} names revision V0+${before}, but that revision does not contain the chosen proposal's effect`,
      ),
      operation,
    );
    assertNotMatch(r.stdout, /recorded effect/, operation);
  }
});

Deno.test("plain doctor stops with exit 2 on a store it cannot open, changing nothing", async () => {
  const base = (await healthy).root;
  const headOf = (root: string) => {
    const doc = JSON.parse(Deno.readTextFileSync(join(root, ".bimri/state.json")));
    return join(root, ".bimri/revisions", `V${String(doc.head_revision).padStart(6, "0")}.md`);
  };
  const damages: [string, (root: string) => void, RegExp][] = [
    ["unsupported state version", (root) => {
      const path = join(root, ".bimri/state.json");
      const doc = JSON.parse(Deno.readTextFileSync(path));
      Deno.writeTextFileSync(path, JSON.stringify({ ...doc, bimri_version: "9.9.9" }, null, 2));
    }, /9\.9\.9/],
    [
      "missing head revision",
      (root) => Deno.removeSync(headOf(root)),
      // The reference's words, which scripts may look for.
      /accepted head(?: revision)? is (?:missing|unsafe)/,
    ],
    ["altered head revision", (root) => {
      Deno.writeTextFileSync(headOf(root), "# changed\n", { append: true });
    }, /state head hash does not match the accepted head revision/],
  ];
  for (const [what, damage, reason] of damages) {
    const root = await copyStore(base);
    damage(root);
    const before = hashTree(root);
    const r = await bimri(root, ["doctor"]);
    assertEquals(r.code, 2, `${what}: ${r.stdout}`);
    assertEquals(r.stdout, "", what);
    assertMatch(r.stderr, /^BIMRI ERROR: doctor cannot open the store: /, what);
    assertMatch(r.stderr, reason, what);
    assertMatch(r.stderr, /doctor --read-only/, what);
    assertEquals(diffTrees(before, hashTree(root)), null, what);
    // The read-only audit still reports the same damage as a failed audit.
    assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 1, what);
  }
});

Deno.test("doctor warns about leftover temporary files in the root, .bimri and every store folder", async () => {
  const root = await copyStore((await healthy).root);
  // Crash leftovers of atomic replaces (bimri.md, state.json, index.tsv) and of
  // exclusive creates, in folders the audit reads and folders it does not.
  const litter = [
    ".bimri-tmp-view",
    ".bimri/.bimri-tmp-state",
    ".bimri/audit-manifests/.bimri-new-m",
    ".bimri/backups/.bimri-tmp-b",
    ".bimri/decisions/.bimri-new-d",
    ".bimri/inbox/.bimri-tmp-i",
    ".bimri/log/.bimri-tmp-l",
    ".bimri/migrations/.bimri-new-g",
    ".bimri/recovery/.bimri-tmp-r",
  ];
  for (const path of litter) {
    Deno.mkdirSync(join(root, path, ".."), { recursive: true });
    Deno.writeTextFileSync(join(root, path), "half-written");
  }
  // Path order, as the reference lists them: .bimri/ and its folders before the root's own.
  const expected = [...litter.slice(1), litter[0]].map((p) => `abandoned temporary file ${p}.`);
  const temporary = (warnings: string[]) => warnings.filter((w) => w.startsWith("abandoned"));

  const ro = await bimri(root, ["--json", "doctor", "--read-only"]);
  assertEquals(ro.code, 0, ro.stdout);
  assertEquals(temporary(JSON.parse(ro.stdout).warnings), expected);

  const plain = await bimri(root, ["doctor"]);
  assertEquals(plain.code, 0, plain.stdout + plain.stderr);
  assertMatch(plain.stdout, /^BIMRI doctor: PASSED$/m);
  for (const line of expected) assert(plain.stdout.includes(`  - ${line}\n`), line);
  // Doctor reports leftovers for review; it never deletes them.
  for (const path of litter) assertEquals(Deno.readTextFileSync(join(root, path)), "half-written");
});

Deno.test("read-only doctor fails a store without bimri.md and warns without engine.lock, restoring neither; review needs the lock; plain doctor restores both", async () => {
  for (
    const [file, verdict, message] of [
      ["bimri.md", "FAILED", /^ {2}- bimri\.md is missing; run doctor without --read-only/m],
      [
        ".bimri/engine.lock",
        "PASSED",
        /^ {2}- \.bimri\/engine\.lock is missing; the next writing command/m,
      ],
    ] as const
  ) {
    const root = await copyStore((await healthy).root);
    Deno.removeSync(join(root, file));
    const before = hashTree(root);
    const r = await bimri(root, ["doctor", "--read-only"]);
    assertEquals(r.code, verdict === "FAILED" ? 1 : 0, `${file}: ${r.stdout}`);
    assertMatch(r.stdout, new RegExp(`^BIMRI doctor \\(read-only\\): ${verdict}$`, "m"));
    assertMatch(r.stdout, message);
    assertEquals(diffTrees(before, hashTree(root)), null, `${file}: read-only wrote nothing`);
    if (file === ".bimri/engine.lock") {
      // review is read-only too: it neither creates the lock nor reads without it.
      const review = await bimri(root, ["review"]);
      assertEquals(review.code, 2, review.stdout);
      assertMatch(review.stderr, /engine\.lock is missing or not a regular file/);
      assertEquals(diffTrees(before, hashTree(root)), null, "review wrote nothing");
    }
    const plain = await bimri(root, ["doctor"]);
    assertEquals(plain.code, 0, `${file}: ${plain.stdout}`);
    assert(Deno.lstatSync(join(root, file)).isFile, `${file} restored`);
  }
});

Deno.test("read-only doctor fails history that lost a revision, a resolution or a close's archive row", async () => {
  const store = await healthy;
  const cases: [string, (root: string) => void | Promise<void>, RegExp][] = [
    [
      "a revision an accepted decision names",
      (root) => Deno.removeSync(join(root, ".bimri/revisions/V000001.md")),
      /^ {2}- referenced revision V000001\.md is missing\.$/m,
    ],
    [
      "the genesis revision proposals are based on",
      (root) => Deno.removeSync(join(root, ".bimri/revisions/V000000.md")),
      /^ {2}- proposal R000001-Q001: base revision V000000\.md is missing\.$/m,
    ],
    [
      "the resolution a decision was decided by",
      async (root) => {
        const r = await bimri(root, [
          "resolve",
          "C000001",
          "--choose",
          "current",
          "--human-approved",
        ]);
        assertEquals(r.code, 0, r.stderr);
        Deno.removeSync(join(root, ".bimri/resolutions/C000001.json"));
      },
      new RegExp(
        `^ {2}- authority recovery needed: decision ${store.loserRun}-Q001 \\(\\.bimri/decisions/${store.loserRun}-Q001\\.json\\): was decided by resolution C000001, whose record is missing\\.$`,
        "m",
      ),
    ],
    [
      "the archive month holding a close",
      async (root) => {
        for (
          const args of [
            ["propose", "--run", store.winnerRun, "--operation", "close", "--key", "a.two"],
            ["sync", "--run", store.winnerRun],
          ]
        ) {
          const r = await bimri(root, args);
          assertEquals(r.code, 0, r.stderr);
        }
        for (const e of Deno.readDirSync(join(root, ".bimri/archive"))) {
          Deno.removeSync(join(root, ".bimri/archive", e.name));
        }
      },
      new RegExp(
        `^ {2}- decision ${store.winnerRun}-Q002 closed a\\.two, but no archive row records the closed generation\\.$`,
        "m",
      ),
    ],
  ];
  for (const [what, damage, message] of cases) {
    const root = await copyStore(store.root);
    await damage(root);
    const r = await bimri(root, ["doctor", "--read-only"]);
    assertEquals(r.code, 1, `${what}: ${r.stdout}`);
    assertMatch(r.stdout, message, what);
  }
});

Deno.test("doctor fails a store with unclaimed older memory beside it, as the reference does", async () => {
  const root = await copyStore((await healthy).root);
  Deno.writeTextFileSync(
    join(root, "BIMRI-backup.md"),
    "# BIMRI: Memory File\n<!-- BIMRI v3 -->\n",
  );
  const r = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(r.code, 1, r.stdout);
  assertMatch(r.stdout, /^ {2}- .*unclaimed legacy root file\(s\): BIMRI-backup\.md\./m);
  Deno.removeSync(join(root, "BIMRI-backup.md"));
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});

Deno.test("a decision whose resolution record is gone pauses shared writes, as the reference does", async () => {
  const store = await healthy;
  const root = await copyStore(store.root);
  const r = await bimri(root, ["resolve", "C000001", "--choose", "current", "--human-approved"]);
  assertEquals(r.code, 0, r.stderr);
  Deno.removeSync(join(root, ".bimri/resolutions/C000001.json"));
  const before = hashTree(root);
  const sync = await bimri(root, ["sync", "--run", store.winnerRun]);
  assertEquals(sync.code, 2, sync.stdout);
  assertMatch(
    sync.stderr,
    /AUTHORITY RECOVERY NEEDED: decision .* was decided by resolution C000001/,
  );
  assertEquals(diffTrees(before, hashTree(root)), null);
});

Deno.test("a revision the history names, deleted, pauses shared writes on the everyday path too", async () => {
  const store = await healthy;
  const root = await copyStore(store.root);
  // Warm the derived summary first, so the deletion is what the everyday check must notice.
  const warm = await bimri(root, ["sync", "--run", store.winnerRun]);
  assertEquals(warm.code, 0, warm.stderr);
  Deno.removeSync(join(root, ".bimri/revisions/V000001.md"));
  const before = hashTree(root);
  const sync = await bimri(root, ["sync", "--run", store.winnerRun]);
  assertEquals(sync.code, 2, sync.stdout);
  assertMatch(
    sync.stderr,
    /AUTHORITY RECOVERY NEEDED: decision R000001-Q001 .*names revision V000001, which is missing/,
  );
  assertEquals(diffTrees(before, hashTree(root)), null);
  const status = await bimri(root, ["status"]);
  assertEquals(status.code, 1, status.stdout);
  assertMatch(status.stdout, /names revision V000001, which is missing/);
});

Deno.test("a decision naming a revision beyond the head pauses shared writes and fails status", async () => {
  const store = await healthy;
  const root = await copyStore(store.root);
  const warm = await bimri(root, ["sync", "--run", store.winnerRun]);
  assertEquals(warm.code, 0, warm.stderr);
  // Replaced by a rename, as an editor or a script would.
  const path = recordFile(root, "decisions", "R000001-Q001");
  const forged = { ...JSON.parse(Deno.readTextFileSync(path)), revision: 999999 };
  Deno.writeTextFileSync(`${path}.tmp`, JSON.stringify(forged, null, 2) + "\n");
  Deno.renameSync(`${path}.tmp`, path);
  const before = hashTree(root);
  const sync = await bimri(root, ["sync", "--run", store.winnerRun]);
  assertEquals(sync.code, 2, sync.stdout);
  assertMatch(
    sync.stderr,
    /AUTHORITY RECOVERY NEEDED: decision R000001-Q001 .*revision 999999 is beyond the current canonical head/,
  );
  // The reference's words, which scripts may look for.
  assertMatch(sync.stderr, /shared-memory writes are paused/);
  assertEquals(diffTrees(before, hashTree(root)), null);
  const status = await bimri(root, ["status"]);
  assertEquals(status.code, 1, status.stdout);
  assertMatch(status.stdout, /revision 999999 is beyond the current canonical head/);
});

Deno.test("a historical revision replaced by a symbolic link counts as missing", async () => {
  const store = await healthy;
  const root = await copyStore(store.root);
  const warm = await bimri(root, ["sync", "--run", store.winnerRun]);
  assertEquals(warm.code, 0, warm.stderr);
  const outside = await tempStore("bimri-outside-");
  const revision = join(root, ".bimri/revisions/V000001.md");
  Deno.copyFileSync(revision, join(outside, "V000001.md"));
  Deno.removeSync(revision);
  Deno.symlinkSync(join(outside, "V000001.md"), revision, { type: "file" });
  const sync = await bimri(root, ["sync", "--run", store.winnerRun]);
  assertEquals(sync.code, 2, sync.stdout);
  assertMatch(sync.stderr, /decision R000001-Q001 .*names revision V000001, which is missing/);
  const status = await bimri(root, ["status"]);
  assertEquals(status.code, 1, status.stdout);
});

Deno.test("a noop decision must find the generation it recorded at its revision", async () => {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  await must(root, newSubject(seed, "audit.noop", "Same value.", ["--importance", "2"]));
  await must(root, ["sync", "--run", seed]);
  const again = await startRun(root, "again");
  const id = (await must(root, [
    "propose",
    "--run",
    again,
    "--key",
    "audit.noop",
    "--text",
    "Same value.",
    "--importance",
    "2",
  ])).trim();
  await must(root, ["sync", "--run", again]);
  const path = join(root, ".bimri/decisions", `${id}.json`);
  const noop = JSON.parse(Deno.readTextFileSync(path));
  assertEquals(noop.outcome, "noop");
  assertEquals(noop.effect_storage, "hot");
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
  const forge = (value: Record<string, unknown>) =>
    Deno.writeTextFileSync(path, JSON.stringify(value, null, 2) + "\n");
  const recorded = new RegExp(
    `decision ${id} names revision V000000, which does not contain the proposal's recorded effect`,
  );
  forge({ ...noop, revision: 0 });
  const moved = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(moved.code, 1, moved.stdout);
  assertMatch(moved.stdout, recorded);
  // A v5.0-era noop (no evidence) for a value memory never held: the staged intent would be lost.
  forge({
    bimri_version: "5.0",
    proposal_id: id,
    outcome: "noop",
    reason: "current memory already matches",
    recorded_at: "2026-07-27T00:00:00Z",
    revision: 0,
  });
  const legacy = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(legacy.code, 1, legacy.stdout);
  assertMatch(legacy.stdout, recorded);
});

Deno.test("a run log replaced by a symbolic link fails status and pauses writes", async () => {
  const store = await healthy;
  const root = await copyStore(store.root);
  const outside = await tempStore("bimri-outside-");
  const log = join(root, ".bimri/log", `${store.winnerRun}.md`);
  Deno.copyFileSync(log, join(outside, "log.md"));
  Deno.removeSync(log);
  Deno.symlinkSync(join(outside, "log.md"), log, { type: "file" });
  const status = await bimri(root, ["status"]);
  assertEquals(status.code, 1, status.stdout);
  assertMatch(status.stdout, /run log cannot be a symbolic link/);
  const sync = await bimri(root, ["sync", "--run", store.loserRun]);
  assertEquals(sync.code, 2, sync.stdout);
  assertMatch(sync.stderr, /run log R\d{6} .*run log cannot be a symbolic link/);
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 1);
});

Deno.test("doctor passes inherited legacy text over the entry cap with a bounded-memory repair warning", async () => {
  const root = await tempStore();
  const claim = "Long inherited claim " + "é".repeat(580) + ".";
  Deno.writeTextFileSync(
    join(root, "BIMRI.md"),
    "<!-- BIMRI v3.0 | Last Maintained: 2026-07-20 | Sessions: 1 -->\n# BIMRI: Memory File\n" +
      `## Tier 1: Core Intelligence\n- ${claim}\n## Tier 2: Active Context\n## Tier 3: Pattern Recognition\n`,
  );
  const migrated = await bimri(root, ["migrate"]);
  assertEquals(migrated.code, 0, migrated.stdout + migrated.stderr);
  const r = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(r.code, 0, r.stdout);
  // Characters, as the reference counts them (the é are two UTF-8 bytes each).
  assertMatch(
    r.stdout,
    new RegExp(
      `^ {2}- bounded-memory repair needed: R0-E\\d+ inherited legacy text exceeds active entry cap: ${
        [...claim].length
      }/500 characters$`,
      "m",
    ),
  );
});

Deno.test("a genesis revision replaced by a symbolic link pauses writes and fails status", async () => {
  const store = await healthy;
  const root = await copyStore(store.root);
  const outside = await tempStore("bimri-outside-");
  const genesis = join(root, ".bimri/revisions/V000000.md");
  Deno.copyFileSync(genesis, join(outside, "V000000.md"));
  Deno.removeSync(genesis);
  Deno.symlinkSync(join(outside, "V000000.md"), genesis, { type: "file" });
  const status = await bimri(root, ["status"]);
  assertEquals(status.code, 1, status.stdout);
  assertMatch(status.stdout, /missing or unsafe revision V000000/);
  const sync = await bimri(root, ["sync", "--run", store.loserRun]);
  assertEquals(sync.code, 2, sync.stdout);
  assertMatch(sync.stderr, /missing or unsafe revision V000000/);
});
