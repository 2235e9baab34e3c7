/**
 * The one builder of hand-made share records for tests and bench/: a Tier 2
 * entry, a change record with its replica's own vector entry, and signing
 * them as a replica whose folder publishes the key.
 */
import { join } from "node:path";
import { generateKeyPairSync, sign } from "node:crypto";
import { recordHash, type SharedEntry, type ShareRecord } from "../../engine/share/record.ts";
import { canonicalJson } from "../../engine/store/canonical_json.ts";

/** A Tier 2 entry: working memory an agent stated, or confirmed memory the owner stated. */
export function shareEntry(text: string, trust: "working" | "confirmed" = "working"): SharedEntry {
  return {
    tier: 2,
    text,
    importance: 3,
    status: "active",
    trust,
    source: trust === "confirmed" ? "user" : "agent",
    tags: [],
  };
}

/**
 * A change record `seq` of `replica` setting `key` to `entry`; its vector is
 * `vector` plus the replica's own earlier records (seq - 1).
 */
export function changeRecord(
  replica: string,
  seq: number,
  key: string,
  entry: SharedEntry,
  replaces: string | null,
  vector: Record<string, number>,
): ShareRecord {
  return {
    replica,
    seq,
    kind: "change",
    key,
    operation: "set",
    entry,
    replaces,
    resolves: [],
    run: "R000001",
    actor: "codex",
    at: "2026-12-02T12:00:00Z",
    source: `R000001-Q${String(((seq - 1) % 999) + 1).padStart(3, "0")}`,
    vector: seq > 1 ? { ...vector, [replica]: seq - 1 } : { ...vector },
  };
}

/** A replica made by hand: signs records with the key its folder publishes. */
export type HandReplica = {
  replica: string;
  /** The published public key (base64url). */
  publicKey: string;
  sign: (record: ShareRecord) => ShareRecord;
};

/** Publishes a new key for `replica` in `<share>/<replica>/key.json`; returns its signer. */
export function handReplica(share: string, replica: string, fromSeq = 1): HandReplica {
  const pair = generateKeyPairSync("ed25519");
  const x = pair.publicKey.export({ format: "jwk" }).x!;
  Deno.mkdirSync(join(share, replica), { recursive: true });
  Deno.writeTextFileSync(
    join(share, replica, "key.json"),
    canonicalJson({
      actor: "tester",
      created_at: "2026-12-02T12:00:00Z",
      format: "bimri-share-key/1",
      from_seq: fromSeq,
      host: "testhost",
      public_key: x,
      replica,
    }) + "\n",
  );
  return {
    replica,
    publicKey: x,
    sign(record) {
      const message = new TextEncoder().encode(`bimri-share/1 record ${recordHash(record)}`);
      return {
        ...record,
        signature: sign(null, message, pair.privateKey).toString("base64url"),
      };
    },
  };
}

/**
 * Record 2 of the replica that wrote `seed`, as a pusher forges it: a change
 * of the seed's key to `text` that replaces the seed (unsigned: the seed's
 * signature, if any, is dropped).
 */
export function afterSeed(seed: ShareRecord, text: string): ShareRecord {
  const { signature: _dropped, ...unsigned } = seed;
  return {
    ...unsigned,
    seq: 2,
    kind: "change",
    source: "R000009-Q001",
    run: "R000009",
    actor: "codex",
    entry: { ...seed.entry!, text } as SharedEntry,
    replaces: `${seed.replica}:1`,
    vector: { [seed.replica]: 1 },
  };
}
