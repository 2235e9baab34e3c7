/** `propose`: stage one memory change for a run; prints the proposal ID. */
import { propose, validateProposeFlags } from "../engine/memory/propose.ts";
import { loadTextScreen } from "../engine/memory/run_input.ts";
import { withStore } from "../engine/store/store.ts";
import { boolFlag, choiceFlag, type Command, ok, requiredFlag, stringFlag } from "./command.ts";

const VERB = "propose";

/** The propose verb. */
export const proposeCommand: Command = {
  name: VERB,
  summary: "stage a set, touch or close of one memory key for the run; prints the proposal ID",
  help: `usage: bimri propose --run RUN --key KEY [--operation set|touch|close] [--new-subject]
                     [--tier 1|2|3] [--text TEXT] [--rationale TEXT] [flags...]

  --run RUN              the run handle from start
  --key KEY              stable key (lowercase dotted or hyphenated words, at most 80)
  --operation OP         set (default), touch (refresh a Tier 2 subject) or close (archive it)
  --new-subject          set a key that does not exist yet (otherwise an unknown key is held)
  --target ID            the entry ID the change is meant for (optional check)
  --tier N               1 core, 2 active context, 3 pattern (default: the current tier)
  --kind KIND            Tier 1: decision, fact, pref or rule
  --importance N         Tier 2: 1 through 5
  --status STATUS        Tier 2: active, watch or closed
  --trust TRUST          working (default) or confirmed (only with --source user)
  --source SOURCE        agent (default), user, external or legacy
  --tags A,B             comma-separated tags (at most 12)
  --text TEXT            the memory text (set), one line, at most 500 characters
  --rationale TEXT       why (logged as a journal entry; defaults to the text)
  --confidence C         Tier 3: emerging, developing or established
  --observations N       Tier 3: how many times it was observed
  --evidence IDS         Tier 3: comma-separated journal entry IDs
  --falsifier TEXT       Tier 3: what would disprove the pattern (required)
  --needs-human          refused: ask the owner in conversation instead
  --question TEXT        stored with the proposal

Omitted kind, importance, status, tags and pattern fields are inherited from the
key's current generation.`,
  flags: {
    run: { type: "string" },
    operation: { type: "string" },
    "new-subject": { type: "boolean" },
    tier: { type: "string", integer: true },
    key: { type: "string" },
    target: { type: "string" },
    kind: { type: "string" },
    importance: { type: "string", integer: true },
    status: { type: "string" },
    trust: { type: "string" },
    source: { type: "string" },
    tags: { type: "string" },
    text: { type: "string" },
    rationale: { type: "string" },
    "needs-human": { type: "boolean" },
    question: { type: "string" },
    confidence: { type: "string" },
    observations: { type: "string", integer: true },
    evidence: { type: "string" },
    falsifier: { type: "string" },
  },
  async run(ctx, flags) {
    const input = {
      run: requiredFlag(flags, VERB, "run"),
      key: requiredFlag(flags, VERB, "key"),
      operation: choiceFlag(flags, VERB, "operation", ["close", "set", "touch"]),
      newSubject: boolFlag(flags, "new-subject"),
      tier: choiceFlag(flags, VERB, "tier", ["1", "2", "3"]),
      target: stringFlag(flags, "target"),
      kind: choiceFlag(flags, VERB, "kind", ["decision", "fact", "pref", "rule"]),
      importance: choiceFlag(flags, VERB, "importance", ["1", "2", "3", "4", "5"]),
      status: choiceFlag(flags, VERB, "status", ["active", "closed", "watch"]),
      trust: choiceFlag(flags, VERB, "trust", ["confirmed", "working"]),
      source: choiceFlag(flags, VERB, "source", ["agent", "external", "legacy", "system", "user"]),
      tags: stringFlag(flags, "tags"),
      text: stringFlag(flags, "text"),
      rationale: stringFlag(flags, "rationale"),
      needsHuman: boolFlag(flags, "needs-human"),
      question: stringFlag(flags, "question"),
      confidence: choiceFlag(flags, VERB, "confidence", ["developing", "emerging", "established"]),
      observations: stringFlag(flags, "observations"),
      evidence: stringFlag(flags, "evidence"),
      falsifier: stringFlag(flags, "falsifier"),
    };
    // Flag-only checks refuse before the store is touched.
    validateProposeFlags(input);
    const screen = await loadTextScreen(ctx.root, [
      input.text,
      input.rationale,
      input.question,
      input.falsifier,
    ]);
    const result = withStore(ctx.root, (store) => propose(store, input, screen));
    // Said now rather than only at sync: this proposal will be held (issue 45).
    // decision_record.ts (the hold notices) loads only then.
    const held = result.created && result.hold_reason !== null
      ? [
        `BIMRI: ${result.proposal_id} [${input.key}] will be held at sync: ${
          (await import("../engine/memory/decision_record.ts")).heldNextStep(
            input.key,
            result.hold_reason,
          )
        }.`,
      ]
      : [];
    return ok(`${result.proposal_id}\n`, {
      proposal_id: result.proposal_id,
      created: result.created,
      hold_reason: result.hold_reason,
    }, [...result.notices, ...held]);
  },
};
