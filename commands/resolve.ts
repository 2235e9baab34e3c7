/** `resolve C###### --choose <proposal-id|current|dismiss> --human-approved`: record the owner's answer. */
import { requireHealthyAuthority } from "../engine/integrity/authority.ts";
import { requireConflictId } from "../engine/model/ids.ts";
import { resolveConflict } from "../engine/memory/resolve.ts";
import { commitProposalEffect } from "../engine/memory/commit.ts";
import { requireProposal } from "../engine/records/proposal.ts";
import { syncView } from "../engine/memory/view_sync.ts";
import { withStore } from "../engine/store/store.ts";
import { exportResolution, finishPendingExports } from "../engine/share/export.ts";
import { faultPoint } from "../engine/store/fault.ts";
import { saveShare } from "../engine/share/state.ts";
import { readConflict, readResolution } from "../engine/records/conflict.ts";
import { closeAnsweredHere } from "../engine/share/answered_here.ts";
import { boolFlag, type Command, ok, requiredFlag } from "./command.ts";
import { BimriError } from "../engine/errors.ts";

/** The resolve verb. */
export const resolveCommand: Command = {
  name: "resolve",
  summary: "record the owner's answer to a conflict (needs --human-approved)",
  help: `usage: bimri resolve C000001 --choose <proposal-id|current|dismiss> --human-approved

Run \`bimri review\` first and let the owner choose.
  --choose R000003-Q001   commit that candidate (Tier 1/2 trust becomes confirmed; source stays)
  --choose current        keep the live value; every candidate is closed as no-op
  --choose dismiss        close the question without changing memory
  --human-approved        attests that the owner explicitly chose this option
                          (an attestation, not authentication)

Repeating a finished resolution prints its recorded answer and changes nothing.`,
  flags: {
    choose: { type: "string" },
    "human-approved": { type: "boolean" },
  },
  positionals: 1,
  run(ctx, flags, positionals) {
    if (positionals[0] === undefined) {
      throw new BimriError(
        "usage",
        "resolve: name the conflict, e.g. `bimri resolve C000001 --choose current --human-approved`.",
      );
    }
    const conflictId = requireConflictId(positionals[0]);
    const choice = requiredFlag(flags, "resolve", "choose");
    const approved = boolFlag(flags, "human-approved");
    return withStore(ctx.root, (store) => {
      const view = syncView(store);
      const share = finishPendingExports(store);
      requireHealthyAuthority(store, { retryConflict: conflictId });
      // Marked only for a conflict that exists: an unknown one is refused next.
      const shareAnswer = share !== null && readConflict(store, conflictId) !== null &&
        readResolution(store, conflictId)?.status !== "resolved";
      if (shareAnswer) {
        share.state.pendingResolution = conflictId;
        saveShare(share);
      }
      const warnings: string[] = [];
      const result = resolveConflict(store, conflictId, choice, approved, (s, proposalId) => {
        const proposal = requireProposal(s.paths, proposalId).proposal;
        const committed = commitProposalEffect(s, proposal, { humanConfirmed: true });
        if (committed.warning) warnings.push(committed.warning);
        return committed.revision;
      });
      if (shareAnswer) {
        faultPoint("share-before-export");
        exportResolution(store, share, conflictId);
        const key = readConflict(store, conflictId)?.key;
        if (key) closeAnsweredHere(store, share, key);
      }
      const text = result.already_resolved
        ? `BIMRI: ${result.conflict_id} already resolved as ${result.choice}.\n`
        : `BIMRI: ${result.conflict_id} resolved with ${result.choice}.\n`;
      return ok(text, { ...result }, [
        ...view.notices,
        ...view.warnings,
        ...warnings,
      ]);
    });
  },
};
