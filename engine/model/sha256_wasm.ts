/**
 * Assembles, from its instructions, the SHA-256 block function (FIPS 180-4)
 * that sha256.ts embeds as bytes: a short CLI process hashes its head and
 * records while V8 still interprets JavaScript, where the same rounds in
 * WebAssembly run compiled from the first block (about 50x faster cold), but
 * assembling the module cost each such process about a millisecond, so
 * nothing loads this at run time; tests/unit/sha256_test.ts proves the
 * embedded bytes are exactly what it assembles.
 *
 * Memory layout: K at 0, the message schedule W at 256, the state H at 512,
 * message blocks from 1024. `compress(n)` folds the n blocks at 1024 into H.
 */
import { CHUNK_BLOCKS, DATA_OFFSET, SHA256_K as K, STATE_OFFSET } from "./sha256.ts";

const PAGES = Math.ceil((DATA_OFFSET + CHUNK_BLOCKS * 64) / 65536);

// Opcodes used below.
const LOCAL_GET = 0x20, LOCAL_SET = 0x21, LOCAL_TEE = 0x22, I32_CONST = 0x41;
const I32_LOAD = 0x28, I32_STORE = 0x36, I32_ADD = 0x6a, I32_AND = 0x71, I32_OR = 0x72;
const I32_XOR = 0x73, I32_SHL = 0x74, I32_SHR_U = 0x76, I32_ROTL = 0x77, I32_ROTR = 0x78;
const I32_LT_U = 0x49, I32_GE_U = 0x4f, BLOCK = 0x02, LOOP = 0x03, BR = 0x0c, BR_IF = 0x0d;
const END = 0x0b, VOID = 0x40;

// Locals: 0 = n (parameter), then the working variables and counters.
const [N, A, B, C, D, E, F, G, H, I, T1, T2, P, LAST, TMP] = [
  0,
  1,
  2,
  3,
  4,
  5,
  6,
  7,
  8,
  9,
  10,
  11,
  12,
  13,
  14,
];
const VARS = [A, B, C, D, E, F, G, H];

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  while (true) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const get = (i: number) => [LOCAL_GET, i];
const set = (i: number) => [LOCAL_SET, i];
const tee = (i: number) => [LOCAL_TEE, i];
const k = (n: number) => [I32_CONST, ...sleb(n | 0)];
const load = (offset: number) => [I32_LOAD, 2, ...uleb(offset)];
const store = (offset: number) => [I32_STORE, 2, ...uleb(offset)];
/** rotr(x, a) ^ rotr(x, b) ^ (rotr or shr)(x, c) of local `x`. */
const sigma = (x: number, a: number, b: number, c: number, lastShift: number) => [
  ...get(x),
  ...k(a),
  I32_ROTR,
  ...get(x),
  ...k(b),
  I32_ROTR,
  I32_XOR,
  ...get(x),
  ...k(c),
  lastShift,
  I32_XOR,
];
/** `i += 4; continue while i < limit` (the loop's own branch). */
const next = (limit: number) => [...get(I), ...k(4), I32_ADD, ...tee(I), ...k(limit), I32_LT_U];

function body(): number[] {
  return [
    // last = 1024 + n * 64; p = 1024
    ...get(N),
    ...k(6),
    I32_SHL,
    ...k(DATA_OFFSET),
    I32_ADD,
    ...set(LAST),
    ...k(DATA_OFFSET),
    ...set(P),
    BLOCK,
    VOID,
    LOOP,
    VOID,
    ...get(P),
    ...get(LAST),
    I32_GE_U,
    BR_IF,
    1,
    // W[0..15]: the block's big-endian words.
    ...k(0),
    ...set(I),
    LOOP,
    VOID,
    ...get(I),
    ...get(P),
    ...get(I),
    I32_ADD,
    ...load(0),
    ...tee(TMP),
    ...k(8),
    I32_ROTL,
    ...k(0x00ff00ff),
    I32_AND,
    ...get(TMP),
    ...k(8),
    I32_ROTR,
    ...k(0xff00ff00),
    I32_AND,
    I32_OR,
    ...store(256),
    ...next(64),
    BR_IF,
    0,
    END,
    // W[16..63] (i is a byte offset: W[i/4 - 15] is at i + 196, and so on).
    LOOP,
    VOID,
    ...get(I),
    ...get(I),
    ...load(196),
    ...set(TMP),
    ...sigma(TMP, 7, 18, 3, I32_SHR_U),
    ...get(I),
    ...load(248),
    ...set(TMP),
    ...sigma(TMP, 17, 19, 10, I32_SHR_U),
    I32_ADD,
    ...get(I),
    ...load(192),
    I32_ADD,
    ...get(I),
    ...load(228),
    I32_ADD,
    ...store(256),
    ...next(256),
    BR_IF,
    0,
    END,
    // a..h = H
    ...VARS.flatMap((v, j) => [...k(0), ...load(STATE_OFFSET + 4 * j), ...set(v)]),
    ...k(0),
    ...set(I),
    LOOP,
    VOID,
    // t1 = h + S1(e) + ch(e, f, g) + K[i] + W[i]
    ...get(H),
    ...sigma(E, 6, 11, 25, I32_ROTR),
    I32_ADD,
    ...get(E),
    ...get(F),
    I32_AND,
    ...get(E),
    ...k(-1),
    I32_XOR,
    ...get(G),
    I32_AND,
    I32_XOR,
    I32_ADD,
    ...get(I),
    ...load(0),
    I32_ADD,
    ...get(I),
    ...load(256),
    I32_ADD,
    ...set(T1),
    // t2 = S0(a) + maj(a, b, c)
    ...sigma(A, 2, 13, 22, I32_ROTR),
    ...get(A),
    ...get(B),
    I32_AND,
    ...get(A),
    ...get(C),
    I32_AND,
    I32_XOR,
    ...get(B),
    ...get(C),
    I32_AND,
    I32_XOR,
    I32_ADD,
    ...set(T2),
    ...get(G),
    ...set(H),
    ...get(F),
    ...set(G),
    ...get(E),
    ...set(F),
    ...get(D),
    ...get(T1),
    I32_ADD,
    ...set(E),
    ...get(C),
    ...set(D),
    ...get(B),
    ...set(C),
    ...get(A),
    ...set(B),
    ...get(T1),
    ...get(T2),
    I32_ADD,
    ...set(A),
    ...next(256),
    BR_IF,
    0,
    END,
    // H += a..h
    ...VARS.flatMap((v, j) => [
      ...k(0),
      ...k(0),
      ...load(STATE_OFFSET + 4 * j),
      ...get(v),
      I32_ADD,
      ...store(STATE_OFFSET + 4 * j),
    ]),
    ...get(P),
    ...k(64),
    I32_ADD,
    ...set(P),
    BR,
    0,
    END,
    END,
    END,
  ];
}

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}

/** The module's bytes: one function `c(n)`, one memory `m` holding K. */
export function sha256ModuleBytes(): Uint8Array<ArrayBuffer> {
  const code = [1, 15 - 1, 0x7f, ...body()]; // one local group: 14 i32 besides the parameter
  const kBytes = K.flatMap((
    word,
  ) => [word & 0xff, (word >>> 8) & 0xff, (word >>> 16) & 0xff, word >>> 24]);
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, [1, 0x60, 1, 0x7f, 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, ...uleb(PAGES)]),
    ...section(7, [2, 1, 0x6d, 2, 0, 1, 0x63, 0, 0]),
    ...section(10, [1, ...uleb(code.length), ...code]),
    ...section(11, [1, 0, ...k(0), END, ...uleb(kBytes.length), ...kBytes]),
  ]);
}
