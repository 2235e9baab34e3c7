/**
 * What the fuzzers share beyond the test helpers they run bimri with
 * (tests/helpers/cli.ts): a seeded random generator, so a seed repeats its
 * choices.
 */

/** xorshift32 from `seed`: numbers in [0, 1), the same sequence for the same seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
}
