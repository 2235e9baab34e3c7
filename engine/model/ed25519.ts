/**
 * Ed25519 signing and public-key derivation (RFC 8032), synchronous and in
 * plain TypeScript, so that a command exporting a change to a shared store
 * signs its record without loading node:crypto (~16 ms of start-up for a
 * 40-50 ms command) and without WebCrypto's promises under the engine lock.
 * Verification stays with node:crypto. The BigInt arithmetic is NOT
 * constant-time: that is acceptable here because a local process able to
 * time a signature could as well read the key file it is made from.
 */
import { sha512 } from "./sha512.ts";
import { BASE_COMB } from "./ed25519_table.ts";

/** The field prime 2^255 - 19. */
const P = 2n ** 255n - 19n;
/** The order of the base point (the prime subgroup). */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

/**
 * A point in extended coordinates (x = X/Z, y = Y/Z, x*y = T/Z): adding and
 * doubling need no inversion. Coordinates are kept only as residues in
 * (-p, p) after each product; sums between products stay a few p wide, and
 * the value is brought into [0, p) once, when the point is encoded.
 */
type Point = { x: bigint; y: bigint; z: bigint; t: bigint };
/** Point doubling, dbl-2008-hwcd for a = -1. */
function double(p: Point): Point {
  const a = (p.x * p.x) % P;
  const b = (p.y * p.y) % P;
  const c = (2n * p.z * p.z) % P;
  const s = p.x + p.y;
  const e = (s * s - a - b) % P;
  const g = b - a;
  const f = g - c;
  const h = -a - b;
  return { x: (e * f) % P, y: (g * h) % P, z: (f * g) % P, t: (e * h) % P };
}

/**
 * p + (sign) * Q for Q the table point at `at` (ed25519_table.ts: y + x,
 * y - x, 2d * x * y, with Z = 1): add-2008-hwcd-3 for a = -1 with the
 * second point affine ("madd"). Negating Q swaps its first two values and
 * negates the third.
 */
function addTablePoint(p: Point, at: number, negate: boolean): Point {
  const ypx = BASE_COMB[negate ? at + 1 : at];
  const ymx = BASE_COMB[negate ? at : at + 1];
  const t2d = negate ? -BASE_COMB[at + 2] : BASE_COMB[at + 2];
  const a = ((p.y - p.x) * ymx) % P;
  const b = ((p.y + p.x) * ypx) % P;
  const c = (p.t * t2d) % P;
  const d = 2n * p.z;
  const e = b - a;
  const f = d - c;
  const g = d + c;
  const h = b + a;
  return { x: (e * f) % P, y: (g * h) % P, z: (f * g) % P, t: (e * h) % P };
}

/**
 * Signed base-16 digits (-7..8) of a scalar make k * B a sum of 64 table
 * points. The table is a comb: row r holds j * 16^(SPACING * r) * B for
 * j = 1..8, so digit k is added from row floor(k / SPACING), and the digits
 * are taken by k mod SPACING from high to low with 4 doublings between. The
 * table is embedded (generated once), not built: a process mostly signs
 * once, and building it cost more than the signature itself.
 */
const SPACING = 4;
const ROWS = 64 / SPACING;
/** Values per table row: 8 points of 3 residues. */
const ROW_VALUES = 24;

/** k * B for 0 <= k < L. */
function baseMultiple(k: bigint): Point {
  const bytes = bytesOfScalar(k);
  const digits = new Int8Array(64);
  let carry = 0;
  for (let i = 0; i < 64; i++) {
    const digit = ((bytes[i >> 1] >> ((i & 1) << 2)) & 15) + carry;
    carry = digit > 8 ? 1 : 0;
    digits[i] = digit - (carry << 4);
  }
  // k < 2^253 leaves the last digit at most 2, so no carry is lost.
  let acc: Point = { x: 0n, y: 1n, z: 1n, t: 0n };
  for (let c = SPACING - 1; c >= 0; c--) {
    if (c < SPACING - 1) acc = double(double(double(double(acc))));
    for (let r = 0; r < ROWS; r++) {
      const digit = digits[r * SPACING + c];
      if (digit !== 0) {
        acc = addTablePoint(acc, r * ROW_VALUES + 3 * (Math.abs(digit) - 1), digit < 0);
      }
    }
  }
  return acc;
}

/** z^(p-2) = 1/z: the exponent 2^255 - 21 as (2^250 - 1) * 2^5 + 11. */
function invert(z: bigint): bigint {
  const squarings = (x: bigint, n: number) => {
    for (let i = 0; i < n; i++) x = (x * x) % P;
    return x;
  };
  const x2 = (z * z) % P;
  const x3 = (x2 * z) % P;
  const x11 = (squarings(x2, 2) * x3) % P;
  const b4 = (squarings(x3, 2) * x3) % P;
  const b5 = (b4 * b4 * z) % P;
  const b10 = (squarings(b5, 5) * b5) % P;
  const b20 = (squarings(b10, 10) * b10) % P;
  const b40 = (squarings(b20, 20) * b20) % P;
  const b80 = (squarings(b40, 40) * b40) % P;
  const b160 = (squarings(b80, 80) * b80) % P;
  const b240 = (squarings(b160, 80) * b80) % P;
  const b250 = (squarings(b240, 10) * b10) % P;
  return (squarings(b250, 5) * x11) % P;
}

/** RFC 8032 5.1.2: y little-endian, the top bit holding the parity of x. */
function encodePoint(p: Point): Uint8Array {
  const zInverse = invert(p.z);
  const x = (((p.x * zInverse) % P) + P) % P;
  const y = (((p.y * zInverse) % P) + P) % P;
  const out = bytesOfScalar(y);
  if (x & 1n) out[31] |= 0x80;
  return out;
}

/** The little-endian number a byte string encodes. */
function scalarOfBytes(bytes: Uint8Array): bigint {
  let hex = "0x";
  for (let i = bytes.length - 1; i >= 0; i--) hex += bytes[i].toString(16).padStart(2, "0");
  return BigInt(hex);
}

/** 32 little-endian bytes of 0 <= n < 2^256. */
function bytesOfScalar(n: bigint): Uint8Array {
  const hex = n.toString(16).padStart(64, "0");
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(62 - 2 * i, 64 - 2 * i), 16);
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** What RFC 8032 5.1.5 derives from a seed: the secret scalar, the nonce prefix, the public key. */
type ExpandedKey = { seed: Uint8Array; scalar: bigint; prefix: Uint8Array; publicKey: Uint8Array };
/** The last seed's expansion: a process signing several records derives its key once. */
let lastKey: ExpandedKey | null = null;

/** The secret scalar and nonce prefix of a 32-byte seed. */
function secretOf(seed: Uint8Array): { scalar: bigint; prefix: Uint8Array } {
  if (!(seed instanceof Uint8Array) || seed.length !== 32) {
    throw new Error(`an Ed25519 seed is 32 bytes, not ${seed?.length}`);
  }
  const h = sha512(seed);
  const clamped = h.slice(0, 32);
  clamped[0] &= 248;
  clamped[31] &= 127;
  clamped[31] |= 64;
  // B has order L, so the clamped scalar may be reduced before multiplying.
  return { scalar: scalarOfBytes(clamped) % L, prefix: h.slice(32) };
}

function expand(seed: Uint8Array): ExpandedKey {
  if (
    lastKey !== null && seed instanceof Uint8Array && seed.length === 32 &&
    lastKey.seed.every((byte, i) => byte === seed[i])
  ) return lastKey;
  const { scalar, prefix } = secretOf(seed);
  const publicKey = encodePoint(baseMultiple(scalar));
  lastKey = { seed: seed.slice(), scalar, prefix, publicKey };
  return lastKey;
}

/** The 32-byte Ed25519 public key of a 32-byte seed (RFC 8032 5.1.5); throws on another length. */
export function ed25519PublicKey(seed: Uint8Array): Uint8Array {
  return expand(seed).publicKey.slice();
}

/**
 * The deterministic 64-byte Ed25519 signature of `message` by a 32-byte seed
 * (RFC 8032 5.1.6). `publicKey`: the seed's public key when the caller keeps
 * it beside the seed (a key file holding both), which spares deriving it, a
 * third of a first signature's cost; a wrong one makes a signature that
 * does not verify.
 */
export function ed25519Sign(
  seed: Uint8Array,
  message: Uint8Array,
  publicKey?: Uint8Array,
): Uint8Array {
  const key = publicKey?.length === 32 ? { ...secretOf(seed), publicKey } : expand(seed);
  const r = scalarOfBytes(sha512(concat(key.prefix, message))) % L;
  const encodedR = encodePoint(baseMultiple(r));
  const k = scalarOfBytes(sha512(concat(encodedR, key.publicKey, message))) % L;
  const s = (r + k * key.scalar) % L;
  return concat(encodedR, bytesOfScalar(s));
}
