/** `restore-authority --kind K --id ID --from FILE --human-approved`: replace a stub with a validated record. */
import { restoreAuthority } from "../engine/integrity/quarantine.ts";
import { issueLine } from "../engine/integrity/authority.ts";
import { withStore } from "../engine/store/store.ts";
import { prepareAudit } from "../engine/integrity/doctor.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { boolFlag, type Command, ok, requiredFlag } from "./command.ts";

/** The restore-authority verb. */
export const restoreCommand: Command = {
  name: "restore-authority",
  summary: "replace a quarantine stub with a validated, owner-reviewed record",
  help: `usage: bimri restore-authority --kind KIND --id ID --from FILE --human-approved

Validates FILE as the record's replacement (schema, revision bounds and its
place in the authority graph) before anything is written, records a
human-asserted receipt at .bimri/recovery/authority-restore-<kind>-<id>-
<original sha256>-<replacement sha256>.json, then writes the canonical JSON of
FILE over the stub. The quarantine evidence stays. While other linked records
are still quarantined the restore is staged and writes stay paused; while any
other record is damaged but not quarantined the restore is refused. FILE must
be a regular file, not a symbolic link.

  --kind KIND       proposal, decision, conflict or resolution
  --id ID           the record ID
  --from FILE       the reviewed replacement (JSON, a regular file)
  --human-approved  attests that the owner explicitly approved this repair`,
  flags: {
    kind: { type: "string" },
    id: { type: "string" },
    from: { type: "string" },
    "human-approved": { type: "boolean" },
  },
  async run(ctx, flags) {
    const kind = requiredFlag(flags, "restore-authority", "kind");
    const id = requiredFlag(flags, "restore-authority", "id");
    const from = requiredFlag(flags, "restore-authority", "from");
    const approved = boolFlag(flags, "human-approved");
    // Validating a replacement takes a full audit with it in place.
    await prepareAudit(new StorePaths(ctx.root));
    return withStore(ctx.root, (store) => {
      const r = restoreAuthority(store, kind, id, from, approved);
      const lines = [
        r.alreadyRestored
          ? `BIMRI: ${r.kind} ${r.id} is already restored; receipt ${r.receipt}.`
          : `BIMRI: restored ${
            r.staged ? "staged" : "validated"
          } ${r.kind} ${r.id}; receipt ${r.receipt}.`,
      ];
      if (r.staged) {
        lines.push(
          "Staged: shared-memory writes stay paused until every remaining record is repaired:",
          ...r.remainingIssues.map((i) => `  - ${issueLine(i)}`),
        );
      } else {
        lines.push("Authority validates again; shared-memory writes may continue.");
      }
      return ok(lines.join("\n") + "\n", {
        kind: r.kind,
        id: r.id,
        receipt: r.receipt,
        replacement_sha256: r.replacementSha256,
        already_restored: r.alreadyRestored,
        staged: r.staged,
        remaining_issues: r.remainingIssues,
      });
    });
  },
};
