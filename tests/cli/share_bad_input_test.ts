/**
 * Bad input in `.bimri-share/`: a malformed, truncated, tampered, oversized
 * or path-escaping record, an unknown replica folder name and a vector that
 * goes backwards are each refused with a `BIMRI ERROR:` naming the file;
 * nothing is imported from it, every other record still is, and doctor
 * reports it. The source clone's records are those its export (`share
 * status`, as the pre-commit hook runs it) wrote before they were copied.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, must, tempStore } from "../helpers/cli.ts";
import { copyTree } from "../helpers/portable.ts";
import { agentSets, exportNow, gitInit, textOf, trustEveryReplica } from "../helpers/share.ts";
import { changeRecord, handReplica, shareEntry } from "../helpers/share_records.ts";
import { recordText, type ShareRecord } from "../../engine/share/record.ts";
import { mintReplicaId } from "../../engine/share/ids.ts";

/** A shared store with two records (a seed and a change), both exported. */
async function source(): Promise<{ root: string; replica: string }> {
  const root = await tempStore();
  await agentSets(root, "codex", { "good.one": "Good one." });
  await gitInit(root); // share init needs a git work tree
  await must(root, ["share", "init", "--yes"]);
  await agentSets(root, "codex", { "good.two": "Good two." });
  // The close left its change for the next export, which writes it as record 2.
  await exportNow(root);
  const replica = [...Deno.readDirSync(join(root, ".bimri-share"))].find((e) => e.isDirectory)!
    .name;
  const records = [...Deno.readDirSync(join(root, ".bimri-share", replica))]
    .map((e) => e.name).filter((n) => n !== "key.json").sort();
  assertEquals(records, ["00000001.json", "00000002.json"]);
  return { root, replica };
}

/** Signers of the hand-made replicas of one case (their folders publish a key). */
const signers = new Map<string, (r: ShareRecord) => ShareRecord>();

/** Makes `<share>/<replica>/` a signing replica folder. */
function keyed(share: string, replica: string): void {
  signers.set(replica, handReplica(share, replica).sign);
}

/** A foreign record, signed when its replica's folder publishes a key. */
function foreignRecord(replica: string, seq: number, vector: Record<string, number>): ShareRecord {
  const record = unsignedRecord(replica, seq, vector);
  const signer = signers.get(replica);
  return signer ? signer(record) : record;
}

function unsignedRecord(
  replica: string,
  seq: number,
  vector: Record<string, number>,
): ShareRecord {
  return changeRecord(replica, seq, `bad.key${seq}`, shareEntry(`Foreign ${seq}.`), null, vector);
}

/** A fresh clone folder holding the source's records plus whatever `damage` adds. */
async function cloneWith(
  src: { root: string },
  damage: (share: string) => string,
): Promise<{ clone: string; file: string }> {
  const clone = await tempStore();
  copyTree(join(src.root, ".bimri-share"), join(clone, ".bimri-share"));
  const file = damage(join(clone, ".bimri-share"));
  return { clone, file };
}

const CASES: Record<string, { damage: (share: string) => string; message: RegExp }> = {
  malformed: {
    damage(share) {
      const r = mintReplicaId();
      keyed(share, r);
      Deno.writeTextFileSync(join(share, r, "00000001.json"), "{not json");
      return `${r}/00000001.json`;
    },
    message: /not valid JSON/,
  },
  truncated: {
    damage(share) {
      const r = mintReplicaId();
      keyed(share, r);
      const text = recordText(foreignRecord(r, 1, {}));
      Deno.writeTextFileSync(join(share, r, "00000001.json"), text.slice(0, text.length / 2));
      return `${r}/00000001.json`;
    },
    message: /truncated or malformed/,
  },
  tampered: {
    damage(share) {
      const r = mintReplicaId();
      keyed(share, r);
      const text = recordText(foreignRecord(r, 1, {})).replace("Foreign 1.", "Evil text.");
      Deno.writeTextFileSync(join(share, r, "00000001.json"), text);
      return `${r}/00000001.json`;
    },
    message: /SHA-256 mismatch/,
  },
  oversized: {
    damage(share) {
      const r = mintReplicaId();
      keyed(share, r);
      Deno.writeTextFileSync(join(share, r, "00000001.json"), "{" + " ".repeat(70_000) + "}");
      return `${r}/00000001.json`;
    },
    message: /oversized/,
  },
  "path-escaping link": {
    damage(share) {
      const r = mintReplicaId();
      keyed(share, r);
      const outside = join(share, "..", "outside.json");
      Deno.writeTextFileSync(outside, recordText(foreignRecord(r, 1, {})));
      Deno.symlinkSync(outside, join(share, r, "00000001.json"), { type: "file" });
      return `${r}/00000001.json`;
    },
    message: /not a record file|not a regular file/,
  },
  "stray file name": {
    damage(share) {
      const r = mintReplicaId();
      keyed(share, r);
      Deno.writeTextFileSync(join(share, r, "..00000001.json.sh"), "echo pwned\n");
      Deno.writeTextFileSync(join(share, r, "run.sh"), "echo pwned\n");
      return `${r}/run.sh`;
    },
    message: /not a record file/,
  },
  "record number zero": {
    damage(share) {
      const r = mintReplicaId();
      keyed(share, r);
      // Seqs start at 1: a file named 0 is no record, and is named, not ignored.
      Deno.writeTextFileSync(join(share, r, "00000000.json"), recordText(foreignRecord(r, 1, {})));
      return `${r}/00000000.json`;
    },
    message: /record numbers start at 00000001/,
  },
  "unknown replica folder": {
    damage(share) {
      Deno.mkdirSync(join(share, "Not_A_Replica"));
      const r = mintReplicaId();
      Deno.writeTextFileSync(
        join(share, "Not_A_Replica", "00000001.json"),
        recordText(foreignRecord(r, 1, {})),
      );
      return "Not_A_Replica";
    },
    message: /not a replica folder/,
  },
  "vector going backwards": {
    damage(share) {
      const r = mintReplicaId();
      const other = mintReplicaId();
      keyed(share, r);
      keyed(share, other);
      // Two records of another replica, both seen by r's first record.
      const o1 = unsignedRecord(other, 1, {});
      const o2 = unsignedRecord(other, 2, {});
      o1.key = "other.one";
      o2.key = "other.two";
      const sign = signers.get(other)!;
      Deno.writeTextFileSync(join(share, other, "00000001.json"), recordText(sign(o1)));
      Deno.writeTextFileSync(join(share, other, "00000002.json"), recordText(sign(o2)));
      Deno.writeTextFileSync(
        join(share, r, "00000001.json"),
        recordText(foreignRecord(r, 1, { [other]: 2 })),
      );
      Deno.writeTextFileSync(
        join(share, r, "00000002.json"),
        recordText(foreignRecord(r, 2, { [other]: 1 })),
      );
      return `${r}/00000002.json`;
    },
    message: /vector goes backwards/,
  },
};

for (const [name, { damage, message }] of Object.entries(CASES)) {
  Deno.test(`share pull refuses a ${name} record, names it, and imports everything else`, async () => {
    const src = await source();
    const { clone, file } = await cloneWith(src, damage);
    await trustEveryReplica(clone);
    const pulled = await bimri(clone, ["share", "pull"]);
    assertEquals(pulled.code, 2, pulled.stdout + pulled.stderr);
    const shown = `.bimri-share/${file}`;
    const line = pulled.stderr.split("\n").find((l) => l.includes(shown));
    assert(line !== undefined, `no error names ${shown}: ${pulled.stderr}`);
    assertMatch(line, /^BIMRI ERROR: share record /);
    assertMatch(line, message);
    // Nothing else was lost: the good replica's records are all imported.
    assertEquals(await textOf(clone, "good.one"), "Good one.");
    assertEquals(await textOf(clone, "good.two"), "Good two.");
    // Nothing came from the refused file.
    if (name === "vector going backwards") {
      assertEquals(await textOf(clone, "bad.key1"), "Foreign 1.");
      assertEquals(await textOf(clone, "bad.key2"), null);
    } else {
      assertEquals(await textOf(clone, "bad.key1"), null);
    }
    assertEquals((await bimri(clone, ["recall", "--query", "pwned"])).code, 1);
    const doctor = await bimri(clone, ["doctor"]);
    assertMatch(doctor.stdout, new RegExp(shown.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
    // A second pull refuses it again and changes nothing.
    const again = await bimri(clone, ["share", "pull"]);
    assertEquals(again.code, 2);
    assertMatch(again.stdout, /imported 0 records/);
  });
}
