/**
 * A generated corpus of fake credentials of every kind the guard knows, built
 * at run time from pieces (so no real-looking secret sits in the repository),
 * and a deterministic generator of random characters.
 */

/** A seeded generator of characters from `alphabet` (xorshift, deterministic). */
export function randomChars(seed: number, alphabet: string, length: number): string {
  let x = seed * 2654435761 >>> 0 || 1;
  let out = "";
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out += alphabet[x % alphabet.length];
  }
  return out;
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URLSAFE = ALNUM + "_-";
const B64 = ALNUM + "+/";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** One fake credential: its kind, the secret the guard must report, and a sentence holding it. */
export type FakeCredential = { kind: string; secret: string; text: string };

function j(...parts: string[]): string {
  return parts.join("");
}

/** `count` fake credentials of each kind, each in a sentence an agent might write. */
export function fakeCredentials(count: number): FakeCredential[] {
  const out: FakeCredential[] = [];
  for (let i = 1; i <= count; i++) {
    const r = (alphabet: string, n: number, salt = 0) => randomChars(i * 97 + salt, alphabet, n);
    const add = (kind: string, secret: string, text: string) => out.push({ kind, secret, text });
    const pem = j("-----BEGIN ", ["RSA ", "EC ", "OPENSSH ", ""][i % 4], "PRIVATE", " KEY-----");
    const key = j(pem, " ", r(B64, 64, 1));
    add("private-key", key, `the deploy key is ${key}`);
    const akid = j("AK", "IA", r(UPPER, 16, 2));
    const awsSecret = j(r(B64, 38, 3), "a9");
    add("aws-access-key", awsSecret, `aws key ${akid} with secret ${awsSecret} for prod`);
    const google = j("AI", "za", r(URLSAFE, 35, 4));
    add("google-api-key", google, `maps key: ${google}`);
    const azure = j(r(B64, 86, 5), "==");
    add(
      "azure-connection-string",
      azure,
      j(
        "DefaultEndpointsProtocol=https;AccountName=acme;Account",
        "Key=",
        azure,
        ";EndpointSuffix=core.windows.net",
      ),
    );
    const gh = j(["ghp", "gho", "ghs", "ghu", "ghr"][i % 5], "_", r(ALNUM, 36, 6));
    add("github-token", gh, `use ${gh} to push`);
    const ghPat = j("github", "_pat_", r(ALNUM, 22, 7), "_", r(ALNUM, 59, 8));
    add("github-token", ghPat, `fine-grained token ${ghPat}`);
    const gl = j("gl", "pat-", r(URLSAFE, 20, 9));
    add("gitlab-token", gl, `gitlab ${gl}`);
    const npm = j("np", "m_", r(ALNUM, 36, 10));
    add("npm-token", npm, `//registry.npmjs.org/:_authToken=${npm}`);
    const pypi = j("py", "pi-AgE", "IcHlwaS5vcmc", r(URLSAFE, 60, 11));
    add("pypi-token", pypi, `twine password ${pypi}`);
    const slack = j(
      "xo",
      "xb-",
      r("0123456789", 12, 12),
      "-",
      r("0123456789", 13, 13),
      "-",
      r(ALNUM, 24, 14),
    );
    add("slack-token", slack, `slack bot ${slack}`);
    const stripe = j(["sk", "rk"][i % 2], "_", ["live", "test"][i % 2], "_", r(ALNUM, 24, 15));
    add("stripe-key", stripe, `stripe ${stripe}`);
    const openai = j("sk-", "proj-", r(URLSAFE, 48, 16));
    add("openai-key", openai, `OPENAI_API_KEY is ${openai}`);
    const openaiLegacy = j("sk-", r(ALNUM, 20, 17), "T3Blbk", "FJ", r(ALNUM, 20, 18));
    add("openai-key", openaiLegacy, `old key ${openaiLegacy}.`);
    const anthropic = j("sk-", "ant-", "api03-", r(URLSAFE, 93, 19), "AA");
    add("anthropic-key", anthropic, `claude key ${anthropic}`);
    const jwt = j(
      "ey",
      "J",
      r(URLSAFE, 30, 20),
      ".ey",
      "J",
      r(URLSAFE, 60, 21),
      ".",
      r(URLSAFE, 43, 22),
    );
    add("jwt", jwt, `bearer ${jwt}`);
    const pw = j(r(ALNUM, 14, 23), "7!");
    add("url-password", pw, `db at postgres://app:${pw}@db.internal:5432/main`);
    const generic = j(r(ALNUM, 20, 24), "9q");
    const names = ["password", "secret", "api_key", "token", "client_secret", "DB_PASSWORD"];
    const seps = ["=", ": ", " = ", ":", '="', " := "];
    add("generic-secret", generic, `${names[i % 6]}${seps[i % 6]}${generic}`);
  }
  return out;
}
