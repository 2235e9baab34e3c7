/**
 * Which replicas this clone's owner trusts: kept only in this clone, in
 * `.bimri/share-trust.local.json` (never in the shared folder), as the public
 * key the owner approved for each replica. A replica's records apply only
 * while the key its folder publishes is the one the owner trusted; a replica
 * that is new, re-keyed, distrusted or unsigned waits as one owner question.
 */
import { join } from "../store/os_path.ts";
import { BimriError } from "../errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../model/json.ts";
import { decodeUtf8Strict } from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import { visible } from "../model/visible.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { atomicReplace, readBytesOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { REPLICA_ID } from "./ids.ts";
import { fingerprint, KEY_FILE, type PublishedKey, publishedKey } from "./sign.ts";
import { loadShare } from "./state.ts";
import type { ShareContext } from "./context.ts";
import { scanShare } from "./scan.ts";

/**
 * One owner decision about a replica: the key the owner decided on, and the
 * first seq that key signs (`fromSeq`; records before it were written
 * unsigned by an earlier bimri). Both bind the decision: a pusher who kept
 * the public key but raised `from_seq` could otherwise pass unsigned records
 * off as that replica's (editedFromSeq refuses that). Null for a decision an
 * earlier bimri recorded without it, which the owner is asked again.
 */
export type TrustEntry = {
  status: "trusted" | "distrusted";
  publicKey: string;
  fromSeq: number | null;
  at: string;
};

/** Where a replica stands with this clone's owner. */
export type TrustStanding =
  | { kind: "trusted"; key: PublishedKey }
  | { kind: "new"; key: PublishedKey }
  | { kind: "rekeyed"; key: PublishedKey; trusted: string }
  | { kind: "distrusted"; key: PublishedKey }
  | { kind: "unsigned" }
  | { kind: "bad-key"; problem: string };

/** An owner question about a replica whose records wait. */
export type TrustQuestion = {
  replica: string;
  standing: TrustStanding["kind"];
  actor: string | null;
  host: string | null;
  fingerprint: string | null;
  /** The first record the key signs (those before came from an earlier bimri, unsigned). */
  fromSeq: number | null;
  waiting: number;
  /** The question's text (untrusted claims made visible). */
  text: string;
};

/** `.bimri/share-trust.local.json`. */
export function trustFile(paths: StorePaths): string {
  return join(paths.dir, "share-trust.local.json");
}

/** The owner's decisions recorded in this clone. */
export function readTrust(paths: StorePaths): Record<string, TrustEntry> {
  const bytes = readBytesOrNull(trustFile(paths));
  const out: Record<string, TrustEntry> = {};
  if (bytes === null) return out;
  let raw: JsonValue = null;
  try {
    raw = JSON.parse(decodeUtf8Strict(bytes) ?? "") as JsonValue;
  } catch { /* reported below */ }
  if (!isJsonObject(raw) || !isJsonObject(raw.replicas)) {
    throw new BimriError(
      "store-corrupt",
      ".bimri/share-trust.local.json is unreadable; remove it and trust each replica again with `bimri share trust <replica> --human-approved`.",
    );
  }
  for (const [replica, v] of Object.entries(raw.replicas)) {
    if (!REPLICA_ID.test(replica) || !isJsonObject(v)) continue;
    if (
      (v.status === "trusted" || v.status === "distrusted") &&
      typeof v.public_key === "string" && typeof v.at === "string"
    ) {
      const fromSeq = typeof v.from_seq === "number" && Number.isInteger(v.from_seq) &&
          v.from_seq >= 1
        ? v.from_seq
        : null;
      out[replica] = { status: v.status, publicKey: v.public_key, fromSeq, at: v.at };
    }
  }
  return out;
}

function writeTrust(paths: StorePaths, entries: Record<string, TrustEntry>): void {
  const replicas: JsonObject = {};
  for (const replica of Object.keys(entries).sort()) {
    const e = entries[replica];
    replicas[replica] = e.fromSeq === null
      ? { at: e.at, public_key: e.publicKey, status: e.status }
      : { at: e.at, from_seq: e.fromSeq, public_key: e.publicKey, status: e.status };
  }
  atomicReplace(trustFile(paths), canonicalJson({ replicas }));
}

/** Where `replica` stands, given the owner's decisions `entries`. */
export function standingOf(
  ctx: ShareContext,
  replica: string,
  entries: Record<string, TrustEntry>,
): TrustStanding {
  const key = publishedKey(ctx, replica);
  if (typeof key === "string") return { kind: "bad-key", problem: key };
  if (key === null) return { kind: "unsigned" };
  const entry = entries[replica];
  if (entry === undefined) return { kind: "new", key };
  const edited = editedFromSeq(entry, key);
  if (edited !== null) return { kind: "bad-key", problem: edited };
  if (entry.publicKey !== key.publicKey || entry.fromSeq !== key.fromSeq) {
    return { kind: "rekeyed", key, trusted: entry.publicKey };
  }
  return entry.status === "trusted" ? { kind: "trusted", key } : { kind: "distrusted", key };
}

/**
 * Why `key` is an edit of the key the owner decided on (same public key,
 * another `from_seq`), or null. A key's `from_seq` is fixed when the key is
 * made, so only a pusher changes it: records below it would need no
 * signature. It is refused, never put to the owner as a new key.
 */
function editedFromSeq(entry: TrustEntry, key: PublishedKey): string | null {
  if (entry.publicKey !== key.publicKey || entry.fromSeq === null) return null;
  if (entry.fromSeq === key.fromSeq) return null;
  return `keeps the public key the owner decided on but says its first signed record is ${key.fromSeq}, not ${entry.fromSeq}; a key's from_seq never changes (records before it need no signature), so someone edited it`;
}

function questionText(replica: string, s: TrustStanding, waiting: number): string {
  const r = visible(replica);
  // The key the owner is shown is the one decided on: a key that changes
  // between the question and the answer (a git pull) is refused, not trusted.
  const shown = "key" in s ? ` --fingerprint ${fingerprint(s.key.publicKey)}` : "";
  const next =
    `answer with \`bimri share trust ${r}${shown} --human-approved\` or \`bimri share distrust ${r}${shown} --human-approved\``;
  const claims = (k: PublishedKey) =>
    `which says it is ${visible(k.actor)} on ${visible(k.host)}? fingerprint ${
      fingerprint(k.publicKey)
    }${k.fromSeq > 1 ? ` (it signs records from ${k.fromSeq} on; those before are unsigned)` : ""}`;
  switch (s.kind) {
    case "new":
      return `BIMRI OWNER QUESTION: trust replica ${r}, ${
        claims(s.key)
      }; ${waiting} records wait until the owner decides; ${next}.`;
    case "rekeyed":
      return `BIMRI OWNER QUESTION: replica ${r} now publishes ${
        s.trusted !== s.key.publicKey
          ? `another key (trusted: ${fingerprint(s.trusted)})`
          : `a key whose first signed record (from_seq ${s.key.fromSeq}) the owner's earlier decision did not record`
      }; trust the new key, ${
        claims(s.key)
      }; ${waiting} records are refused until the owner decides; ${next}.`;
    case "distrusted":
      return `BIMRI: replica ${r} is distrusted by the owner; its ${waiting} records are not imported (\`bimri share trust ${r} --human-approved\` to trust it).`;
    case "unsigned":
      return `BIMRI: replica ${r} publishes no signing key (it runs an earlier bimri); its ${waiting} records wait until that clone upgrades bimri and runs \`bimri share pull\`, which publishes its key.`;
    case "bad-key":
      return `BIMRI ERROR: share key .bimri-share/${r}/${KEY_FILE} ${
        visible(s.problem)
      }; none of its ${waiting} records are imported. Restore it from git history.`;
    case "trusted":
      return "";
  }
}

/**
 * Takes out of `pending` (replica -> waiting records) every replica the
 * owner does not trust with its current key, and returns one question each,
 * also for replicas only `waiting` counts (a count-only scan), whose counts
 * the questions then state (the same as share status).
 */
export function holdUntrusted<T>(
  ctx: ShareContext,
  pending: Map<string, T[]>,
  waiting?: ReadonlyMap<string, number>,
): TrustQuestion[] {
  const replicas = new Set([...pending.keys(), ...waiting?.keys() ?? []]);
  if (replicas.size === 0) return [];
  const entries = readTrust(ctx.paths);
  const questions: TrustQuestion[] = [];
  for (const replica of [...replicas].sort()) {
    const standing = standingOf(ctx, replica, entries);
    if (standing.kind === "trusted") continue;
    // Counted as share status counts them (every record file past the cursor).
    const count = waiting?.get(replica) ?? pending.get(replica)?.length ?? 0;
    pending.delete(replica);
    const key = "key" in standing ? standing.key : null;
    questions.push({
      replica,
      standing: standing.kind,
      actor: key?.actor ?? null,
      host: key?.host ?? null,
      fingerprint: key ? fingerprint(key.publicKey) : null,
      fromSeq: key?.fromSeq ?? null,
      waiting: count,
      text: questionText(replica, standing, count),
    });
  }
  return questions;
}

/**
 * Records the owner's decision to trust (or distrust) `replica` with the key
 * its folder publishes now (`shown`: the fingerprint the owner was shown,
 * which that key must have). Returns the key decided on.
 */
export function decideTrust(
  ctx: ShareContext,
  replica: string,
  status: TrustEntry["status"],
  shown?: string,
): PublishedKey {
  if (!REPLICA_ID.test(replica)) {
    throw new BimriError(
      "usage",
      `${
        visible(replica)
      } is not a replica ID (26 lowercase base32 characters); see \`bimri share status\`.`,
    );
  }
  if (replica === ctx.state.replica || ctx.state.retired.includes(replica)) {
    throw new BimriError(
      "refused",
      `replica ${replica} is this clone's own; there is nothing to decide.`,
    );
  }
  const key = publishedKey(ctx, replica);
  if (key === null) {
    throw new BimriError(
      "refused",
      `replica ${replica} publishes no signing key in .bimri-share/${replica}/${KEY_FILE} (it is absent, or the replica runs an earlier bimri); once that clone runs this bimri and its key arrives through git, decide again.`,
    );
  }
  if (typeof key === "string") {
    throw new BimriError(
      "refused",
      `.bimri-share/${replica}/${KEY_FILE} ${
        visible(key)
      }; restore it from git history, then decide again.`,
    );
  }
  if (shown !== undefined && shown !== fingerprint(key.publicKey)) {
    throw new BimriError(
      "refused",
      `replica ${replica} now publishes the key with fingerprint ${
        fingerprint(key.publicKey)
      }, not ${
        visible(shown)
      } as given: its key changed since the question was asked; nothing was decided. Run \`bimri share status\` and answer the question it asks now.`,
    );
  }
  const entries = readTrust(ctx.paths);
  const edited = entries[replica] ? editedFromSeq(entries[replica], key) : null;
  if (edited !== null) {
    throw new BimriError(
      "refused",
      `.bimri-share/${replica}/${KEY_FILE} ${edited}; nothing was decided. Restore it from git history (\`git log -p -- .bimri-share/${replica}/${KEY_FILE}\`).`,
    );
  }
  entries[replica] = {
    status,
    publicKey: key.publicKey,
    fromSeq: key.fromSeq,
    at: utcTimestamp(),
  };
  writeTrust(ctx.paths, entries);
  return key;
}

/**
 * The trust questions waiting in the store at `paths` (none when it is not
 * shared), for `review`: file names are counted, records are not read.
 */
export function pendingTrustQuestions(paths: StorePaths): TrustQuestion[] {
  const ctx = loadShare(paths, false);
  if (ctx === null) return [];
  const scan = scanShare(ctx, { countOnly: true });
  return holdUntrusted(ctx, scan.pending, scan.waiting);
}

/**
 * One line per replica the owner distrusts in this clone (for doctor), other
 * than those in `asked` (already named by a trust question with the records
 * they hold), with when the owner decided and how to undo it.
 */
export function distrustedLines(paths: StorePaths, asked: ReadonlySet<string>): string[] {
  const lines: string[] = [];
  for (const [replica, entry] of Object.entries(readTrust(paths)).sort()) {
    if (entry.status !== "distrusted" || asked.has(replica)) continue;
    lines.push(
      `BIMRI: replica ${replica} is distrusted by the owner (since ${
        visible(entry.at)
      }, key fingerprint ${
        fingerprint(entry.publicKey)
      }); none of its records are imported (\`bimri share trust ${replica} --human-approved\` to trust it).`,
    );
  }
  return lines;
}
