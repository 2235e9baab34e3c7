/** `quarantine-authority --kind K --id ID --human-approved`: preserve a damaged record behind a blocking stub. */
import { quarantineAuthority } from "../engine/integrity/quarantine.ts";
import { withStore } from "../engine/store/store.ts";
import { prepareAudit } from "../engine/integrity/doctor.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { boolFlag, type Command, ok, requiredFlag } from "./command.ts";

/** What the evidence keeps, per original type (the reference's words). */
const PRESERVED: Record<string, string> = {
  file: "bytes",
  "symbolic-link": "link metadata",
  missing: "absence evidence",
};

/** The quarantine-authority verb. */
export const quarantineCommand: Command = {
  name: "quarantine-authority",
  summary: "preserve a damaged authority record's evidence behind a blocking stub (owner-approved)",
  help: `usage: bimri quarantine-authority --kind KIND --id ID --human-approved

Preserves the exact bytes of a damaged proposal, decision, conflict or
resolution (or canonical evidence of a symbolic link or of an anchored
missing record) at .bimri/recovery/authority-<kind>-<id>-<sha256>.json and
replaces the record with a quarantine stub. The stub keeps shared-memory
writes paused until restore-authority puts a validated replacement back.
A valid record and an ID nothing refers to are refused.

  --kind KIND       proposal, decision, conflict or resolution
  --id ID           the record ID (R000001-Q001 or C000001)
  --human-approved  attests that the owner explicitly approved this repair`,
  flags: {
    kind: { type: "string" },
    id: { type: "string" },
    "human-approved": { type: "boolean" },
  },
  async run(ctx, flags) {
    const kind = requiredFlag(flags, "quarantine-authority", "kind");
    const id = requiredFlag(flags, "quarantine-authority", "id");
    const approved = boolFlag(flags, "human-approved");
    // Deciding what is damaged takes a full audit.
    await prepareAudit(new StorePaths(ctx.root));
    return withStore(ctx.root, (store) => {
      const r = quarantineAuthority(store, kind, id, approved);
      const text = r.alreadyQuarantined
        ? `BIMRI: ${r.kind} ${r.id} is already quarantined; evidence at ${r.evidence}.\n`
        : `BIMRI: quarantined ${r.kind} ${r.id} (${r.originalType}); exact ${
          PRESERVED[r.originalType]
        } preserved at ${r.evidence}. Shared-memory writes stay paused until restore-authority --kind ${r.kind} --id ${r.id} --from FILE --human-approved restores a validated replacement.\n`;
      return ok(text, {
        kind: r.kind,
        id: r.id,
        original_type: r.originalType,
        evidence: r.evidence,
        stub: r.stub,
        already_quarantined: r.alreadyQuarantined,
      });
    });
  },
};
