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

/** One line that says what the three version numbers bimri prints mean (--version, install). */
export const VERSIONS_EXPLAINED =
  `Versions: ${BIMRI_RELEASE} is bimri's own release; ${ENGINE_COMPAT_RELEASE} is the Python reference engine (EvolutionUnleashed/bimri) whose commands and store bimri matches; ${AUTHORITY_FORMAT} is the memory format under .bimri/, and ${HOT_GRAMMAR} the line grammar of bimri.md (its header says BIMRI v${HOT_GRAMMAR}).`;
