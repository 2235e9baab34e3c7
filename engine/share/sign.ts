/**
 * Record signatures: each replica holds an Ed25519 key pair, the private key
 * only in `.bimri/share-key.local.json` (mode 0600, never exported) and the
 * public key published once as `.bimri-share/<replica>/key.json`. Every
 * record from the key's `from_seq` on carries `signature`, an Ed25519
 * signature of `bimri-share/1 record <sha256>` (the record's own hash of its
 * canonical body, so the body and hash rules are unchanged). Records below
 * `from_seq` were written by an earlier bimri before the replica had a key.
 *
 * Signing is synchronous and pure (engine/model/ed25519.ts): it runs inside
 * the commit under the engine lock, where Deno's WebCrypto (async) cannot,
 * and node:crypto would cost every exporting command ~16 ms of start-up.
 * Checking other replicas' signatures uses node:crypto, loaded only by the
 * verbs that read their records (loadSignatureChecks).
 */
import { join } from "../store/os_path.ts";
import type { KeyObject } from "node:crypto";
import { ed25519PublicKey, ed25519Sign } from "../model/ed25519.ts";
import { BimriError } from "../errors.ts";
import { visible } from "../model/visible.ts";
import { isJsonObject, type JsonValue } from "../model/json.ts";
import { decodeUtf8Strict, sha256Hex } from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { atomicReplace, createExclusive, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { gitOperationInProgress } from "../store/git_tree.ts";
import { KEY_FILE, MAX_SEQ, REPLICA_ID } from "./ids.ts";

export { KEY_FILE } from "./ids.ts";
import { readFileNoFollow, requireRealFolder } from "./safe_read.ts";
import type { ShareContext } from "./context.ts";

/** The format tag of a public key file. */
export const KEY_FORMAT = "bimri-share-key/1";
/** The largest key file bimri reads (a real one is about 300 bytes). */
export const KEY_MAX_BYTES = 4096;
const B64URL_KEY = /^[A-Za-z0-9_-]{43}$/;
const B64URL_SIG = /^[A-Za-z0-9_-]{86}$/;
const LABEL = /^[A-Za-z0-9._-]{1,64}$/;

/** A replica's published public key. */
export type PublishedKey = {
  replica: string;
  /** The raw Ed25519 public key, base64url (43 characters). */
  publicKey: string;
  /** Records from this seq on are signed; those below came from an earlier bimri. */
  fromSeq: number;
  /** Who the replica says it is (unverified claims, shown to the owner). */
  actor: string;
  host: string;
  createdAt: string;
};

/** The exact bytes a record signature covers. */
function signedMessage(sha256: string): Uint8Array {
  return new TextEncoder().encode(`bimri-share/1 record ${sha256}`);
}

/** A short fingerprint of a public key: SHA-256 of the raw key, first 16 bytes in hex pairs. */
export function fingerprint(publicKey: string): string {
  return (sha256Hex(publicKey).slice(0, 32).match(/../g) ?? []).join(":");
}

/** `.bimri/share-key.local.json`. */
export function privateKeyFile(ctx: ShareContext): string {
  return join(ctx.paths.dir, "share-key.local.json");
}

function label(value: string | undefined, fallback: string): string {
  const v = (value ?? "").replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 64);
  return LABEL.test(v) ? v : fallback;
}

/** The machine's name as the environment or /etc/hostname tell it (no extra permission). */
function hostName(): string | undefined {
  const env = Deno.env.get("HOSTNAME") ?? Deno.env.get("COMPUTERNAME");
  if (env) return env;
  const bytes = readBytesOrNull("/etc/hostname");
  return bytes === null ? undefined : (decodeUtf8Strict(bytes) ?? "").trim();
}

type OwnKey = {
  replica: string;
  /** The 32-byte Ed25519 seed (the JWK `d`). */
  seed: Uint8Array;
  /** The raw public key, base64url (the JWK `x`). */
  publicKey: string;
};

function base64url(bytes: Uint8Array): string {
  return bytes.toBase64({ alphabet: "base64url", omitPadding: true });
}

/** The bytes of base64url `text`, or null when it is not exactly `length` bytes of base64url. */
function fromBase64url(text: string, length: number): Uint8Array | null {
  try {
    const bytes = Uint8Array.fromBase64(text, { alphabet: "base64url" });
    // Only the canonical spelling (no padding, no stray bits) is the key.
    return bytes.length === length && base64url(bytes) === text ? bytes : null;
  } catch {
    return null;
  }
}
const ownKeys = new Map<string, OwnKey>();

function readOwnKey(ctx: ShareContext): OwnKey | null {
  const cached = ownKeys.get(ctx.paths.dir);
  if (cached && cached.replica === ctx.state.replica) return cached;
  const bytes = readBytesOrNull(privateKeyFile(ctx));
  if (bytes === null) return null;
  let raw: JsonValue = null;
  try {
    raw = JSON.parse(decodeUtf8Strict(bytes) ?? "") as JsonValue;
  } catch { /* reported below */ }
  const seed = isJsonObject(raw) && typeof raw.d === "string" ? fromBase64url(raw.d, 32) : null;
  if (
    !isJsonObject(raw) || seed === null || typeof raw.x !== "string" ||
    typeof raw.replica !== "string"
  ) {
    throw new BimriError(
      "store-corrupt",
      ".bimri/share-key.local.json is unreadable; restore it from a backup, or remove it and run `bimri share init` (every clone must then trust this replica's new key).",
    );
  }
  if (raw.replica !== ctx.state.replica) return null; // a retired replica's key
  const own = { replica: raw.replica, seed, publicKey: raw.x };
  ownKeys.set(ctx.paths.dir, own);
  return own;
}

/**
 * Why this clone's published key file is not the one it published (a pusher
 * replaced or edited it: other clones would take its records as another
 * key's, or take unsigned records as its), or null when it is, or when there
 * is no key or key file to compare. Reads only.
 */
export function ownKeyProblem(ctx: ShareContext): string | null {
  const existing = readOwnKey(ctx);
  if (existing === null || !lstatOrNull(join(ctx.shareDir, ctx.state.replica, KEY_FILE))) {
    return null;
  }
  return publishedKeyProblem(ctx, existing);
}

function publishedKeyProblem(ctx: ShareContext, existing: OwnKey): string | null {
  const there = publishedKey(ctx, ctx.state.replica);
  if (
    typeof there === "object" && there !== null && there.publicKey === existing.publicKey &&
    matchesKeptKey(ctx, there)
  ) return null;
  const file = `.bimri-share/${ctx.state.replica}/${KEY_FILE}`;
  return `${file} is not the key this clone published (it ${
    typeof there === "string"
      ? visible(there)
      : there?.publicKey !== existing.publicKey
      ? "names another public key"
      : "differs from the key file this clone published"
  }): someone replaced it, and this clone does not sign or export under it; nothing was exported. Restore this clone's key (the bytes it published are kept in .bimri/share-sent/${ctx.state.replica}/${KEY_FILE}, and are in git history): \`cp .bimri/share-sent/${ctx.state.replica}/${KEY_FILE} ${file}\`, then commit it with git.`;
}

/**
 * `share status` (so the pre-commit hook) and `share pull`: writes this
 * clone's published key file back from the bytes it kept when a pusher
 * altered it, and says so; or says what is wrong when it cannot.
 */
export function repairOwnKey(ctx: ShareContext): string | null {
  const problem = ownKeyProblem(ctx);
  if (problem === null || gitOperationInProgress(ctx.paths.root)) return null;
  const own = readOwnKey(ctx)!;
  const kept = readBytesOrNull(keptKeyFile(ctx));
  const file = `.bimri-share/${ctx.state.replica}/${KEY_FILE}`;
  if (kept === null || !keptKeyMatches(kept, own.replica, own.publicKey)) {
    return `BIMRI ERROR: ${problem}`;
  }
  const folder = join(ctx.shareDir, ctx.state.replica);
  try {
    // Never through a link: the share folder and this replica's folder must be
    // real folders (a pushed link there would make the write land elsewhere).
    requireRealFolder(ctx.shareDir, ".bimri-share");
    requireRealFolder(folder, `.bimri-share/${ctx.state.replica}`);
    if (lstatOrNull(join(folder, KEY_FILE))?.isDirectory) {
      return `BIMRI ERROR: ${file} is a folder, not this clone's key file; remove it (git rm -r) and run \`bimri share status\` to write the key back.`;
    }
    // A rename over the path: a link or a swapped file there is replaced, never followed.
    atomicReplace(join(folder, KEY_FILE), kept);
  } catch (error) {
    // Said, not thrown: status and pull go on (the export refuses until it is fixed).
    return `BIMRI ERROR: ${problem} (it could not be written back: ${
      visible(error instanceof Error ? error.message : String(error))
    })`;
  }
  forgetPublishedKeys();
  return `BIMRI ERROR: ${file} was altered after this clone published it (other clones would refuse its records or take unsigned ones as its); it was written back from .bimri/share-sent/${ctx.state.replica}/${KEY_FILE}. Commit it (git add .bimri-share && git commit).`;
}

/**
 * This replica's key pair, made and published on first use (a replica of an
 * earlier bimri gets its key here: records from `nextSeq` on are signed).
 */
export function ensureOwnKey(ctx: ShareContext): OwnKey {
  const existing = readOwnKey(ctx);
  if (existing !== null && lstatOrNull(join(ctx.shareDir, ctx.state.replica, KEY_FILE))) {
    const problem = publishedKeyProblem(ctx, existing);
    if (problem !== null) throw new BimriError("refused", problem);
    keepPublishedKey(ctx, existing.publicKey);
    return existing;
  }
  let own = existing;
  if (own === null) {
    const seed = crypto.getRandomValues(new Uint8Array(32));
    const publicKey = base64url(ed25519PublicKey(seed));
    // The private key first (mode 0600 by the atomic helper), then the public
    // one; stored as the JWK fields of an OKP Ed25519 key, as before.
    atomicReplace(
      privateKeyFile(ctx),
      canonicalJson({ d: base64url(seed), replica: ctx.state.replica, x: publicKey }),
    );
    own = { replica: ctx.state.replica, seed, publicKey };
    ownKeys.set(ctx.paths.dir, own);
  }
  // Mid-rebase (or merge, cherry-pick) the published key may be one git is
  // about to bring back: it is written after (restoreOwnKey), never now.
  if (existing !== null && gitOperationInProgress(ctx.paths.root)) return own;
  const folder = join(ctx.shareDir, ctx.state.replica);
  requireRealFolder(ctx.shareDir, ".bimri-share");
  requireRealFolder(folder, `.bimri-share/${ctx.state.replica}`);
  Deno.mkdirSync(folder, { recursive: true });
  // Published again byte for byte when git removed it (keptKeyFile), so a
  // merge that brings the first one back adds nothing.
  const kept = readBytesOrNull(keptKeyFile(ctx));
  if (kept !== null && keptKeyMatches(kept, ctx.state.replica, own.publicKey)) {
    if (createExclusive(join(folder, KEY_FILE), kept)) return own;
  }
  const published = canonicalJson({
    actor: label(Deno.env.get("USER") ?? Deno.env.get("USERNAME"), "unknown"),
    created_at: utcTimestamp(),
    format: KEY_FORMAT,
    from_seq: ctx.state.nextSeq,
    host: label(hostName(), "unknown"),
    public_key: own.publicKey,
    replica: ctx.state.replica,
  });
  if (createExclusive(join(folder, KEY_FILE), published + "\n")) {
    Deno.mkdirSync(join(ctx.paths.dir, "share-sent", ctx.state.replica), { recursive: true });
    atomicReplace(keptKeyFile(ctx), published + "\n");
  } else {
    const there = publishedKey(ctx, ctx.state.replica);
    if (typeof there !== "object" || there?.publicKey !== own.publicKey) {
      throw new BimriError(
        "store-corrupt",
        `.bimri-share/${ctx.state.replica}/${KEY_FILE} holds another key than this clone's private key (.bimri/share-key.local.json); this clone cannot sign as that replica. Remove .bimri/replica.local.json and run \`bimri share init\` to take a new replica ID.`,
      );
    }
  }
  return own;
}

/**
 * `.bimri/share-sent/<replica>/key.json`: the exact bytes of this replica's
 * published key, kept out of git (as keep.ts keeps its records) so the file
 * is written again identically when git removes it.
 */
export function keptKeyFile(ctx: ShareContext): string {
  return join(ctx.paths.dir, "share-sent", ctx.state.replica, KEY_FILE);
}

/**
 * False when this clone kept the bytes it published and the published file
 * now says anything else: a pusher who kept the public key but raised
 * `from_seq` would make other clones take unsigned records as this replica's.
 */
function matchesKeptKey(ctx: ShareContext, there: PublishedKey): boolean {
  const kept = readBytesOrNull(keptKeyFile(ctx));
  if (kept === null) return true;
  const parsed = parseKeyBytes(kept, ctx.state.replica);
  if (typeof parsed !== "object") return true; // a damaged kept copy is rewritten from the file
  return parsed.publicKey === there.publicKey && parsed.fromSeq === there.fromSeq &&
    parsed.actor === there.actor && parsed.host === there.host &&
    parsed.createdAt === there.createdAt;
}

/** True when kept key bytes publish `publicKey` for `replica`. */
function keptKeyMatches(bytes: Uint8Array, replica: string, publicKey: string): boolean {
  const parsed = parseKeyBytes(bytes, replica);
  return typeof parsed === "object" && parsed.publicKey === publicKey;
}

/** Keeps the published key file's bytes once (read bounded, without following links). */
function keepPublishedKey(ctx: ShareContext, publicKey: string): void {
  const kept = keptKeyFile(ctx);
  if (lstatOrNull(kept) !== null) return;
  const read = readFileNoFollow(join(ctx.shareDir, ctx.state.replica), KEY_FILE, KEY_MAX_BYTES);
  if (read === null || "problem" in read) return;
  if (!keptKeyMatches(read.bytes, ctx.state.replica, publicKey)) return;
  const folder = join(ctx.paths.dir, "share-sent", ctx.state.replica);
  if (lstatOrNull(folder) === null) Deno.mkdirSync(folder, { recursive: true });
  atomicReplace(kept, read.bytes);
}

/**
 * Writes this replica's published key again from its kept bytes when git
 * removed it from the working tree (true: written).
 */
export function restoreOwnKey(ctx: ShareContext): boolean {
  const folder = join(ctx.shareDir, ctx.state.replica);
  if (lstatOrNull(join(folder, KEY_FILE)) !== null) return false;
  const own = readOwnKey(ctx);
  const kept = readBytesOrNull(keptKeyFile(ctx));
  if (own === null || kept === null || !keptKeyMatches(kept, own.replica, own.publicKey)) {
    return false;
  }
  if (lstatOrNull(folder) === null) Deno.mkdirSync(folder, { recursive: true });
  return createExclusive(join(folder, KEY_FILE), kept);
}

/** The signature of a record whose hash is `sha256`, by this replica's key. */
export function signRecordHash(ctx: ShareContext, sha256: string): string {
  const own = ensureOwnKey(ctx);
  // The key file keeps the public half beside the seed (checked against the
  // published key above): given, it spares deriving it for each process.
  const publicKey = fromBase64url(own.publicKey, 32) ?? undefined;
  return base64url(ed25519Sign(own.seed, signedMessage(sha256), publicKey));
}

/**
 * True when `signature` is this clone's own signature of a record hashed
 * `sha256`: Ed25519 signing is deterministic, so signing again must give the
 * same bytes (no other key, and no other signature of this key, matches).
 */
export function signedByThisClone(ctx: ShareContext, sha256: string, signature: string): boolean {
  const own = readOwnKey(ctx);
  if (own === null || !B64URL_SIG.test(signature)) return false;
  return base64url(ed25519Sign(own.seed, signedMessage(sha256))) === signature;
}

/** This replica's own public key (null: none yet). */
export function ownPublicKey(ctx: ShareContext): string | null {
  return readOwnKey(ctx)?.publicKey ?? null;
}

/** Parses a published key file, or a problem. */
export function parseKeyBytes(bytes: Uint8Array, replica: string): PublishedKey | string {
  const text = decodeUtf8Strict(bytes);
  let raw: JsonValue = null;
  try {
    raw = JSON.parse(text ?? "") as JsonValue;
  } catch {
    return "is not valid JSON";
  }
  if (!isJsonObject(raw) || raw.format !== KEY_FORMAT) return `is not a ${KEY_FORMAT} key file`;
  const fields = Object.keys(raw).sort().join(",");
  if (fields !== "actor,created_at,format,from_seq,host,public_key,replica") {
    return "must have exactly the fields actor, created_at, format, from_seq, host, public_key, replica";
  }
  if (raw.replica !== replica) {
    return `names replica ${visible(String(raw.replica))}, not its folder`;
  }
  if (typeof raw.public_key !== "string" || !B64URL_KEY.test(raw.public_key)) {
    return "holds no valid Ed25519 public key";
  }
  const fromSeq = raw.from_seq;
  if (
    typeof fromSeq !== "number" || !Number.isInteger(fromSeq) || fromSeq < 1 || fromSeq > MAX_SEQ
  ) {
    return "holds no valid from_seq";
  }
  if (
    typeof raw.actor !== "string" || !LABEL.test(raw.actor) || typeof raw.host !== "string" ||
    !LABEL.test(raw.host) || typeof raw.created_at !== "string"
  ) {
    return "holds an invalid actor, host or created_at";
  }
  return {
    replica,
    publicKey: raw.public_key,
    fromSeq,
    actor: raw.actor,
    host: raw.host,
    createdAt: raw.created_at,
  };
}

const published = new Map<string, PublishedKey | string | null>();

/** Forgets the keys read so far (each scan reads them afresh: a long-running server sees new ones). */
export function forgetPublishedKeys(): void {
  published.clear();
}

/**
 * The key `replica` publishes in its folder (null: none, an earlier bimri's
 * replica), or a problem string; read once per process, never through a link.
 */
export function publishedKey(ctx: ShareContext, replica: string): PublishedKey | string | null {
  if (!REPLICA_ID.test(replica)) return null;
  const id = `${ctx.shareDir}\0${replica}`;
  if (published.has(id)) return published.get(id)!;
  const read = readFileNoFollow(join(ctx.shareDir, replica), KEY_FILE, KEY_MAX_BYTES);
  const value = read === null
    ? null
    : "problem" in read
    ? read.problem
    : parseKeyBytes(read.bytes, replica);
  published.set(id, value);
  return value;
}

type NodeCrypto = typeof import("node:crypto");

/** node:crypto once loadSignatureChecks ran (null: this command checks no other replica's record). */
let nodeCrypto: NodeCrypto | null = null;

/**
 * Loads the check of other replicas' signatures (node:crypto, ~16 ms of a
 * short command's start-up): run by the verbs that read their records before
 * they start (commands/share_wiring.ts).
 */
export async function loadSignatureChecks(): Promise<void> {
  nodeCrypto ??= await import("node:crypto");
}

/** True once loadSignatureChecks ran. */
export function signatureChecksLoaded(): boolean {
  return nodeCrypto !== null;
}

const verifiers = new Map<string, KeyObject>();

/** True when `signature` is `publicKey`'s signature of a record hashed `sha256`. */
export function verifyRecordHash(publicKey: string, sha256: string, signature: string): boolean {
  if (!B64URL_SIG.test(signature)) return false;
  if (nodeCrypto === null) {
    throw new BimriError(
      "busy",
      "another clone's record must have its signature checked, which this command did not expect when it started (a share pull left unfinished, or records arrived meanwhile); nothing of it was imported. Run the command again.",
    );
  }
  let key = verifiers.get(publicKey);
  if (!key) {
    key = nodeCrypto.createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: publicKey },
      format: "jwk",
    });
    verifiers.set(publicKey, key);
  }
  const bytes = Uint8Array.fromBase64(signature, { alphabet: "base64url" });
  return nodeCrypto.verify(null, signedMessage(sha256), key, bytes);
}

/**
 * Why record `seq` of `replica` (hash `sha256`, `signature` or none) is not
 * signed as its folder's key requires, or null when it is. A folder without
 * a key (a replica of an earlier bimri) is judged by trust, not here.
 */
export function signatureProblem(
  ctx: ShareContext,
  replica: string,
  seq: number,
  sha256: string,
  signature: string | undefined,
): string | null {
  const key = publishedKey(ctx, replica);
  if (typeof key === "string") return `belongs to a replica whose ${KEY_FILE} ${key}`;
  if (key === null) {
    return signature === undefined ? null : `is signed but its replica publishes no ${KEY_FILE}`;
  }
  if (seq < key.fromSeq && signature === undefined) return null;
  if (signature === undefined) return "is not signed (its replica signs every record)";
  if (!verifyRecordHash(key.publicKey, sha256, signature)) {
    return "has a signature that does not verify against its replica's key (forged or altered)";
  }
  return null;
}
