/**
 * Identifiers of team sharing: replica IDs (128 random bits, lowercase
 * base32), shared event IDs (`<replica>:<seq>`) and record file names.
 */
import { BimriError } from "../errors.ts";

/** A replica ID: 26 lowercase base32 characters (128 bits). */
export const REPLICA_ID = /^[a-z2-7]{26}$/;
/** A record file name: the sequence number, eight digits, `.json`. */
export const RECORD_NAME = /^[0-9]{8}\.json$/;
/** A shared event ID: `<replica>:<seq>`. */
export const EVENT_ID = /^[a-z2-7]{26}:[1-9][0-9]{0,7}$/;
/** The highest sequence number a record name can carry. */
export const MAX_SEQ = 99_999_999;

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/** A fresh random replica ID. */
export function mintReplicaId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** The file name of record `seq`. */
export function recordName(seq: number): string {
  if (!Number.isInteger(seq) || seq < 1 || seq > MAX_SEQ) {
    throw new BimriError("refused", `share sequence number out of range: ${seq}`);
  }
  return `${String(seq).padStart(8, "0")}.json`;
}

/** The event ID of record `seq` of `replica`. */
export function eventId(replica: string, seq: number): string {
  return `${replica}:${seq}`;
}

/** Splits an event ID into replica and seq. */
export function parseEventId(id: string): { replica: string; seq: number } {
  const at = id.indexOf(":");
  return { replica: id.slice(0, at), seq: Number(id.slice(at + 1)) };
}

/** The import actor for records of `replica` (the actor grammar allows no colon). */
export function importActor(replica: string): string {
  return `share-${replica}`;
}

/** True when `actor` names an import run. */
export function isImportActor(actor: string): boolean {
  return /^share-[a-z2-7]{26}$/.test(actor);
}

/** The public key file in every signing replica's folder. */
export const KEY_FILE = "key.json";
