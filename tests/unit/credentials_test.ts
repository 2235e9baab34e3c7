/**
 * The credential detector: every fake credential of a generated corpus is
 * found with its kind, offset, mask and fingerprint; a false-positive corpus
 * (this repository's sources and docs, the seed text, git SHAs, UUIDs,
 * bimri's own IDs and records, base64 of ordinary text, prose) raises nothing.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  credentialRefusal,
  DEFAULT_SECRET_POLICY,
  findCredentials,
  maskSecret,
  refuseUnsafeText,
  secretFingerprint,
} from "../../engine/model/credentials.ts";
import { sha256Hex } from "../../engine/model/text.ts";
import { fakeCredentials, randomChars } from "../helpers/fake_credentials.ts";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

Deno.test("every fake credential of every kind is found, masked and fingerprinted", () => {
  const corpus = fakeCredentials(25);
  const kinds = new Set(corpus.map((c) => c.kind));
  strictEqual(kinds.size, 15);
  const missed: string[] = [];
  for (const fake of corpus) {
    const found = findCredentials(fake.text);
    const hit = found.length === 1 ? found[0] : null;
    if (
      hit === null || hit.kind !== fake.kind ||
      fake.text.slice(hit.index, hit.index + hit.length) !== fake.secret ||
      hit.fingerprint !== sha256Hex(fake.secret) || hit.masked !== maskSecret(fake.secret) ||
      hit.offset !== [...fake.text.slice(0, hit.index)].length
    ) missed.push(`${fake.kind}: ${JSON.stringify(found.map((f) => f.kind))}`);
    ok(!hit || hit.masked.replace("...", "").length <= 8, "at most four characters each side");
  }
  deepStrictEqual(missed, []);
  console.log(`fake corpus: ${corpus.length} credentials of ${kinds.size} kinds, all found`);
});

Deno.test("the mask shows at most the first and last four characters", () => {
  strictEqual(maskSecret("abcdefghijklmnop"), "abcd...mnop");
  strictEqual(maskSecret("abcdefgh"), "ab...gh");
  strictEqual(maskSecret("abc"), "***");
});

function repoFiles(folder: string, out: string[]): string[] {
  for (const entry of Deno.readDirSync(folder)) {
    if (entry.name === ".git" || entry.name === "node_modules" || entry.name === "dist") continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory) repoFiles(path, out);
    else if (entry.isFile) out.push(path);
  }
  return out;
}

Deno.test("the false-positive corpus raises nothing", () => {
  const texts: Array<[string, string]> = [];
  for (const path of repoFiles(REPO, [])) {
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(Deno.readFileSync(path));
    } catch {
      continue; // binary
    }
    for (const [n, line] of text.split("\n").entries()) texts.push([`${path}:${n + 1}`, line]);
  }
  const files = new Set(texts.map(([where]) => where.replace(/:\d+$/, ""))).size;
  const generated: string[] = [];
  for (let i = 1; i <= 400; i++) {
    const hex = randomChars(i, "0123456789abcdef", 64);
    generated.push(
      hex, // SHA-256 / revision hash
      `sha256:${hex}`,
      `commit ${hex.slice(0, 40)} (git SHA), short ${hex.slice(0, 7)}`,
      `token: ${hex.slice(0, 40)}`, // a git SHA even after a token label
      `secret=${hex}`,
      [8, 4, 4, 4, 12].map((n, k) => randomChars(i + k, "0123456789abcdef", n)).join("-"),
      `session_id: ${
        [8, 4, 4, 4, 12].map((n, k) => randomChars(i * 3 + k, "0123456789abcdef", n)).join("-")
      }`,
      `replica ${randomChars(i, "abcdefghijklmnopqrstuvwxyz234567", 26)}:${i}`,
      `token=${randomChars(i, "abcdefghijklmnopqrstuvwxyz234567", 26)}`,
      `R${String(i).padStart(6, "0")}-Q${String(i % 999).padStart(3, "0")} P${i} C000${i}`,
      btoa(`ordinary text number ${i}, about the build and the deploy script`),
      `the api key lives in the CI secret DEPLOY_TOKEN_${i} and password rotation is monthly`,
      `password: \${DB_PASSWORD_${i}}`,
      `api_key = os.environ["API_KEY"]`,
      `postgres://user:password@localhost:5432/db${i}`,
      `token: ${["the_session_token", "refresh-token-name", "abc"][i % 3]}`,
    );
  }
  // Assignments that name a secret, a setting or a reference rather than hold one.
  generated.push(
    "password_min_length: 12",
    "token_ttl=3600s",
    "secret_ref: projects/acme/secrets/db-pass/versions/3",
    "auth_token_env=DEPLOY_TOKEN_V2",
    "secret: v1.2.3-beta4",
    "password=${{ secrets.DB_PASSWORD }}",
    "api_key: process.env.OPENAI_API_KEY",
    "token_count: 128000tokens",
    "pwd: /home/user/project2024/src",
    "token_url=https://auth.example.com/oauth2/token",
    "apiKeyId: 550e8400-e29b-41d4-a716-446655440000",
    "client_secret: client-secret-from-vault",
    "private_key: ~/.ssh/id_ed25519",
    "secret_version=projects-123456789-secrets",
    "credentials: user@example.com",
    "Tokenizer v2: tokens=4096, model=gpt-4o-2024-08-06",
    "password: correct-horse-battery-staple",
  );
  const prose =
    "Keep the secret where it lives and record its name or location instead. The team rotates " +
    "every token each quarter; passwords are stored in the vault, never in the repository. ";
  generated.push(prose.repeat(200));
  for (const text of generated) texts.push(["generated", text]);
  const flagged = texts.filter(([, text]) => findCredentials(text).length > 0)
    .map(([where, text]) => `${where}: ${findCredentials(text)[0].kind} ${text.slice(0, 80)}`);
  console.log(
    `false-positive corpus: ${files} files and ${generated.length} generated texts ` +
      `(${texts.length} lines), ${flagged.length} flagged`,
  );
  deepStrictEqual(flagged, []);
});

Deno.test("the policy allows an exact string and switches a rule off", () => {
  const [fake] = fakeCredentials(1).filter((c) => c.kind === "github-token");
  strictEqual(findCredentials(fake.text).length, 1);
  const fp = secretFingerprint(fake.secret);
  deepStrictEqual(findCredentials(fake.text, { allowed: new Set([fp]), disabled: new Set() }), []);
  deepStrictEqual(
    findCredentials(fake.text, { allowed: new Set(), disabled: new Set(["github-token"]) }),
    [],
  );
});

Deno.test("refuseUnsafeText names the credential masked, the hidden character as \\uXXXX", () => {
  const [fake] = fakeCredentials(1).filter((c) => c.kind === "npm-token");
  const message = credentialRefusal("journal text", findCredentials(fake.text))!;
  ok(!message.includes(fake.secret), "the secret is never repeated");
  match(message, /an npm token \(npm-token\) at character \d+: npm_\.\.\./);
  match(message, /record its name or location instead/);
  let caught: unknown;
  try {
    refuseUnsafeText("a\u202eb", "journal text", DEFAULT_SECRET_POLICY);
  } catch (error) {
    caught = error;
  }
  match(String(caught), /\\u202e at character 1/);
  refuseUnsafeText("plain text about a token rotation", "journal text", DEFAULT_SECRET_POLICY);
});

Deno.test("the cheap first pass lets through every text the former trigger expression matched", async () => {
  // unsafe_text.ts finds the trigger's words in the lowercased text instead of
  // compiling one case-insensitive expression: it may let more text through, never less.
  const { mayHoldCredential } = await import("../../engine/model/unsafe_text.ts");
  const FORMER =
    /PRIVATE KEY|sk-|gh[pousr]_|github_pat_|gl[a-z]{1,5}-|GR1348941|npm_|pypi-|xox|xapp-|hooks\.slack|_live_|_test_|AIza|Key=|Signature=|AKIA|ASIA|ABIA|ACCA|A3T|eyJ|:\/\/[^\s]*@|pass|pwd|secret|key|token|credential/i;
  const texts = fakeCredentials(25).map((c) => c.text);
  const alphabet = "aAbBcCdDeEgGhHiIjJkKlLnNoOpPrRsStTuUwWxXyYzZ019_-=:/@. \u017f\u212a\u0130";
  for (let seed = 1; seed <= 20000; seed++) texts.push(randomChars(seed, alphabet, 3 + seed % 14));
  for (const word of FORMER.source.split("|")) texts.push(word.replace(/\\/g, ""));
  const missed = texts.filter((text) => FORMER.test(text) && !mayHoldCredential(text));
  deepStrictEqual(missed, []);
  const caught = texts.filter((text) => FORMER.test(text)).length;
  ok(caught > 300, `the corpus exercises the trigger (${caught} hits)`);
  strictEqual(mayHoldCredential("the nightly backup ran at 02:00"), false);
});

Deno.test("a 1 MiB adversarial line is scanned in well under a second by every rule", () => {
  // Doctor scans files anyone who can push wrote: no line may cost time quadratic in its
  // length. Each shape made a rule (or the first pass) read to the end from every position.
  const MiB = 1 << 20;
  const line = (unit: string, head = "") =>
    head + unit.repeat(Math.ceil(MiB / unit.length)).slice(0, MiB);
  const lines: Array<[string, string]> = [
    ["generic-secret prefix", line("a_", "token ")],
    ["generic-secret suffix", line("token_", "x ")],
    ["generic-secret suffix (dots)", line("token.", "x ")],
    ["jwt", line("eyJ-")],
    ["url-password first pass", line("a://")],
    ["many findings", line(`ghp_${"a1".repeat(18)} `)],
  ];
  for (const [name, text] of lines) {
    const started = performance.now();
    findCredentials(text);
    const ms = performance.now() - started;
    ok(ms < 500, `${name}: ${Math.round(ms)} ms for 1 MiB`);
  }
  // The quadratic shape of the report still finds a real assignment after it.
  const [fake] = fakeCredentials(1).filter((c) => c.kind === "generic-secret");
  const hits = findCredentials(`${line("a_", "token ")} ${fake.text}`);
  deepStrictEqual(hits.map((hit) => hit.fingerprint), [sha256Hex(fake.secret)]);
});
