/**
 * Finds credential-looking strings in text (pure, no I/O): private key
 * blocks, cloud provider keys, service tokens by their published prefixes and
 * lengths, JWTs, URLs with a password and high-entropy generic assignments.
 * bimri's own identifiers (SHA-256 digests, run/proposal/revision IDs, replica
 * IDs, base32), git SHAs and UUIDs are never reported.
 */
import { BimriError } from "../errors.ts";
import { sha256Hex } from "./text.ts";
import { mayHoldCredential, refuseHiddenCharacter } from "./unsafe_text.ts";

/** The kinds of credential the detector knows, each a rule the owner may switch off. */
export const CREDENTIAL_KINDS = [
  "private-key",
  "aws-access-key",
  "google-api-key",
  "azure-connection-string",
  "github-token",
  "gitlab-token",
  "npm-token",
  "pypi-token",
  "slack-token",
  "stripe-key",
  "openai-key",
  "anthropic-key",
  "jwt",
  "url-password",
  "generic-secret",
] as const;

/** One credential kind (a rule name). */
export type CredentialKind = typeof CREDENTIAL_KINDS[number];

/** A credential-looking string found in a text. */
export type CredentialFinding = {
  /** The rule that matched. */
  kind: CredentialKind;
  /** Offset of the secret in code points from the start of the text. */
  offset: number;
  /** The secret with all but its first and last four characters (at most) hidden. */
  masked: string;
  /** Lowercase hex SHA-256 of the exact secret string: what the owner allows or redacts. */
  fingerprint: string;
  /** Offset and length of the secret in UTF-16 units (for replacing it). */
  index: number;
  length: number;
};

/** What the owner has decided: exact strings allowed (by fingerprint) and rules switched off. */
export type SecretPolicy = {
  allowed: ReadonlySet<string>;
  disabled: ReadonlySet<string>;
  /** Fingerprints the owner redacted, with their kinds: masked wherever bimri prints them. */
  redacted?: ReadonlyMap<string, string>;
};

/** The default policy: every rule on, nothing allowed. */
export const DEFAULT_SECRET_POLICY: SecretPolicy = { allowed: new Set(), disabled: new Set() };

type Rule = {
  kind: CredentialKind;
  pattern: RegExp;
  /** Capture group holding the secret (0 = the whole match). */
  group: number;
  /** Further check of the secret and the text around it. */
  accept?: (secret: string, text: string, index: number) => boolean;
};

const B64 = "A-Za-z0-9+/";
const URLSAFE = "A-Za-z0-9_\\-";

// Rules are tried in order; a later rule's hit inside an earlier one's is dropped.
// Built on first use: a process whose text never passes the first pass of unsafe_text.ts (most
// journal lines) parses none of these patterns.
let rules: Rule[] | null = null;

function credentialRules(): Rule[] {
  return rules ??= [
    {
      kind: "private-key",
      // The block's body is bounded (an RSA key of 8192 bits is about 6,400 characters of PEM,
      // 6,600 escaped in JSON): an unbounded lazy body made every header without an END after
      // it read to the end of the text, quadratic on a line of headers (doctor reads files
      // anyone who can push wrote); bounded, such a line costs ~0.6 s a MiB.
      pattern:
        /-----BEGIN[ A-Z0-9]{0,30} PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,8192}?-----END[ A-Z0-9]{0,30} PRIVATE KEY(?: BLOCK)?-----|[\sA-Za-z0-9+/=:,-]*)/g,
      group: 0,
    },
    {
      kind: "anthropic-key",
      pattern: new RegExp(`\\bsk-ant-(?:api|admin|oat|sid)\\d{2}-[${URLSAFE}]{80,}`, "g"),
      group: 0,
    },
    {
      kind: "openai-key",
      pattern: new RegExp(
        `\\bsk-(?:(?:proj|svcacct|admin)-[${URLSAFE}]{40,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{48})(?![${URLSAFE}])`,
        "g",
      ),
      group: 0,
    },
    {
      kind: "github-token",
      pattern:
        /\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})(?![A-Za-z0-9_])/g,
      group: 0,
    },
    {
      kind: "gitlab-token",
      pattern:
        /\b(?:gl(?:pat|dt|rt|ptt|ft|oas|cbt|imt|agent|soat)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})/g,
      group: 0,
    },
    { kind: "npm-token", pattern: /\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g, group: 0 },
    { kind: "pypi-token", pattern: /\bpypi-AgE[A-Za-z0-9_-]{50,}/g, group: 0 },
    {
      kind: "slack-token",
      pattern:
        /\b(?:xox[abposre]-[0-9A-Za-z-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+|https:\/\/hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9/_-]{20,})/g,
      group: 0,
    },
    { kind: "stripe-key", pattern: /\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}/g, group: 0 },
    { kind: "google-api-key", pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g, group: 0 },
    {
      kind: "azure-connection-string",
      pattern: new RegExp(
        `\\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|AccessKey)=([${B64}=%]{20,})`,
        "g",
      ),
      group: 1,
    },
    {
      kind: "aws-access-key",
      // The secret access key (40 characters) near an access key ID.
      pattern: new RegExp(`(?<![${B64}])([${B64}]{40})(?![${B64}=])`, "g"),
      group: 1,
      accept: (secret, text, index) =>
        /[A-Z]/.test(secret) && /[a-z]/.test(secret) && /[0-9]/.test(secret) &&
        !/^[0-9a-f]+$/i.test(secret) &&
        /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b/.test(
          text.slice(Math.max(0, index - 200), index + 240),
        ),
    },
    {
      kind: "jwt",
      // Starts only where a run of token characters starts (`\b` also let every `-eyJ` inside a
      // run start, each reading to the run's end: quadratic on `eyJ-eyJ-...`, and doctor reads
      // files anyone who can push wrote). A token glued to a word by `-` is no longer found.
      pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
      group: 0,
    },
    {
      kind: "url-password",
      pattern: /\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}:\/\/[^\s/:@'"<>]{1,64}:([^\s/@'"<>]{3,128})@[\w.-]/g,
      group: 1,
      accept: (secret) => !isPlaceholder(secret),
    },
    {
      kind: "generic-secret",
      // Linear on any line (doctor scans files anyone who can push wrote): the name's words
      // before the keyword are not matched but asserted by one character (the keyword follows a
      // separator, i.e. a non-alphanumeric, or the start; the former `(?:[A-Za-z0-9]+[_.-])*`
      // read every `a_a_a_...` line to its end from each `_`, quadratic), and the words after it
      // are at most eight (unbounded, `token_token_...` read to the end from each keyword).
      pattern:
        /(?<![A-Za-z0-9])(?:password|passwd|passphrase|pwd|secret|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|token|credentials?|client[_-]?secret|private[_-]?key)(?:[_.-][A-Za-z0-9]+){0,8}["']?\s*(?::|=|:=|=>)\s*["']?([^\s"'`,;]{12,200})/gi,
      group: 1,
      accept: (secret) => looksRandom(secret),
    },
  ];
}

/** Placeholder passwords in examples: `${X}`, `<x>`, `***`, `xxx`, `password`. */
function isPlaceholder(secret: string): boolean {
  return /^(?:\$\{?[A-Za-z_][\w]*\}?|<[^>]*>|\*+|x+|\.+|%[\w()]+s?|\{\{?[^}]*\}?\}|password|pass|secret|changeme|example)$/i
    .test(secret);
}

/** Shannon entropy of `text` in bits per character. */
export function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  const n = text.length;
  for (const count of counts.values()) {
    const p = count / n;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** True when `value` is one of bimri's own identifiers, a digest, a git SHA or a UUID. */
export function isKnownIdentifier(value: string): boolean {
  return /^(?:sha256:)?[0-9a-f]{7,64}$/i.test(value) || // SHA-256, git SHA, revision IDs
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value) || // UUID
    /^[a-z2-7]+(?::[0-9]+)?$/.test(value) || // base32, replica and event IDs
    /^[A-Z2-7]+=*$/.test(value) || // upper base32
    /^(?:R[0-9]{6}(?:-[EQ][0-9]{3})?|C[0-9]{6}|P[0-9]+)$/.test(value); // run/entry/proposal/conflict/pattern
}

/**
 * True when a generic assignment's value looks like a random secret rather
 * than a word, a path, an identifier or an example: long enough, mixing
 * letters with digits or symbols, and of high entropy.
 */
function looksRandom(value: string): boolean {
  const secret = value.replace(/[.)\]}>]+$/, "");
  if (secret.length < 12) return false;
  if (isKnownIdentifier(secret) || isPlaceholder(secret)) return false;
  if (/^[a-z]+(?:[_.-][a-z]+)*$/i.test(secret)) return false; // words, snake_case names
  if (/^(?:https?:)?\/\/|^[.~]?\/|^[A-Za-z]:\\|\/[\w.-]+\//.test(secret)) return false; // paths, URLs
  if (/^[A-Z_][A-Z0-9_]*$/.test(secret)) return false; // an environment variable's name
  if (/^\$|^%|^\{|^<|^process\.|^env\.|^os\.|^Deno\./.test(secret)) return false; // references
  if (/[()[\]{}]/.test(secret)) return false; // code, not a value
  // Words and numbers joined by separators name something (a version, a
  // resource); a random secret mixes letters and digits inside one run.
  const parts = secret.split(/[-_.:@+]/).filter((part) => part !== "");
  if (parts.length > 1 && parts.every((part) => /^(?:[A-Za-z]+|[0-9]+)$/.test(part))) return false;
  const hasDigit = /[0-9]/.test(secret);
  const hasLetter = /[A-Za-z]/.test(secret);
  if (!hasLetter || !hasDigit) return false;
  return entropy(secret) >= 3.5;
}

/** The secret with at most its first and last four characters shown. */
export function maskSecret(secret: string): string {
  const chars = [...secret];
  const shown = Math.min(4, Math.floor(chars.length / 4));
  if (shown === 0) return "*".repeat(Math.min(chars.length, 8));
  return `${chars.slice(0, shown).join("")}...${chars.slice(-shown).join("")}`;
}

/** SHA-256 fingerprint of a secret string (64 lowercase hex characters). */
export function secretFingerprint(secret: string): string {
  return sha256Hex(secret);
}

/**
 * Every credential-looking string in `text`, in order of offset, skipping
 * strings the policy allows and rules it switches off.
 */
export function findCredentials(
  text: string,
  policy: SecretPolicy = DEFAULT_SECRET_POLICY,
): CredentialFinding[] {
  if (!mayHoldCredential(text)) return [];
  const found: CredentialFinding[] = [];
  // Disjoint spans sorted by start (so also by end), searched by bisection: a line of many
  // findings (anyone who can push can write one) costs no time quadratic in their number.
  const covered: Array<[number, number]> = [];
  for (const rule of credentialRules()) {
    if (policy.disabled.has(rule.kind)) continue;
    rule.pattern.lastIndex = 0;
    for (const match of text.matchAll(rule.pattern)) {
      const secret = match[rule.group];
      if (secret === undefined) continue;
      const index = match.index! + match[0].lastIndexOf(secret);
      const end = index + secret.length;
      const at = spansStartingBefore(covered, end);
      if (at > 0 && covered[at - 1][1] > index) continue;
      if (rule.accept && !rule.accept(secret, text, index)) continue;
      covered.splice(at, 0, [index, end]);
      const fingerprint = secretFingerprint(secret);
      if (policy.allowed.has(fingerprint)) continue;
      found.push({
        kind: rule.kind,
        offset: 0,
        masked: maskSecret(secret),
        fingerprint,
        index,
        length: secret.length,
      });
    }
  }
  found.sort((a, b) => a.index - b.index);
  // Code-point offsets counted once along the text, not from its start for each finding.
  let units = 0;
  let points = 0;
  for (const hit of found) {
    for (const _ of text.slice(units, hit.index)) points++;
    units = hit.index;
    hit.offset = points;
  }
  return found;
}

/** How many of the sorted, disjoint `spans` start before `end`. */
function spansStartingBefore(spans: ReadonlyArray<[number, number]>, end: number): number {
  let low = 0;
  let high = spans.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (spans[mid][0] < end) low = mid + 1;
    else high = mid;
  }
  return low;
}

const KIND_NAMES: Record<CredentialKind, string> = {
  "private-key": "a private key block",
  "aws-access-key": "an AWS secret access key",
  "google-api-key": "a Google API key",
  "azure-connection-string": "an Azure connection string key",
  "github-token": "a GitHub token",
  "gitlab-token": "a GitLab token",
  "npm-token": "an npm token",
  "pypi-token": "a PyPI token",
  "slack-token": "a Slack token",
  "stripe-key": "a Stripe secret key",
  "openai-key": "an OpenAI API key",
  "anthropic-key": "an Anthropic API key",
  "jwt": "a JSON Web Token",
  "url-password": "a password in a URL",
  "generic-secret": "a high-entropy secret assignment",
};

/** The kind as words ("a GitHub token"). */
export function credentialKindName(kind: CredentialKind): string {
  return KIND_NAMES[kind];
}

/** What to do instead of writing a secret into memory (the refusal's next step). */
export const SECRET_NEXT_STEP =
  "keep the secret where it lives and record its name or location instead, e.g. " +
  "'the deploy token is the CI secret DEPLOY_TOKEN'";

/**
 * The refusal message for credentials found in the text called `name`, or
 * null when there are none.
 */
export function credentialRefusal(
  name: string,
  findings: readonly CredentialFinding[],
): string | null {
  if (findings.length === 0) return null;
  const where = findings.map((f) =>
    `${credentialKindName(f.kind)} (${f.kind}) at character ${f.offset}: ${f.masked}, ` +
    `fingerprint ${f.fingerprint}`
  ).join("; ");
  return `${name} holds what looks like a credential, so nothing was written: ${where}. ` +
    `Memory is kept forever and shared: ${SECRET_NEXT_STEP}. If this exact string is not ` +
    `a secret (a test fixture's fake key), the owner can allow it with ` +
    `\`bimri secrets allow <fingerprint> --human-approved\`.`;
}

/**
 * Refuses memory text that holds a character memory text may never hold
 * (bidi controls, zero-width characters, C1 controls, DEL) or a credential
 * the policy does not allow; `name` says which text ("journal text").
 */
export function refuseUnsafeText(value: string, name: string, policy: SecretPolicy): void {
  refuseHiddenCharacter(value, name);
  refuseCredentials(value, name, policy);
}

/** Refuses `value` when it holds a credential the policy does not allow. */
export function refuseCredentials(value: string, name: string, policy: SecretPolicy): void {
  const refusal = credentialRefusal(name, findCredentials(value, policy));
  if (refusal !== null) throw new BimriError("refused", refusal);
}

/** The fixed marker that stands for a redacted secret. */
export function redactionMarker(kind: string, fingerprint: string): string {
  return `[REDACTED ${kind} sha256:${fingerprint}]`;
}

/**
 * `text` with every occurrence of a secret whose fingerprint is in
 * `redacted` replaced by its marker; `onlyLine` limits the replacement to
 * lines it accepts (other lines are kept byte for byte).
 */
export function redactText(
  text: string,
  redacted: ReadonlyMap<string, string>,
  onlyLine: (line: string) => boolean = () => true,
): string {
  if (redacted.size === 0 || !mayHoldCredential(text)) return text;
  return text.split("\n").map((line) => {
    if (!onlyLine(line)) return line;
    const hits = findCredentials(line).filter((hit) => redacted.has(hit.fingerprint));
    let out = line;
    for (const hit of hits.reverse()) {
      out = out.slice(0, hit.index) + redactionMarker(hit.kind, hit.fingerprint) +
        out.slice(hit.index + hit.length);
    }
    return out;
  }).join("\n");
}
