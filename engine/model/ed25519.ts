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

/** The field prime 2^255 - 19. */
const P = 2n ** 255n - 19n;
/** The order of the base point (the prime subgroup). */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
/** 2d, where d = -121665/121666 mod p is the curve constant: the addition law uses only 2d. */
const D2 = 16295367250680780974490674513165176452449235426866156013048779062215315747161n;
const BASE_X = 15112221349535400772501151409588531511454012693041857206046113283949847762202n;
const BASE_Y = 46316835694926478169428394003475163141307993866256225615783033603165251855960n;

/**
 * A point in extended coordinates (x = X/Z, y = Y/Z, x*y = T/Z): adding and
 * doubling need no inversion. Coordinates are kept only as residues in
 * (-p, p) after each product; sums between products stay a few p wide, and
 * the value is brought into [0, p) once, when the point is encoded.
 */
type Point = { x: bigint; y: bigint; z: bigint; t: bigint };
/** A point ready to be added: (Y+X, Y-X, 2Z, 2dT), saving work for each addition. */
type Cached = { ypx: bigint; ymx: bigint; z2: bigint; t2d: bigint };

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

/** Point addition, add-2008-hwcd-3 for a = -1, the second point cached. */
function add(p: Point, q: Cached): Point {
  const a = ((p.y - p.x) * q.ymx) % P;
  const b = ((p.y + p.x) * q.ypx) % P;
  const c = (p.t * q.t2d) % P;
  const d = (p.z * q.z2) % P;
  const e = b - a;
  const f = d - c;
  const g = d + c;
  const h = b + a;
  return { x: (e * f) % P, y: (g * h) % P, z: (f * g) % P, t: (e * h) % P };
}

function cached(p: Point): Cached {
  return { ypx: p.y + p.x, ymx: p.y - p.x, z2: 2n * p.z, t2d: (p.t * D2) % P };
}

function negated(q: Cached): Cached {
  return { ypx: q.ymx, ymx: q.ypx, z2: q.z2, t2d: -q.t2d };
}

/**
 * Signed base-16 digits (-7..8) of a scalar make k * B a sum of 64 table
 * points. The table is a comb: row r holds j * 16^(SPACING * r) * B for
 * j = 1..8, so digit k is added from row floor(k / SPACING), and the digits
 * are taken by k mod SPACING from high to low with 4 doublings between. A row
 * for every digit would need no doubling but 512 point operations of set-up
 * against ~320 here (built on first use and kept): a process mostly signs
 * once, and its first signature measured ~15% faster, later ones ~10% slower.
 */
const SPACING = 4;
const ROWS = 64 / SPACING;
let table: Cached[][] | null = null;

function baseTable(): Cached[][] {
  if (table !== null) return table;
  const rows: Cached[][] = [];
  let base: Point = { x: BASE_X, y: BASE_Y, z: 1n, t: (BASE_X * BASE_Y) % P };
  for (let r = 0; r < ROWS; r++) {
    const c1 = cached(base);
    const p2 = double(base);
    const p3 = add(p2, c1);
    const p4 = double(p2);
    const p5 = add(p4, c1);
    const p6 = double(p3);
    const p7 = add(p6, c1);
    const p8 = double(p4);
    rows.push([c1, ...[p2, p3, p4, p5, p6, p7, p8].map(cached)]);
    base = p8;
    for (let i = 0; i < 4 * SPACING - 3; i++) base = double(base);
  }
  table = rows;
  return rows;
}

/** k * B for 0 <= k < L. */
function baseMultiple(k: bigint): Point {
  const rows = baseTable();
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
      if (digit > 0) acc = add(acc, rows[r][digit - 1]);
      else if (digit < 0) acc = add(acc, negated(rows[r][-digit - 1]));
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

function expand(seed: Uint8Array): ExpandedKey {
  if (!(seed instanceof Uint8Array) || seed.length !== 32) {
    throw new Error(`an Ed25519 seed is 32 bytes, not ${seed?.length}`);
  }
  if (lastKey !== null && lastKey.seed.every((byte, i) => byte === seed[i])) return lastKey;
  const h = sha512(seed);
  const clamped = h.slice(0, 32);
  clamped[0] &= 248;
  clamped[31] &= 127;
  clamped[31] |= 64;
  // B has order L, so the clamped scalar may be reduced before multiplying.
  const scalar = scalarOfBytes(clamped) % L;
  const publicKey = encodePoint(baseMultiple(scalar));
  lastKey = { seed: seed.slice(), scalar, prefix: h.slice(32), publicKey };
  return lastKey;
}

/** The 32-byte Ed25519 public key of a 32-byte seed (RFC 8032 5.1.5); throws on another length. */
export function ed25519PublicKey(seed: Uint8Array): Uint8Array {
  return expand(seed).publicKey.slice();
}

/** The deterministic 64-byte Ed25519 signature of `message` by a 32-byte seed (RFC 8032 5.1.6). */
export function ed25519Sign(seed: Uint8Array, message: Uint8Array): Uint8Array {
  const key = expand(seed);
  const r = scalarOfBytes(sha512(concat(key.prefix, message))) % L;
  const encodedR = encodePoint(baseMultiple(r));
  const k = scalarOfBytes(sha512(concat(encodedR, key.publicKey, message))) % L;
  const s = (r + k * key.scalar) % L;
  return concat(encodedR, bytesOfScalar(s));
}
