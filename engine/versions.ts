/** Version numbers bimri writes and reports. */

/** bimri's own release number. */
export const BIMRI_RELEASE = "0.1.0";
/** The reference engine release bimri is compatible with (stamped in preflight receipts). */
export const ENGINE_COMPAT_RELEASE = "5.1.2";
/** Authority (state and record) format version. */
export const AUTHORITY_FORMAT = "5.1.0";
/** Hot-memory grammar version written in the generated view header. */
export const HOT_GRAMMAR = "5.0.2";
/** Receipt releases the reference accepts on 5.1.0 proposals. */
export const ACCEPTED_RECEIPT_RELEASES: readonly string[] = ["5.1.0", "5.1.1", "5.1.2"];
