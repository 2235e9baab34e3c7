/**
 * The files of `.bimri-share/` the secrets scan (doctor, `secrets redact`)
 * reads: anyone who can push writes there, so the scan reads only what a
 * pull could import (record files and key files of replica folders), by the
 * same names and caps, never through a link and never past the cap.
 */
import type { ShareFiles } from "../integrity/secrets_scan.ts";
import { KEY_FILE, RECORD_NAME, REPLICA_ID } from "./ids.ts";
import { RECORD_MAX_BYTES } from "./record.ts";
import { readFileNoFollow } from "./safe_read.ts";
import { KEY_MAX_BYTES } from "./sign.ts";

/** What scanStoreForSecrets may read under `.bimri-share/`. */
export const SHARE_SCANNED_FILES: ShareFiles = {
  isReplica: (name) => REPLICA_ID.test(name),
  cap: (name) =>
    RECORD_NAME.test(name) ? RECORD_MAX_BYTES : name === KEY_FILE ? KEY_MAX_BYTES : null,
  read: readFileNoFollow,
};
