/**
 * Synchronous SHA-512 (FIPS 180-4), the hash inside Ed25519 signing: loading
 * node:crypto costs a short process more start-up time than it would save.
 * Each 64-bit word is a pair of 32-bit integers (hi, lo), which V8 keeps as
 * small integers; BigInt words would allocate on every operation.
 */

// The 80 round constants, hi and lo words interleaved.
const K = hexWords(
  "428a2f98d728ae22 7137449123ef65cd b5c0fbcfec4d3b2f e9b5dba58189dbbc 3956c25bf348b538 " +
    "59f111f1b605d019 923f82a4af194f9b ab1c5ed5da6d8118 d807aa98a3030242 12835b0145706fbe " +
    "243185be4ee4b28c 550c7dc3d5ffb4e2 72be5d74f27b896f 80deb1fe3b1696b1 9bdc06a725c71235 " +
    "c19bf174cf692694 e49b69c19ef14ad2 efbe4786384f25e3 0fc19dc68b8cd5b5 240ca1cc77ac9c65 " +
    "2de92c6f592b0275 4a7484aa6ea6e483 5cb0a9dcbd41fbd4 76f988da831153b5 983e5152ee66dfab " +
    "a831c66d2db43210 b00327c898fb213f bf597fc7beef0ee4 c6e00bf33da88fc2 d5a79147930aa725 " +
    "06ca6351e003826f 142929670a0e6e70 27b70a8546d22ffc 2e1b21385c26c926 4d2c6dfc5ac42aed " +
    "53380d139d95b3df 650a73548baf63de 766a0abb3c77b2a8 81c2c92e47edaee6 92722c851482353b " +
    "a2bfe8a14cf10364 a81a664bbc423001 c24b8b70d0f89791 c76c51a30654be30 d192e819d6ef5218 " +
    "d69906245565a910 f40e35855771202a 106aa07032bbd1b8 19a4c116b8d2d0c8 1e376c085141ab53 " +
    "2748774cdf8eeb99 34b0bcb5e19b48a8 391c0cb3c5c95a63 4ed8aa4ae3418acb 5b9cca4f7763e373 " +
    "682e6ff3d6b2b8a3 748f82ee5defb2fc 78a5636f43172f60 84c87814a1f0ab72 8cc702081a6439ec " +
    "90befffa23631e28 a4506cebde82bde9 bef9a3f7b2c67915 c67178f2e372532b ca273eceea26619c " +
    "d186b8c721c0c207 eada7dd6cde0eb1e f57d4f7fee6ed178 06f067aa72176fba 0a637dc5a2c898a6 " +
    "113f9804bef90dae 1b710b35131c471b 28db77f523047d84 32caab7b40c72493 3c9ebe0a15c9bebc " +
    "431d67c49c100d4c 4cc5d4becb3e42b6 597f299cfc657e2a 5fcb6fab3ad6faec 6c44198c4a475817",
);
const INITIAL_STATE = hexWords(
  "6a09e667f3bcc908 bb67ae8584caa73b 3c6ef372fe94f82b a54ff53a5f1d36f1 " +
    "510e527fade682d1 9b05688c2b3e6c1f 1f83d9abfb41bd6b 5be0cd19137e2179",
);

/** The 32-bit words of space-separated 64-bit hex constants. */
function hexWords(text: string): Int32Array {
  const words = text.trim().split(" ");
  const out = new Int32Array(words.length * 2);
  words.forEach((word, i) => {
    out[2 * i] = parseInt(word.slice(0, 8), 16);
    out[2 * i + 1] = parseInt(word.slice(8), 16);
  });
  return out;
}

// The message schedule, reused by every block (hashing is synchronous).
const W = new Int32Array(160);
const TWO_32 = 0x100000000;

/** SHA-512 digest of `bytes` (64 bytes). */
export function sha512(bytes: Uint8Array): Uint8Array {
  const length = bytes.length;
  const tailStart = length - (length & 127);
  // Only the last one or two blocks need padding; the rest is read in place.
  const tail = new Uint8Array(length - tailStart + 17 <= 128 ? 128 : 256);
  tail.set(bytes.subarray(tailStart));
  tail[length - tailStart] = 0x80;
  // The 128-bit length field: byte lengths stay far below 2^53 bits.
  const bitLength = length * 8;
  const view = new DataView(tail.buffer);
  view.setUint32(tail.length - 8, Math.floor(bitLength / TWO_32));
  view.setUint32(tail.length - 4, bitLength >>> 0);
  const state = new Int32Array(INITIAL_STATE);
  for (let offset = 0; offset < tailStart; offset += 128) compress(state, bytes, offset);
  for (let offset = 0; offset < tail.length; offset += 128) compress(state, tail, offset);
  const out = new Uint8Array(64);
  for (let i = 0; i < 16; i++) {
    const word = state[i];
    out[4 * i] = word >>> 24;
    out[4 * i + 1] = word >>> 16;
    out[4 * i + 2] = word >>> 8;
    out[4 * i + 3] = word;
  }
  return out;
}

/** Folds the 128-byte block at `offset` of `source` into `state`. */
function compress(state: Int32Array, source: Uint8Array, offset: number): void {
  for (let i = 0; i < 32; i++) {
    const j = offset + (i << 2);
    W[i] = (source[j] << 24) | (source[j + 1] << 16) | (source[j + 2] << 8) | source[j + 3];
  }
  for (let i = 32; i < 160; i += 2) {
    // sigma0 = rotr 1 ^ rotr 8 ^ shr 7 of W[t-15]; sigma1 = rotr 19 ^ rotr 61 ^ shr 6 of W[t-2]
    const xh = W[i - 30], xl = W[i - 29];
    const s0h = ((xh >>> 1) | (xl << 31)) ^ ((xh >>> 8) | (xl << 24)) ^ (xh >>> 7);
    const s0l = ((xl >>> 1) | (xh << 31)) ^ ((xl >>> 8) | (xh << 24)) ^ ((xl >>> 7) | (xh << 25));
    const yh = W[i - 4], yl = W[i - 3];
    const s1h = ((yh >>> 19) | (yl << 13)) ^ ((yl >>> 29) | (yh << 3)) ^ (yh >>> 6);
    const s1l = ((yl >>> 19) | (yh << 13)) ^ ((yh >>> 29) | (yl << 3)) ^ ((yl >>> 6) | (yh << 26));
    const lo = (s0l >>> 0) + (s1l >>> 0) + (W[i - 13] >>> 0) + (W[i - 31] >>> 0);
    W[i] = (s0h + s1h + W[i - 14] + W[i - 32] + ((lo / TWO_32) | 0)) | 0;
    W[i + 1] = lo | 0;
  }
  let ah = state[0], al = state[1], bh = state[2], bl = state[3];
  let ch = state[4], cl = state[5], dh = state[6], dl = state[7];
  let eh = state[8], el = state[9], fh = state[10], fl = state[11];
  let gh = state[12], gl = state[13], hh = state[14], hl = state[15];
  for (let i = 0; i < 160; i += 2) {
    // Sigma1 = rotr 14 ^ rotr 18 ^ rotr 41 of e; Sigma0 = rotr 28 ^ rotr 34 ^ rotr 39 of a
    const S1h = ((eh >>> 14) | (el << 18)) ^ ((eh >>> 18) | (el << 14)) ^ ((el >>> 9) | (eh << 23));
    const S1l = ((el >>> 14) | (eh << 18)) ^ ((el >>> 18) | (eh << 14)) ^ ((eh >>> 9) | (el << 23));
    const chh = (eh & fh) ^ (~eh & gh);
    const chl = (el & fl) ^ (~el & gl);
    const t1lo = (hl >>> 0) + (S1l >>> 0) + (chl >>> 0) + (K[i + 1] >>> 0) + (W[i + 1] >>> 0);
    const t1h = (hh + S1h + chh + K[i] + W[i] + ((t1lo / TWO_32) | 0)) | 0;
    const t1l = t1lo | 0;
    const S0h = ((ah >>> 28) | (al << 4)) ^ ((al >>> 2) | (ah << 30)) ^ ((al >>> 7) | (ah << 25));
    const S0l = ((al >>> 28) | (ah << 4)) ^ ((ah >>> 2) | (al << 30)) ^ ((ah >>> 7) | (al << 25));
    const majh = (ah & bh) ^ (ah & ch) ^ (bh & ch);
    const majl = (al & bl) ^ (al & cl) ^ (bl & cl);
    hh = gh;
    hl = gl;
    gh = fh;
    gl = fl;
    fh = eh;
    fl = el;
    const elo = (dl >>> 0) + (t1l >>> 0);
    eh = (dh + t1h + ((elo / TWO_32) | 0)) | 0;
    el = elo | 0;
    dh = ch;
    dl = cl;
    ch = bh;
    cl = bl;
    bh = ah;
    bl = al;
    const alo = (t1l >>> 0) + (S0l >>> 0) + (majl >>> 0);
    ah = (t1h + S0h + majh + ((alo / TWO_32) | 0)) | 0;
    al = alo | 0;
  }
  add(state, 0, ah, al);
  add(state, 2, bh, bl);
  add(state, 4, ch, cl);
  add(state, 6, dh, dl);
  add(state, 8, eh, el);
  add(state, 10, fh, fl);
  add(state, 12, gh, gl);
  add(state, 14, hh, hl);
}

/** Adds the 64-bit word (hi, lo) into state[at], state[at + 1]. */
function add(state: Int32Array, at: number, hi: number, lo: number): void {
  const sum = (state[at + 1] >>> 0) + (lo >>> 0);
  state[at] = (state[at] + hi + ((sum / TWO_32) | 0)) | 0;
  state[at + 1] = sum | 0;
}
