/** The pure Ed25519 signer against RFC 8032's test vectors and node:crypto. */
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from "node:crypto";
import { Buffer } from "node:buffer";
import { ok, strictEqual, throws } from "node:assert/strict";
import { ed25519PublicKey, ed25519Sign } from "../../engine/model/ed25519.ts";
import { combTableSource } from "../../engine/model/ed25519_table_gen.ts";

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

function bytes(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, "hex"));
}

/** node:crypto's private key for a raw seed: the PKCS#8 DER prefix of an Ed25519 key, then the seed. */
function nodePrivateKey(seed: Uint8Array): KeyObject {
  const der = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
  return createPrivateKey({ key: der, format: "der", type: "pkcs8" });
}

/** RFC 8032 section 7.1: TEST 1, TEST 2, TEST 3 and TEST SHA(abc). */
const RFC_8032: {
  name: string;
  secret: string;
  public: string;
  message: string;
  signature: string;
}[] = [
  {
    name: "TEST 1",
    secret: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
    public: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    message: "",
    signature: "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155" +
      "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  },
  {
    name: "TEST 2",
    secret: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
    public: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    message: "72",
    signature: "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da" +
      "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
  },
  {
    name: "TEST 3",
    secret: "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
    public: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
    message: "af82",
    signature: "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac" +
      "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
  },
  {
    name: "TEST SHA(abc)",
    secret: "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
    public: "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
    message: "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a" +
      "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
    signature: "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b589" +
      "09351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704",
  },
];

Deno.test("ed25519 reproduces the RFC 8032 section 7.1 test vectors", () => {
  for (const vector of RFC_8032) {
    const seed = bytes(vector.secret);
    strictEqual(hex(ed25519PublicKey(seed)), vector.public, `${vector.name} public key`);
    strictEqual(
      hex(ed25519Sign(seed, bytes(vector.message))),
      vector.signature,
      `${vector.name} signature`,
    );
  }
});

Deno.test("ed25519 agrees with node:crypto on 300 random seeds and messages", () => {
  for (let i = 0; i < 300; i++) {
    const seed = crypto.getRandomValues(new Uint8Array(32));
    const message = crypto.getRandomValues(new Uint8Array(Math.floor(Math.random() * 201)));
    const context = `seed ${hex(seed)}, message ${hex(message)}`;
    const privateKey = nodePrivateKey(seed);
    const publicKey = ed25519PublicKey(seed);
    strictEqual(
      Buffer.from(publicKey).toString("base64url"),
      createPublicKey(privateKey).export({ format: "jwk" }).x,
      context,
    );
    const signature = ed25519Sign(seed, message);
    strictEqual(hex(signature), hex(sign(null, message, privateKey)), context);
    const nodePublicKey = createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey).toString("base64url") },
      format: "jwk",
    });
    ok(verify(null, message, nodePublicKey, signature), context);
  }
});

Deno.test("ed25519 follows a change of seed, even one made in place in the caller's array", () => {
  const seed = bytes(RFC_8032[0].secret);
  strictEqual(hex(ed25519Sign(seed, new Uint8Array())), RFC_8032[0].signature);
  strictEqual(hex(ed25519Sign(bytes(RFC_8032[2].secret), bytes("af82"))), RFC_8032[2].signature);
  strictEqual(hex(ed25519PublicKey(seed)), RFC_8032[0].public);
  seed.set(bytes(RFC_8032[1].secret));
  strictEqual(hex(ed25519PublicKey(seed)), RFC_8032[1].public);
  strictEqual(hex(ed25519Sign(seed, bytes("72"))), RFC_8032[1].signature);
});

Deno.test("ed25519 refuses a seed that is not 32 bytes", () => {
  for (const length of [0, 31, 33, 64]) {
    throws(() => ed25519PublicKey(new Uint8Array(length)), /32 bytes/, `public key, ${length}`);
    throws(() => ed25519Sign(new Uint8Array(length), new Uint8Array(1)), /32 bytes/);
  }
});

Deno.test("ed25519 signs alike with the public key given, and a wrong one gives a signature that fails", () => {
  for (const vector of RFC_8032) {
    const seed = bytes(vector.secret);
    const message = bytes(vector.message);
    strictEqual(hex(ed25519Sign(seed, message, bytes(vector.public))), vector.signature);
  }
  const seed = bytes(RFC_8032[0].secret);
  const wrong = ed25519Sign(seed, bytes("72"), bytes(RFC_8032[1].public));
  const nodePublicKey = createPublicKey(nodePrivateKey(seed));
  ok(!verify(null, bytes("72"), nodePublicKey, wrong));
  ok(verify(null, bytes("72"), nodePublicKey, ed25519Sign(seed, bytes("72"))));
});

Deno.test("the embedded comb table is what its generator computes from the curve", () => {
  strictEqual(
    Deno.readTextFileSync(new URL("../../engine/model/ed25519_table.ts", import.meta.url)),
    combTableSource(),
    "run `deno run engine/model/ed25519_table_gen.ts > engine/model/ed25519_table.ts`",
  );
});
