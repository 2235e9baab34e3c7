/** Pure rules of signed, trusted sharing: key files, signatures, answer claims, confirmed memory. */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { generateKeyPairSync, sign } from "node:crypto";
import { claimProblem, needsOwner } from "../../engine/share/governance.ts";
import {
  fingerprint,
  loadSignatureChecks,
  parseKeyBytes,
  verifyRecordHash,
} from "../../engine/share/sign.ts";
import type { ShareRecord } from "../../engine/share/record.ts";
import { canonicalJson } from "../../engine/store/canonical_json.ts";

const A = "a".repeat(26);
const B = "b".repeat(26);

function record(over: Partial<ShareRecord>): ShareRecord {
  return {
    replica: A,
    seq: 3,
    kind: "resolution",
    key: "k.one",
    operation: "set",
    entry: {
      tier: 2,
      text: "T.",
      importance: 3,
      status: "active",
      trust: "working",
      source: "agent",
      tags: [],
    },
    replaces: null,
    resolves: [],
    run: null,
    actor: "user",
    at: "2026-12-02T12:00:00Z",
    source: "C000001",
    vector: { [A]: 2, [B]: 4 },
    ...over,
  };
}

Deno.test("an answer may name only events its vector covers or its own earlier records", () => {
  strictEqual(claimProblem(record({ resolves: [`${B}:4`, `${A}:2`] })), null);
  ok(claimProblem(record({ resolves: [`${B}:5`] }))?.includes(`claims to answer ${B}:5`));
  ok(claimProblem(record({ resolves: [`${A}:3`] }))?.includes("never saw"));
  ok(claimProblem(record({ actor: "codex" }))?.includes("not given by the owner"));
  strictEqual(
    claimProblem(record({ kind: "change", actor: "codex", source: "R000001-Q001" })),
    null,
  );
});

Deno.test("a record may replace only an event its vector covers or its own earlier record, and its own vector entry precedes it", () => {
  const change = { kind: "change" as const, actor: "codex", source: "R000001-Q001" };
  strictEqual(claimProblem(record({ ...change, replaces: `${B}:4` })), null);
  strictEqual(claimProblem(record({ ...change, replaces: `${A}:2` })), null);
  ok(claimProblem(record({ ...change, replaces: `${B}:5` }))?.includes(`claims to replace ${B}:5`));
  ok(claimProblem(record({ ...change, replaces: `${A}:3` }))?.includes("never saw"));
  ok(claimProblem(record({ ...change, vector: { [A]: 3 } }))?.includes("had not written yet"));
});

Deno.test("only an owner's answer changes confirmed memory without a question", () => {
  const confirmed = { ...record({}).entry!, trust: "confirmed" } as ShareRecord["entry"];
  strictEqual(needsOwner(record({ kind: "change" }), confirmed), true);
  strictEqual(needsOwner(record({ kind: "resolution" }), confirmed), false);
  strictEqual(needsOwner(record({ kind: "change" }), record({}).entry), false);
  strictEqual(needsOwner(record({ kind: "seed" }), null), false);
});

Deno.test("a key file parses strictly and a signature verifies only for its own hash and key", async () => {
  const pair = generateKeyPairSync("ed25519");
  const x = pair.publicKey.export({ format: "jwk" }).x!;
  const key = {
    actor: "ana",
    created_at: "2026-12-02T12:00:00Z",
    format: "bimri-share-key/1",
    from_seq: 1,
    host: "laptop",
    public_key: x,
    replica: A,
  };
  const parsed = parseKeyBytes(new TextEncoder().encode(canonicalJson(key)), A);
  deepStrictEqual(typeof parsed === "object" && parsed.publicKey, x);
  strictEqual(typeof parseKeyBytes(new TextEncoder().encode(canonicalJson(key)), B), "string");
  const extra = { ...key, trusted: true };
  strictEqual(typeof parseKeyBytes(new TextEncoder().encode(canonicalJson(extra)), A), "string");
  const hash = "0".repeat(64);
  await loadSignatureChecks();
  const sig = sign(null, new TextEncoder().encode(`bimri-share/1 record ${hash}`), pair.privateKey)
    .toString("base64url");
  strictEqual(verifyRecordHash(x, hash, sig), true);
  strictEqual(verifyRecordHash(x, "1".repeat(64), sig), false);
  const other = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }).x!;
  strictEqual(verifyRecordHash(other, hash, sig), false);
  strictEqual(verifyRecordHash(x, hash, "not-a-signature"), false);
  strictEqual(fingerprint(x).split(":").length, 16);
});
