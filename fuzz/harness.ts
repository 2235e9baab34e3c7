/**
 * What the fuzzers share: running bimri as its own `deno run` process, and a
 * seeded random generator so a seed repeats its choices.
 */
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));

/** The command line that runs bimri from this checkout, as the tests and the bench do. */
export const BIMRI_ARGV = [
  Deno.execPath(),
  "run",
  "--quiet",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run",
  MAIN,
];

/** Exit code and decoded output of one bimri process. */
export type Result = { code: number; stdout: string; stderr: string };

/** Runs `bimri --root <root> <args>` as its own process and waits for it. */
export async function bimri(root: string, args: string[]): Promise<Result> {
  const out = await new Deno.Command(BIMRI_ARGV[0], {
    args: [...BIMRI_ARGV.slice(1), "--root", root, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

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
