/**
 * The owner's credential policy file, `.bimri-secrets.json` at the project
 * root: fingerprints of exact strings allowed and rules switched off. It sits
 * beside `.bimri/` rather than in it so it is committed and reviewed like any
 * project file, and so the reference engine's audit of `.bimri/` never sees
 * an unknown file. It never holds a secret, only SHA-256 fingerprints.
 */
import { join } from "../store/os_path.ts";
import { BimriError } from "../errors.ts";
import {
  CREDENTIAL_KINDS,
  DEFAULT_SECRET_POLICY,
  refuseCredentials,
  refuseUnsafeText,
  type SecretPolicy,
} from "../model/credentials.ts";
import type { TextScreen } from "../model/unsafe_text.ts";
import { atomicReplace } from "../store/files.ts";

/** The policy file's name at the project root. */
export const POLICY_FILE = ".bimri-secrets.json";

/** One allowed string: its fingerprint and when it was allowed. */
export type AllowedSecret = { fingerprint: string; allowed_at: string };

/** One redaction: the receipt of `secrets redact`, kept with the policy. */
export type RedactionEntry = {
  fingerprint: string;
  kind: string;
  redacted_at: string;
  /** `started` until every rewrite is durable; a later `secrets redact` finishes it. */
  status: "started" | "done";
  /** The backup folder (outside memory) the owner is told to delete. */
  backup: string;
  /** Files rewritten without the secret. */
  rewritten: string[];
  /** Files that still hold it, masked in all output, with why they cannot be rewritten. */
  kept: string[];
};

/** The policy file's content. */
export type PolicyFile = {
  bimri_secrets: 1;
  allowed: AllowedSecret[];
  disabled_rules: string[];
  redacted?: RedactionEntry[];
};

const MAX_BYTES = 1 << 20;
const FINGERPRINT = /^[0-9a-f]{64}$/;

/** The path of the policy file of the project at `root`. */
export function policyPath(root: string): string {
  return join(root, POLICY_FILE);
}

function badFile(root: string, why: string): BimriError {
  return new BimriError(
    "store-unsafe",
    `${policyPath(root)} ${why}; the credential guard stays on until the owner fixes or ` +
      `removes that file (it holds only fingerprints: {"bimri_secrets": 1, "allowed": [], ` +
      `"disabled_rules": []}).`,
  );
}

/** Reads the policy file (an empty policy when there is none); refuses a malformed or linked one. */
export function readPolicyFile(root: string): PolicyFile {
  const path = policyPath(root);
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { bimri_secrets: 1, allowed: [], disabled_rules: [] };
    }
    throw error;
  }
  if (!info.isFile) throw badFile(root, "is not a regular file");
  if (info.size > MAX_BYTES) throw badFile(root, "is larger than 1 MiB");
  let data: unknown;
  try {
    data = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(Deno.readFileSync(path)));
  } catch {
    throw badFile(root, "is not valid UTF-8 JSON");
  }
  const file = data as Partial<PolicyFile> | null;
  if (
    typeof file !== "object" || file === null || file.bimri_secrets !== 1 ||
    !Array.isArray(file.allowed) || !Array.isArray(file.disabled_rules)
  ) {
    throw badFile(root, 'is not a bimri secrets policy ({"bimri_secrets": 1, ...})');
  }
  for (const item of file.allowed) {
    if (
      typeof item !== "object" || item === null || typeof item.fingerprint !== "string" ||
      !FINGERPRINT.test(item.fingerprint)
    ) {
      throw badFile(root, "has an allowed entry without a 64-hex fingerprint");
    }
  }
  for (const rule of file.disabled_rules) {
    if (!(CREDENTIAL_KINDS as readonly unknown[]).includes(rule)) {
      throw badFile(root, `switches off an unknown rule ${JSON.stringify(rule)}`);
    }
  }
  for (const item of file.redacted ?? []) {
    if (
      typeof item !== "object" || item === null || typeof item.fingerprint !== "string" ||
      !FINGERPRINT.test(item.fingerprint) || typeof item.kind !== "string"
    ) {
      throw badFile(root, "has a redacted entry without a 64-hex fingerprint and a kind");
    }
  }
  return file as PolicyFile;
}

/** Writes the policy file atomically, sorted so reviews show only real changes. */
export function writePolicyFile(root: string, file: PolicyFile): void {
  const sorted: PolicyFile = {
    bimri_secrets: 1,
    allowed: [...file.allowed].sort((a, b) => a.fingerprint.localeCompare(b.fingerprint)),
    disabled_rules: [...new Set(file.disabled_rules)].sort(),
  };
  if (file.redacted && file.redacted.length > 0) sorted.redacted = file.redacted;
  atomicReplace(policyPath(root), JSON.stringify(sorted, null, 2) + "\n");
  cache.delete(root);
}

const cache = new Map<string, SecretPolicy>();

/** The policy of the project at `root` (read once per process). */
export function secretPolicy(root: string): SecretPolicy {
  const known = cache.get(root);
  if (known !== undefined) return known;
  const file = readPolicyFile(root);
  const redacted = file.redacted ?? [];
  const policy: SecretPolicy =
    file.allowed.length === 0 && file.disabled_rules.length === 0 && redacted.length === 0
      ? DEFAULT_SECRET_POLICY
      : {
        allowed: new Set(file.allowed.map((item) => item.fingerprint)),
        disabled: new Set(file.disabled_rules),
        redacted: new Map(redacted.map((item) => [item.fingerprint, item.kind])),
      };
  cache.set(root, policy);
  return policy;
}

/**
 * The full memory-text screen under the policy of the project at `root`.
 * The policy file is read at the first refusal check (as the writers always
 * read it), or at once with `readNow` (journal refuses a malformed policy
 * before it checks its text).
 */
export function textScreenOf(root: string, readNow = false): TextScreen {
  let policy = readNow ? secretPolicy(root) : null;
  const current = () => policy ??= secretPolicy(root);
  return {
    refuseUnsafe: (value, name) => refuseUnsafeText(value, name, current()),
    refuseCredentials: (value, name) => refuseCredentials(value, name, current()),
  };
}

/** Adds `fingerprint` to the allowed strings; returns false when it was already there. */
export function allowFingerprint(root: string, fingerprint: string, at: string): boolean {
  requireFingerprint(fingerprint);
  const file = readPolicyFile(root);
  if (file.allowed.some((item) => item.fingerprint === fingerprint)) return false;
  file.allowed.push({ fingerprint, allowed_at: at });
  writePolicyFile(root, file);
  return true;
}

/** Refuses anything but a 64-hex fingerprint (a secret given by mistake is never echoed). */
export function requireFingerprint(fingerprint: string): string {
  if (!FINGERPRINT.test(fingerprint)) {
    throw new BimriError(
      "invalid-input",
      `that is not a fingerprint: give the 64 lowercase hex ` +
        "characters the refusal or `bimri doctor` printed (never the secret itself).",
    );
  }
  return fingerprint;
}

/** Switches the rule `kind` off (`on` false) or back on; returns false when nothing changed. */
export function setRule(root: string, kind: string, on: boolean): boolean {
  if (!(CREDENTIAL_KINDS as readonly string[]).includes(kind)) {
    throw new BimriError(
      "invalid-input",
      `unknown credential rule ${JSON.stringify(kind)}; the rules are ${
        CREDENTIAL_KINDS.join(", ")
      }.`,
    );
  }
  const file = readPolicyFile(root);
  const off = file.disabled_rules.includes(kind);
  if (off === !on) return false;
  file.disabled_rules = on
    ? file.disabled_rules.filter((rule) => rule !== kind)
    : [...file.disabled_rules, kind];
  writePolicyFile(root, file);
  return true;
}
