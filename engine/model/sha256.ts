/**
 * Synchronous SHA-256 (FIPS 180-4). The engine hashes on every command;
 * loading node:crypto's compatibility layer costs more process start-up time
 * than all of bimri's hashing, so the digest is computed here: in JavaScript
 * for small inputs, else by a block function in WebAssembly whose module is
 * embedded below as bytes (sha256_wasm.ts assembles it from its instructions).
 */

/** The 64 round constants of FIPS 180-4 (section 4.2.2), as unsigned 32-bit values. */
export const SHA256_K: readonly number[] = [
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
];

/** Where the caller puts message blocks. */
export const DATA_OFFSET = 1024;
/** Where the eight state words live (native-endian i32). */
export const STATE_OFFSET = 512;
/** Blocks the memory holds at once (the caller feeds longer input in chunks). */
export const CHUNK_BLOCKS = 4096;

// Int32 arrays keep every intermediate a small integer for V8 (Uint32
// values above 2^31 would become heap numbers in the inner loop).
const K = new Int32Array(SHA256_K);

/**
 * Bytes hashed in JavaScript after which the WebAssembly block function pays
 * for its set-up (~8M instructions): a cold process interprets the
 * JavaScript rounds at ~5M instructions per KB, WebAssembly runs them
 * compiled from the first block. Below it (a few small records) JavaScript is cheaper.
 */
export const WASM_AFTER_BYTES = 2048;
let hashedInJs = 0;

/** SHA-256 of `bytes` as 64 lowercase hex characters. */
export function sha256HexOfBytes(bytes: Uint8Array): string {
  if (wasmReady !== null || hashedInJs + bytes.length >= WASM_AFTER_BYTES) {
    wasmReady ??= sha256Wasm() ?? false;
    if (wasmReady !== false) return sha256WithWasm(wasmReady, bytes);
  }
  hashedInJs += bytes.length;
  return sha256HexOfBytesJs(bytes);
}

/** The block function once set up, false where WebAssembly is unavailable (--jitless). */
let wasmReady: Sha256Wasm | false | null = null;

const INITIAL_STATE = [
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
];

/** The digest through the WebAssembly block function: input in chunks, padding here. */
function sha256WithWasm(wasm: Sha256Wasm, bytes: Uint8Array): string {
  const memory = new Uint8Array(wasm.memory.buffer);
  const state = new Int32Array(wasm.memory.buffer, STATE_OFFSET, 8);
  state.set(INITIAL_STATE);
  const full = bytes.length >>> 6;
  for (let done = 0; done < full;) {
    const n = Math.min(full - done, CHUNK_BLOCKS);
    memory.set(bytes.subarray(done << 6, (done + n) << 6), DATA_OFFSET);
    wasm.compress(n);
    done += n;
  }
  const rest = bytes.subarray(full << 6);
  const tailBlocks = rest.length + 9 <= 64 ? 1 : 2;
  const end = DATA_OFFSET + (tailBlocks << 6);
  memory.fill(0, DATA_OFFSET, end);
  memory.set(rest, DATA_OFFSET);
  memory[DATA_OFFSET + rest.length] = 0x80;
  const view = new DataView(wasm.memory.buffer);
  const bitLength = bytes.length * 8;
  view.setUint32(end - 8, Math.floor(bitLength / 0x100000000));
  view.setUint32(end - 4, bitLength >>> 0);
  wasm.compress(tailBlocks);
  let hex = "";
  for (let i = 0; i < 8; i++) hex += (state[i] >>> 0).toString(16).padStart(8, "0");
  return hex;
}

/** The same digest in plain JavaScript (small inputs, and where WebAssembly is unavailable; tests compare the two). */
export function sha256HexOfBytesJs(bytes: Uint8Array): string {
  const length = bytes.length;
  const blocks = (length + 9 + 63) >> 6;
  // Only the final one or two blocks need padding; the rest is read in place.
  const tailStart = (length >> 6) << 6;
  const tail = new Uint8Array((blocks << 6) - tailStart);
  tail.set(bytes.subarray(tailStart));
  tail[length - tailStart] = 0x80;
  const bitLength = length * 8;
  const tailView = new DataView(tail.buffer);
  // Lengths stay far below 2^53 bits; split into the two 32-bit words.
  tailView.setUint32(tail.length - 8, Math.floor(bitLength / 0x100000000));
  tailView.setUint32(tail.length - 4, bitLength >>> 0);
  const h = new Int32Array(INITIAL_STATE);
  const w = new Int32Array(64);
  for (let block = 0; block < blocks; block++) {
    const offset = block << 6;
    const source = offset < tailStart ? bytes : tail;
    const base = offset < tailStart ? offset : offset - tailStart;
    for (let i = 0; i < 16; i++) {
      const j = base + (i << 2);
      w[i] = (source[j] << 24) | (source[j + 1] << 16) | (source[j + 2] << 8) | source[j + 3];
    }
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15];
      const b = w[i - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (k + S1 + ch + K[i] + w[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = (h[0] + a) | 0;
    h[1] = (h[1] + b) | 0;
    h[2] = (h[2] + c) | 0;
    h[3] = (h[3] + d) | 0;
    h[4] = (h[4] + e) | 0;
    h[5] = (h[5] + f) | 0;
    h[6] = (h[6] + g) | 0;
    h[7] = (h[7] + k) | 0;
  }
  let hex = "";
  for (let i = 0; i < 8; i++) hex += (h[i] >>> 0).toString(16).padStart(8, "0");
  return hex;
}

/** The instantiated block function and its memory. */
export type Sha256Wasm = { memory: WebAssembly.Memory; compress: (blocks: number) => void };

/**
 * The block function's module (sha256_wasm.ts assembles it; a unit test
 * keeps the two equal): one function `c(n)`, one memory `m` holding K.
 */
export const SHA256_WASM_BASE64 =
  "AGFzbQEAAAABBQFgAX8AAwIBAAUDAQAFBwkCAW0CAAFjAAAKhwQBhAQBDn8gAEEGdEGACGohDUGACCEMAkADQCAMIA1PDQFBACEJA0AgCSAMIAlqKAIAIg5BCHdB/4H8B3EgDkEIeEGA/oN4cXI2AoACIAlBBGoiCUHAAEkNAAsDQCAJIAkoAsQBIQ4gDkEHeCAOQRJ4cyAOQQN2cyAJKAL4ASEOIA5BEXggDkETeHMgDkEKdnNqIAkoAsABaiAJKALkAWo2AoACIAlBBGoiCUGAAkkNAAtBACgCgAQhAUEAKAKEBCECQQAoAogEIQNBACgCjAQhBEEAKAKQBCEFQQAoApQEIQZBACgCmAQhB0EAKAKcBCEIQQAhCQNAIAggBUEGeCAFQQt4cyAFQRl4c2ogBSAGcSAFQX9zIAdxc2ogCSgCAGogCSgCgAJqIQogAUECeCABQQ14cyABQRZ4cyABIAJxIAEgA3FzIAIgA3FzaiELIAchCCAGIQcgBSEGIAQgCmohBSADIQQgAiEDIAEhAiAKIAtqIQEgCUEEaiIJQYACSQ0AC0EAQQAoAoAEIAFqNgKABEEAQQAoAoQEIAJqNgKEBEEAQQAoAogEIANqNgKIBEEAQQAoAowEIARqNgKMBEEAQQAoApAEIAVqNgKQBEEAQQAoApQEIAZqNgKUBEEAQQAoApgEIAdqNgKYBEEAQQAoApwEIAhqNgKcBCAMQcAAaiEMDAALCwsLhwIBAEEAC4ACmC+KQpFEN3HP+8C1pdu16VvCVjnxEfFZpII/ktVeHKuYqgfYAVuDEr6FMSTDfQxVdF2+cv6x3oCnBtybdPGbwcFpm+SGR77vxp3BD8yhDCRvLOktqoR0StypsFzaiPl2UlE+mG3GMajIJwOwx39Zv/ML4MZHkafVUWPKBmcpKRSFCrcnOCEbLvxtLE0TDThTVHMKZbsKanYuycKBhSxykqHov6JLZhqocItLwqNRbMcZ6JLRJAaZ1oU1DvRwoGoQFsGkGQhsNx5Md0gntbywNLMMHDlKqthOT8qcW/NvLmjugo90b2OleBR4yIQIAseM+v++kOtsUKT3o/m+8nhxxg==";

/** Compiles the module (once per process), or null where WebAssembly is unavailable (--jitless). */
export function sha256Wasm(): Sha256Wasm | null {
  if (cached !== undefined) return cached;
  try {
    const bytes = Uint8Array.fromBase64(SHA256_WASM_BASE64);
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes));
    cached = {
      memory: instance.exports.m as WebAssembly.Memory,
      compress: instance.exports.c as (blocks: number) => void,
    };
  } catch {
    cached = null;
  }
  return cached;
}

let cached: Sha256Wasm | null | undefined;
