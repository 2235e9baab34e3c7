/**
 * The one permission list bimri runs with. The compiled binary is built with
 * it (deno.json compile tasks), tests run the CLI with it
 * (tests/helpers/cli.ts), and the installer records it in the runtime argv
 * prefix of a `deno run` binding, so all three must stay identical.
 */

/** Deno permission flags for every way bimri runs (read/write the store, env, spawn itself). */
export const RUN_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run",
];
