/** Times one child process for the benchmarks: its own wall and CPU time, measured by a python3 wrapper where there is one. */

/**
 * Runs a command and reports its own wall time and its CPU time (user +
 * system, microseconds from getrusage) on stderr, so the wrapper's start-up
 * counts in neither. python3 is on every machine (the conformance runner).
 */
export const MEASURE = [
  "import resource, subprocess, sys, time",
  "t = time.perf_counter()",
  "r = subprocess.run(sys.argv[1:])",
  "w = time.perf_counter() - t",
  "u = resource.getrusage(resource.RUSAGE_CHILDREN)",
  "sys.stderr.write('BIMRI_TIMES=%f %f\\n' % (w * 1000, (u.ru_utime + u.ru_stime) * 1000))",
  "sys.exit(r.returncode)",
].join("\n");

/** The python3 that runs MEASURE, or null where there is none. */
export const PYTHON = (() => {
  for (const path of ["/usr/bin/python3", "/usr/local/bin/python3"]) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch { /* next */ }
  }
  return null;
})();

/** One finished process: wall time, CPU time (user + system) where python3 reports it, its output and exit code. */
export type TimedProcess = {
  ms: number;
  cpuMs: number | null;
  out: string;
  stderr: string;
  code: number;
};

/** Runs `argv` to the end, timed by MEASURE where python3 exists (else by the wall clock here). */
export async function timeProcess(argv: readonly string[]): Promise<TimedProcess> {
  const cmd = PYTHON ? [PYTHON, "-c", MEASURE, ...argv] : [...argv];
  const t0 = performance.now();
  const done = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const wall = performance.now() - t0;
  const stderr = new TextDecoder().decode(done.stderr);
  const own = /BIMRI_TIMES=([0-9.]+) ([0-9.]+)/.exec(stderr);
  return {
    ms: own ? Number(own[1]) : wall,
    cpuMs: own ? Number(own[2]) : null,
    out: new TextDecoder().decode(done.stdout),
    stderr,
    code: done.code,
  };
}
