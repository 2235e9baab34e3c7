/**
 * `deno task bundle` makes one self-contained dist/bimri.js that runs the whole
 * CLI with `deno run`: it is built here from the task's own command line, moved
 * away from the checkout, and replays the smoke session byte for byte like the
 * source tree does.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../helpers/assert.ts";
import { diffTrees, hashTree, RUN_PERMISSIONS, tempStore } from "../helpers/cli.ts";
import {
  denoTasks,
  normalizedOutputs,
  registeredVerbs,
  REPO_ROOT,
  runProcess,
  smokeSession,
} from "./dist_helpers.ts";

/** Derived caches keyed by inode and mtime: they differ between any two stores by design. */
const MACHINE_CACHES = new Set([
  ".bimri/audit-integrity-cache.json",
  ".bimri/audit-integrity-summary.json",
  ".bimri/audit-integrity-head.json",
  ".bimri/audit-integrity-history.json",
  ".bimri/audit-integrity-state.json",
  ".bimri/audit-integrity-patterns.json",
  ".bimri/audit-integrity-mentions.json",
  ".bimri/audit-integrity-settled.json",
  ".bimri/audit-integrity-secrets.json",
]);

/** The store's files and hashes, without the machine-specific caches. */
function storeFiles(root: string): Map<string, string> {
  const files = hashTree(root);
  for (const name of MACHINE_CACHES) files.delete(name);
  return files;
}

Deno.test("deno task bundle builds one file that replays the smoke session like the source", async () => {
  const task = denoTasks().bundle;
  assertEquals(task, "deno bundle --output dist/bimri.js main.ts");
  const built = await runProcess(Deno.execPath(), ["task", "--quiet", "bundle"], {
    cwd: REPO_ROOT,
  });
  assertEquals(built.code, 0, built.stderr);
  const bundlePath = join(REPO_ROOT, "dist", "bimri.js");
  const source = Deno.readTextFileSync(bundlePath);
  // Self-contained: no relative module imports survive (node: built-ins and npm: are resolved by Deno).
  assert(!/\bfrom\s+["']\.\.?\//.test(source), "bundle still imports a relative module");
  assert(!/\bimport\(\s*["']\.\.?\//.test(source), "bundle still imports a relative module");

  // Run it from a folder that holds nothing else, so it cannot lean on the checkout.
  const away = await tempStore("bimri-bundle-");
  const bundle = join(away, "bimri.js");
  Deno.copyFileSync(bundlePath, bundle);

  const verbs = await registeredVerbs(RUN_PERMISSIONS);
  const fromBundleRoot = await tempStore("bimri-bundle-store-");
  const fromSourceRoot = await tempStore("bimri-source-store-");
  const deno = Deno.execPath();
  const viaBundle = await smokeSession(
    [deno, "run", "--quiet", "--no-config", ...RUN_PERMISSIONS, bundle],
    fromBundleRoot,
    verbs,
  );
  const viaSource = await smokeSession(
    [deno, "run", "--quiet", ...RUN_PERMISSIONS, join(REPO_ROOT, "main.ts")],
    fromSourceRoot,
    verbs,
  );
  assertEquals(
    normalizedOutputs(viaBundle, fromBundleRoot),
    normalizedOutputs(viaSource, fromSourceRoot),
  );
  assertEquals(diffTrees(storeFiles(fromSourceRoot), storeFiles(fromBundleRoot)), null);

  const version = await runProcess(deno, ["run", "--quiet", "--no-config", bundle, "--version"]);
  assertEquals(version.code, 0, version.stderr);
  assertEquals(
    version.stdout,
    (await runProcess(deno, ["run", "--quiet", join(REPO_ROOT, "main.ts"), "--version"])).stdout,
  );
  await Deno.remove(away, { recursive: true });
  await Deno.remove(fromBundleRoot, { recursive: true });
  await Deno.remove(fromSourceRoot, { recursive: true });
});
