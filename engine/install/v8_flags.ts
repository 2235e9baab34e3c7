/**
 * The V8 flags every way bimri runs with: the compile tasks bake them into the
 * binary, the installer records them in a `deno run` binding (so hooks, agents
 * and `bimri mcp` all get them), and the tests and the bench run the CLI with
 * them. One list, because V8 refuses a code cache written under other flags:
 * alternating flag sets would recompile bimri's modules on every switch.
 */

/**
 * Bounds the heap of a resident `bimri mcp` server answering back-to-back
 * sessions, whose live heap stays near 16 MB at 10,000 runs while V8, left to
 * itself, sizes the heap for its allocation rate:
 *
 * - `--max-semi-space-size=8` caps each young-generation semi-space at 8 MB
 *   (V8 grows them to 16 MB or more);
 * - `--heap-growing-percent=20` lets the old generation grow to 1.2 times
 *   what survived the last full collection, where V8 picks 1.1 to 4 from
 *   how fast it collects and the program allocates.
 *
 * Measured at 10,000 runs over 150-300 back-to-back sessions: 214-229 MiB peak
 * with either flag alone, 152-154 MiB with both, each call within noise. A
 * short CLI command never reaches either limit, so it is unaffected; a full
 * audit (`doctor`, `install --quiescent`) is unchanged in time and memory
 * (50 percent, tried first, added 10-15 MB there).
 *
 * `--min-semi-space-size=2` starts each semi-space at 2 MB instead of 1: a
 * short command that allocates a little past 1 MB of young objects (a sync,
 * a close of a shared store) otherwise pays a scavenge, 0.5-2.5 ms, just
 * before it ends (measured 2026-12-07: unshared sync 45 to 40 ms p50, shared
 * close 39 to 36 ms, the reads unchanged).
 *
 * `--baseline-batch-compilation-threshold=65536` lets Sparkplug, V8's
 * baseline compiler, wait for 64 KB of warm bytecode before it compiles a
 * batch, where it waits for 4 KB by default. A short command compiled
 * batches it never ran long enough to gain from; a long-running server or a
 * long pull still reaches its batches, later. Measured 2026-12-07
 * (bench/everyday_ab.ts, a copy of this checkout with the flag beside
 * it, interleaved): every everyday command 3-7 percent faster at 40 runs and
 * 7-14 percent at 10,000 runs; a pull of 1,200 and of 10,000 records the
 * same within noise; the console's pages about 0.5 ms slower right after a
 * change on a 10,000-run store. `--no-sparkplug` gained as much on short
 * commands but takes the baseline tier from long-running work too.
 *
 * A Deno whose V8 does not know one of these flags refuses to start ("V8 did
 * not recognize flag") at the binding's first run; dropping that flag from
 * the binding is the way out. CI and the compiled executables run the V8
 * that knows them (Deno 2.9.6, V8 15.0).
 */
export const RUN_V8_FLAGS: readonly string[] = [
  "--v8-flags=--max-semi-space-size=8,--min-semi-space-size=2,--heap-growing-percent=20,--baseline-batch-compilation-threshold=65536",
];
