/**
 * Names of v1-v3 memory files in a project root that no current store
 * claims. Kept free of `node:` imports: the store opener checks it before
 * creating a store.
 */

/**
 * True for a root file name that holds older BIMRI memory beside (or instead
 * of) a current store: BIMRI.md in any case but the generated `bimri.md`, or
 * a rolling backup in any case.
 */
export function isUnclaimedLegacyRootName(name: string): boolean {
  const folded = name.toLowerCase();
  return (folded === "bimri.md" && name !== "bimri.md") || folded === "bimri-backup.md";
}
