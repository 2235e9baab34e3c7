/**
 * Benchmark: what the credential and hidden-character guard adds to `journal`
 * and `propose` for a 500-character text (p50/p95 over many calls, in
 * process), for ordinary text, text that trips the cheap first pass (it
 * names tokens and keys), and the policy file's first read.
 *
 *   deno run --allow-read --allow-write bench/guard_check.ts [--samples 2000]
 */
import { parseArgs } from "node:util";
import { DEFAULT_SECRET_POLICY, refuseUnsafeText } from "../engine/model/credentials.ts";
import { secretPolicy } from "../engine/guard/policy.ts";

const { values } = parseArgs({ options: { samples: { type: "string", default: "2000" } } });
const samples = Number(values.samples);

function figures(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return `p50 ${(at(0.5) * 1000).toFixed(1)} µs, p95 ${(at(0.95) * 1000).toFixed(1)} µs`;
}

function measure(text: string): string {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t = performance.now();
    refuseUnsafeText(text, "journal text", DEFAULT_SECRET_POLICY);
    times.push(performance.now() - t);
  }
  return figures(times);
}

const ordinary = ("Checkout retries are idempotent; the nightly backup was verified and the " +
  "incident owner recorded. ").repeat(8).slice(0, 500);
const tripping = ("The deploy token is the CI secret DEPLOY_TOKEN; api_key = os.environ[KEY]; " +
  "password rotation is monthly. ").repeat(6).slice(0, 500);
console.log(`ordinary 500-char text: ${measure(ordinary)}`);
console.log(`500-char text naming tokens and keys (full rule pass): ${measure(tripping)}`);

const root = Deno.makeTempDirSync({ prefix: "bimri-guard-bench-" });
try {
  let t = performance.now();
  secretPolicy(root);
  console.log(`policy first read, no file: ${((performance.now() - t) * 1000).toFixed(1)} µs`);
  const other = Deno.makeTempDirSync({ dir: root });
  Deno.writeTextFileSync(
    `${other}/.bimri-secrets.json`,
    JSON.stringify({ bimri_secrets: 1, allowed: [], disabled_rules: ["jwt"] }),
  );
  t = performance.now();
  secretPolicy(other);
  console.log(`policy first read, with a file: ${((performance.now() - t) * 1000).toFixed(1)} µs`);
} finally {
  Deno.removeSync(root, { recursive: true });
}
