/**
 * The V8 flags every way bimri runs with: the compile tasks bake them into the
 * binary, the installer records them in a `deno run` binding (so hooks, agents
 * and `bimri mcp` all get them), and the tests and the bench run the CLI with
 * them. One list, because V8 refuses a code cache written under other flags:
 * alternating flag sets would recompile bimri's modules on every switch.
 */

/**
 * Caps each of V8's young-generation semi-spaces at 8 MB. Left to itself V8
 * grows them to 16 MB or more, and a resident `bimri mcp` server answering
 * back-to-back sessions on a 10,000-run store then holds 220-260 MB where its
 * live heap is under 20 MB; with the cap it peaks near 180-190 MB. A short CLI
 * command never grows the young generation that far, so it is unaffected.
 */
export const RUN_V8_FLAGS: readonly string[] = ["--v8-flags=--max-semi-space-size=8"];
