/**
 * The damage kinds of the integrity tests and the round trip each one runs:
 * detection by a read-only doctor that writes nothing, the degraded mode,
 * quarantine, and restore of the reviewed original back to a passing doctor.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { bimri, diffTrees, hashTree, newSubject } from "./cli.ts";
import { buildHealthyStore, copyStore, type HealthyStore, recordFile } from "./healthy_store.ts";

let base: HealthyStore | null = null;
/** The shared healthy store (built once per test process). */
export async function healthy(): Promise<HealthyStore> {
  base ??= await buildHealthyStore();
  return base;
}

function withoutCaches(tree: Map<string, string>): Map<string, string> {
  return new Map([...tree].filter(([k]) => !k.startsWith(".bimri/audit-")));
}

/** One kind of damage applied to one record. */
export type Damage = {
  name: string;
  kind: string;
  folder: string;
  id: (s: HealthyStore) => string;
  damage: (path: string, root: string) => void;
  /** Expected original_type of the stub. */
  originalType: string;
  /** Also exercise every degraded-mode command (costly: one case does it). */
  full?: boolean;
};

/** Every damage kind. */
export const DAMAGES: Damage[] = [
  {
    name: "truncated decision",
    kind: "decision",
    folder: "decisions",
    id: (s) => `${s.closedRun}-Q001`,
    damage: (path) => Deno.truncateSync(path, 14),
    originalType: "file",
    full: true,
  },
  {
    name: "invalid JSON conflict",
    kind: "conflict",
    folder: "conflicts",
    id: () => "C000001",
    damage: (path) => Deno.writeTextFileSync(path, '{"broken": tru'),
    originalType: "file",
  },
  {
    name: "proposal with a wrong ID",
    kind: "proposal",
    folder: "proposals",
    id: (s) => `${s.closedRun}-Q002`,
    damage: (path) => {
      const value = JSON.parse(Deno.readTextFileSync(path));
      value.proposal_id = value.proposal_id.replace(/Q002$/, "Q009");
      Deno.writeTextFileSync(path, JSON.stringify(value, null, 2) + "\n");
    },
    originalType: "file",
  },
  {
    name: "candidate proposal whose hash changed",
    kind: "proposal",
    folder: "proposals",
    id: (s) => `${s.loserRun}-Q001`,
    damage: (path) => {
      const text = Deno.readTextFileSync(path);
      Deno.writeTextFileSync(path, text.replace('"Loser."', '"Loser, edited."'));
    },
    originalType: "file",
  },
  {
    name: "deleted anchored decision",
    kind: "decision",
    folder: "decisions",
    id: (s) => `${s.closedRun}-Q002`,
    damage: (path) => Deno.removeSync(path),
    originalType: "missing",
  },
  {
    name: "decision replaced by a symlink to outside the store",
    kind: "decision",
    folder: "decisions",
    id: (s) => `${s.winnerRun}-Q001`,
    damage: (path, root) => {
      Deno.writeTextFileSync(join(root, "outside.json"), '{"outside": true}\n');
      Deno.removeSync(path);
      // Relative, with native separators (a `/` in a relative Windows link target does not resolve).
      Deno.symlinkSync(join("..", "..", "outside.json"), path, { type: "file" });
    },
    originalType: "symbolic-link",
  },
];

/** Damages a copy of the healthy store and runs detection, degraded mode and the round trip. */
export async function damageRoundTrip(d: Damage): Promise<void> {
  {
    const s = await healthy();
    const root = await copyStore(s.root);
    const id = d.id(s);
    const path = recordFile(root, d.folder, id);
    const original = Deno.readFileSync(path);
    const saved = join(root, "reviewed.json");
    Deno.writeFileSync(saved, original);
    d.damage(path, root);

    // Read-only doctor names the record and writes nothing at all.
    const before = hashTree(root);
    const ro = await bimri(root, ["doctor", "--read-only"]);
    assertEquals(ro.code, 1, ro.stdout);
    assertMatch(ro.stdout, /^BIMRI doctor \(read-only\): FAILED$/m);
    assert(ro.stdout.includes(id), ro.stdout);
    assertEquals(diffTrees(before, hashTree(root)), null);

    // Degraded mode: start warns, status fails with the full report.
    const start = await bimri(root, ["start", "--actor", "tester"]);
    assertEquals(start.code, 0, start.stderr);
    assertMatch(start.stdout, /^AUTHORITY RECOVERY NEEDED — shared-memory writes are paused:$/m);
    assert(start.stdout.includes(id), start.stdout);
    const run = /^BIMRI RUN HANDLE: (R\d{6})$/m.exec(start.stdout)![1];
    const refused = d.full ? [["sync", "--run", run], ["close", "--run", run], ["index"]] : [[
      "sync",
      "--run",
      run,
    ]];
    if (d.full) {
      const status = await bimri(root, ["status"]);
      assert(status.code !== 0, "status must fail while authority is damaged");
      assertMatch(status.stdout, /AUTHORITY RECOVERY NEEDED/);
      // Journal and proposal staging continue.
      const journal = await bimri(root, ["journal", "--run", run, "--text", "Still working."]);
      assertEquals(journal.code, 0);
      const staged = await bimri(root, newSubject(run, "b.new", "Staged while degraded."));
      assertEquals(staged.code, 0, staged.stderr);
    }

    // Canonical writes are refused and write nothing.
    const frozen = withoutCaches(hashTree(root));
    for (const args of refused) {
      const r = await bimri(root, args);
      assertEquals(r.code, 2, `${args[0]}: ${r.stdout}${r.stderr}`);
      assertMatch(r.stderr, /^BIMRI ERROR: AUTHORITY RECOVERY NEEDED/m);
      assertEquals(diffTrees(frozen, withoutCaches(hashTree(root))), null, args[0]);
    }

    // Quarantine (twice: the retry is idempotent), then restore the reviewed bytes.
    const q = await bimri(root, [
      "quarantine-authority",
      "--kind",
      d.kind,
      "--id",
      id,
      "--human-approved",
    ]);
    assertEquals(q.code, 0, q.stderr);
    const stub = JSON.parse(Deno.readTextFileSync(path));
    assertEquals(stub.record_type, "authority-quarantine");
    assertEquals(stub.original_type, d.originalType);
    const evidence = Deno.readFileSync(join(root, stub.recovery_file));
    const hash = await crypto.subtle.digest("SHA-256", evidence);
    assertEquals(
      Array.from(new Uint8Array(hash), (b) => b.toString(16).padStart(2, "0")).join(""),
      stub.sha256,
    );
    if (d.originalType === "symbolic-link") {
      assertEquals(
        JSON.parse(new TextDecoder().decode(evidence)).link_target,
        join("..", "..", "outside.json"),
      );
      assertEquals(Deno.readTextFileSync(join(root, "outside.json")), '{"outside": true}\n');
      assert(!Deno.lstatSync(path).isSymlink);
    }
    if (d.full) {
      const stubBytes = Deno.readFileSync(path);
      const again = await bimri(root, [
        "quarantine-authority",
        "--kind",
        d.kind,
        "--id",
        id,
        "--human-approved",
      ]);
      assertEquals(again.code, 0, again.stderr);
      assertMatch(again.stdout, /already quarantined/);
      assertEquals(Deno.readFileSync(path), stubBytes);
    }

    const restore = await bimri(root, [
      "restore-authority",
      "--kind",
      d.kind,
      "--id",
      id,
      "--from",
      saved,
      "--human-approved",
    ]);
    assertEquals(restore.code, 0, restore.stderr);
    assertEquals(Deno.readFileSync(path), original);
    const doctor = await bimri(root, ["doctor", "--read-only"]);
    assertEquals(doctor.code, 0, doctor.stdout);
    assertMatch(doctor.stdout, /PASSED/);
    if (d.full) {
      const sync = await bimri(root, ["sync", "--run", run]);
      assertEquals(sync.code, 0, sync.stderr);
    }
  }
}
