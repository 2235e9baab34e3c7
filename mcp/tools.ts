/**
 * The MCP tools: each one is a CLI verb seen through JSON. A tool's arguments
 * are the verb's flags in snake_case, turned back into the exact argv the CLI
 * would parse, so a tool call and a shell call take the same path through
 * command -> engine -> store and refuse bad input with the same messages.
 */
import { BimriError } from "../engine/errors.ts";

/** The JSON Schema subset the tools use (what clients receive in tools/list). */
export type JsonSchema = {
  type?: "object" | "string" | "integer" | "number" | "boolean" | "array" | "null";
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  items?: JsonSchema;
  enum?: (string | number)[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
  anyOf?: JsonSchema[];
  const?: boolean | string | number;
};

/** How one tool argument reaches the CLI verb. */
export type ArgSpec = {
  /** The verb's flag name (kebab-case), or null for the verb's positional argument. */
  flag: string | null;
  /** JSON type accepted. A `list` is an array of strings passed comma-joined. */
  kind: "string" | "integer" | "number" | "boolean" | "list";
  /** Shown to the client. */
  description: string;
  /** Advertised allowed values (the engine still checks and words the refusal). */
  enum?: string[];
  /** Advertised bounds for integers. */
  minimum?: number;
  maximum?: number;
  /** A boolean that is on unless given false, whenever this other argument is given. */
  onWith?: string;
};

/** How a tool relates to the MCP session's own run. */
export type SessionRole =
  | "none"
  | "start" // opens (or resumes) the session's run
  | "uses-run" // `run` defaults to the session's run
  | "close"; // closes the session's run by default

/** One MCP tool over one CLI verb. */
export type ToolSpec = {
  /** Tool name (memory_*). */
  name: string;
  /** The CLI verb it runs. */
  command: string;
  /** Human-readable title. */
  title: string;
  /** What the tool does and when to call it (the client's model reads this). */
  description: string;
  /** Arguments by snake_case name. */
  args: Record<string, ArgSpec>;
  /** Arguments that must be present. */
  required: string[];
  /** Fixed positionals the verb always receives first (a subcommand such as `pull`). */
  positionalPrefix?: string[];
  /** Session-run behaviour. */
  session: SessionRole;
  /** True when the verb never writes. */
  readOnly: boolean;
  /** Exit code 1 of the verb is an ordinary result (recall: no match), not an error. */
  exitOneIsResult?: boolean;
  /** The structured result (the verb's `--json` document). */
  output: JsonSchema;
};

const RUN_ARG: ArgSpec = {
  flag: "run",
  kind: "string",
  description:
    "Run handle (R000001). Optional: defaults to the run memory_start opened in this MCP session.",
};

const OK: JsonSchema = { type: "boolean", description: "true when the call succeeded" };
const INT: JsonSchema = { type: "integer" };
const STR: JsonSchema = { type: "string" };
const TRIPLE: JsonSchema = { type: "array", items: INT };
const STRINGS: JsonSchema = { type: "array", items: STR };

function object(
  properties: Record<string, JsonSchema>,
  required: string[] = [],
): JsonSchema {
  return { type: "object", properties: { ok: OK, ...properties }, required };
}

const SUMMARY_COUNTS = object({
  applied: INT,
  held: INT,
  noop: INT,
  conflicts: INT,
  failures: INT,
});
delete SUMMARY_COUNTS.properties!.ok;

const OUTCOMES = ["success", "partial", "overflow", "fail"];

/** Every tool bimri can serve, in tools/list order. A tool is served only when its verb exists. */
export const TOOL_SPECS: readonly ToolSpec[] = [
  {
    name: "memory_start",
    command: "start",
    title: "Start a BIMRI run",
    description:
      "Open this session's BIMRI run and return its handle and the brief. Call once at the start of work, then read the bimri.md resource (the working set). Calling it again in the same MCP session returns the same run. The run is closed with outcome partial if the client disconnects without memory_close.",
    args: {
      actor: {
        flag: "actor",
        kind: "string",
        description:
          "Lowercase slug naming the agent (claude, cursor, codex, ...). Default: derived from the MCP client's name.",
      },
      session: {
        flag: "session",
        kind: "string",
        description:
          "Harness session identity (the CLI's --session): a start with the same actor and session resumes that run while it is active. Default: a fresh identity for this MCP session.",
      },
    },
    required: [],
    session: "start",
    readOnly: false,
    output: object({
      run: { type: "string", description: "the run handle" },
      resumed: { type: "boolean" },
      actor: STR,
      date: STR,
      revision: INT,
      tokens: INT,
      tiers: TRIPLE,
      soft_targets: TRIPLE,
      orphan_candidates: STRINGS,
      brief: { type: "string", description: "the start brief as the CLI prints it" },
    }, ["run", "resumed", "actor", "brief"]),
  },
  {
    name: "memory_journal",
    command: "journal",
    title: "Journal durable detail",
    description:
      "Append one line of durable detail (what was found, decided or tried) to the run's append-only log. Returns the entry ID (R000001-E001). Journal entries are evidence, not memory: use memory_propose for anything future runs must know.",
    args: {
      run: RUN_ARG,
      text: { flag: "text", kind: "string", description: "One line, at most 8000 characters." },
      importance: {
        flag: "importance",
        kind: "integer",
        description: "1 through 5 (default 3).",
        minimum: 1,
        maximum: 5,
      },
    },
    required: ["text"],
    session: "uses-run",
    readOnly: false,
    output: object({ run: STR, entry_id: STR }, ["run", "entry_id"]),
  },
  {
    name: "memory_propose",
    command: "propose",
    title: "Propose a memory change",
    description:
      "Stage one change of one stable memory key for the run (set, touch or close); it takes effect at memory_sync or memory_close. Reuse an existing key to update its subject; set new_subject only for a genuinely new subject (an unknown key without it is held for classification). Tier 1 is durable facts, preferences, decisions and rules; Tier 2 is current work, risks and next actions; Tier 3 is patterns with evidence and a falsifier. Returns the proposal ID (R000001-Q001).",
    args: {
      run: RUN_ARG,
      key: {
        flag: "key",
        kind: "string",
        description: "Stable key: lowercase dotted or hyphenated words, at most 80 characters.",
      },
      operation: {
        flag: "operation",
        kind: "string",
        description: "set (default), touch (refresh a Tier 2 subject) or close (archive it).",
        enum: ["set", "touch", "close"],
      },
      new_subject: {
        flag: "new-subject",
        kind: "boolean",
        description: "Set a key that does not exist yet.",
      },
      target: {
        flag: "target",
        kind: "string",
        description: "The entry ID the change is meant for (optional check).",
      },
      tier: {
        flag: "tier",
        kind: "integer",
        description: "1 core, 2 active context, 3 pattern (default: the current tier).",
        minimum: 1,
        maximum: 3,
      },
      kind: {
        flag: "kind",
        kind: "string",
        description: "Tier 1: decision, fact, pref or rule.",
        enum: ["decision", "fact", "pref", "rule"],
      },
      importance: {
        flag: "importance",
        kind: "integer",
        description: "Tier 2: 1 through 5.",
        minimum: 1,
        maximum: 5,
      },
      status: {
        flag: "status",
        kind: "string",
        description: "Tier 2: active, watch or closed.",
        enum: ["active", "watch", "closed"],
      },
      trust: {
        flag: "trust",
        kind: "string",
        description: "working (default) or confirmed (only with source user).",
        enum: ["working", "confirmed"],
      },
      source: {
        flag: "source",
        kind: "string",
        description: "agent (default), user, external or legacy.",
        enum: ["agent", "user", "external", "legacy", "system"],
      },
      tags: { flag: "tags", kind: "list", description: "Tags (at most 12)." },
      text: {
        flag: "text",
        kind: "string",
        description: "The memory text (set): one line, at most 500 characters.",
      },
      rationale: {
        flag: "rationale",
        kind: "string",
        description: "Why (logged as a journal entry; defaults to the text).",
      },
      confidence: {
        flag: "confidence",
        kind: "string",
        description: "Tier 3: emerging, developing or established.",
        enum: ["emerging", "developing", "established"],
      },
      observations: {
        flag: "observations",
        kind: "integer",
        description: "Tier 3: how many times it was observed.",
        minimum: 1,
      },
      evidence: {
        flag: "evidence",
        kind: "list",
        description: "Tier 3: journal entry IDs (R000001-E001) that support the pattern.",
      },
      falsifier: {
        flag: "falsifier",
        kind: "string",
        description: "Tier 3: what would disprove the pattern (required for Tier 3).",
      },
      needs_human: {
        flag: "needs-human",
        kind: "boolean",
        description:
          "Refused by design: a question for the owner belongs in the conversation, not in memory.",
      },
      question: {
        flag: "question",
        kind: "string",
        description: "Stored with the proposal.",
      },
    },
    required: ["key"],
    session: "uses-run",
    readOnly: false,
    output: object({
      proposal_id: STR,
      created: { type: "boolean" },
      hold_reason: { description: "why the proposal is already known to be held, or null" },
    }, ["proposal_id"]),
  },
  {
    name: "memory_sync",
    command: "sync",
    title: "Apply proposals now",
    description:
      "Apply the run's pending proposals now and move its base to the accepted head. Reports applied, held candidates, no-ops, new concurrent conflicts and agent-action failures; a new conflict is the owner's to decide (see memory_review).",
    args: { run: RUN_ARG },
    required: [],
    session: "uses-run",
    readOnly: false,
    output: object({ run: STR, revision: INT, memory: SUMMARY_COUNTS }, ["run", "memory"]),
  },
  {
    name: "memory_close",
    command: "close",
    title: "Close the run",
    description:
      "Apply the run's pending proposals, record its outcome and end it. Call once when the work is finished. Without run, closes the run memory_start opened in this MCP session.",
    args: {
      run: { ...RUN_ARG, description: "Run handle. Default: this MCP session's run." },
      actor: {
        flag: "actor",
        kind: "string",
        description: "With session: close the run mapped to this actor and harness session.",
      },
      session: {
        flag: "session",
        kind: "string",
        description: "With actor: the harness session whose run to close.",
      },
      outcome: {
        flag: "outcome",
        kind: "string",
        description: "success, partial, overflow or fail (default partial).",
        enum: OUTCOMES,
      },
      summary: {
        flag: "summary",
        kind: "string",
        description: "One line, at most 1000 characters.",
      },
    },
    required: [],
    session: "close",
    readOnly: false,
    output: object({
      run: STR,
      closed: { type: "boolean" },
      outcome: STR,
      memory: SUMMARY_COUNTS,
    }, ["run", "closed", "outcome"]),
  },
  {
    name: "memory_recall",
    command: "recall",
    title: "Recall memory",
    description:
      'Look up a subject by its exact key (current generation; history adds held candidates and replaced or closed generations), or search current and historical memory in task language: query takes the words of your task or question ("how do retries work"), any of them may match, stems and stop words are handled, the most relevant current memory comes first, then history; each match has a score and the query words it matched. Set rank to false for the reference\'s exact mode (every word must occur, ordered by key). Read-only. No match is an empty result, not an error.',
    args: {
      key: { flag: "key", kind: "string", description: "The stable key to look up." },
      query: { flag: "query", kind: "string", description: "Words to search for." },
      history: {
        flag: "history",
        kind: "boolean",
        description: "With key: include earlier generations and held candidates.",
      },
      rank: {
        flag: "rank",
        kind: "boolean",
        description:
          "With query: relevance search (default true); false requires every word and orders by key.",
        onWith: "query",
      },
      limit: {
        flag: "limit",
        kind: "integer",
        description: "At most this many matches (default 20, at most 500).",
        minimum: 1,
        maximum: 500,
      },
    },
    required: [],
    session: "none",
    readOnly: true,
    exitOneIsResult: true,
    output: {
      type: "object",
      properties: {
        matches: {
          type: "array",
          items: {
            type: "object",
            properties: {
              location: STR,
              key: STR,
              id: STR,
              reason: STR,
              trust: STR,
              source: STR,
              text: STR,
              tier: INT,
              score: { type: "number" },
              matched: STRINGS,
              match: STR,
            },
            required: ["location", "key", "id", "reason", "trust", "source", "text"],
          },
        },
        total: INT,
        omitted: INT,
      },
      required: ["matches", "total", "omitted"],
    },
  },
  {
    name: "memory_status",
    command: "status",
    title: "Memory status",
    description:
      "Read the store's numbers: revision, runs (active and orphan candidates), hot-view residency, open conflicts and reviews, outcomes.",
    args: {},
    required: [],
    session: "none",
    readOnly: false, // like the CLI verb, creates an empty store on first use
    output: object({
      engine_version: STR,
      memory_format: STR,
      revision: INT,
      runs: INT,
      active_runs: { type: "array" },
      orphan_candidates: STRINGS,
      hot_tokens: INT,
      tiers: TRIPLE,
      open_conflicts: INT,
      actionable_conflicts: INT,
      outcomes: { type: "object" },
    }, ["revision", "runs"]),
  },
  {
    name: "memory_review",
    command: "review",
    title: "Review owner questions",
    description:
      "Read-only listing of owner questions: concurrent conflicts with the live value, each proposed post-state and what each choice does. Show them to the owner; never choose for them.",
    args: {
      conflict: {
        flag: null,
        kind: "string",
        description: "Show only this conflict (C000001).",
      },
      all: {
        flag: "all",
        kind: "boolean",
        description: "Also show legacy, recovery and satisfied-history groups.",
      },
      offset: { flag: "offset", kind: "integer", description: "Skip the first N records." },
      limit: {
        flag: "limit",
        kind: "integer",
        description: "Show at most N records, 1-100 (default 20).",
        minimum: 1,
        maximum: 100,
      },
    },
    required: [],
    session: "none",
    readOnly: true,
    output: object({
      counts: { type: "object" },
      total: INT,
      offset: INT,
      limit: INT,
      remaining: INT,
      records: { type: "array" },
    }),
  },
  {
    name: "memory_resolve",
    command: "resolve",
    title: "Record the owner's answer to a conflict",
    description:
      "Record the human owner's explicit answer to a concurrent conflict shown by memory_review: choose a candidate proposal ID, current (keep the live value) or dismiss. Set human_approved to true ONLY after the owner personally chose this exact option in the conversation; never choose on the owner's behalf. human_approved is an attestation that is recorded, not authentication.",
    args: {
      conflict: { flag: null, kind: "string", description: "The conflict (C000001)." },
      choose: {
        flag: "choose",
        kind: "string",
        description: "A candidate proposal ID (R000003-Q001), current or dismiss.",
      },
      human_approved: {
        flag: "human-approved",
        kind: "boolean",
        description: "true only when the owner explicitly chose this option.",
      },
    },
    required: ["conflict", "choose", "human_approved"],
    session: "none",
    readOnly: false,
    output: object({
      conflict_id: STR,
      choice: STR,
      status: STR,
      already_resolved: { type: "boolean" },
      revision_before: INT,
      revision_after: INT,
    }, ["conflict_id", "choice"]),
  },
  {
    name: "memory_share_pull",
    command: "share",
    positionalPrefix: ["pull"],
    title: "Import team memory from other clones",
    description:
      "Import the memory changes other clones of this git repository exported to .bimri-share/ (call after git pull). Changes that saw the local value apply; identical ones are no-ops; concurrent, different edits of one key become ordinary conflicts for the owner (see memory_review). A fresh clone's store is built from the records. Refused record files are reported by name and nothing is imported from them. It first writes this clone's own changes that wait for the next export (memory_sync and memory_close leave them for a git commit or a pull).",
    args: {},
    required: [],
    session: "none",
    readOnly: false,
    output: object({
      replica: STR,
      revision: INT,
      imported: INT,
      applied: INT,
      noop: INT,
      superseded: INT,
      conflicts: INT,
      conflict_ids: STRINGS,
      resolved: INT,
      held: INT,
      waiting: INT,
      problems: { type: "array" },
      problems_total: INT,
    }, ["imported"]),
  },
];

/** The inputSchema of a tool, as tools/list advertises it. */
export function inputSchema(spec: ToolSpec): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, arg] of Object.entries(spec.args)) {
    const schema: JsonSchema = { description: arg.description };
    if (arg.kind === "list") {
      schema.type = "array";
      schema.items = { type: "string" };
    } else schema.type = arg.kind;
    if (arg.enum) schema.enum = arg.enum;
    if (arg.minimum !== undefined) schema.minimum = arg.minimum;
    if (arg.maximum !== undefined) schema.maximum = arg.maximum;
    properties[name] = schema;
  }
  return { type: "object", properties, required: spec.required, additionalProperties: false };
}

function typeName(kind: ArgSpec["kind"]): string {
  switch (kind) {
    case "list":
      return "an array of strings";
    case "integer":
      return "an integer";
    case "boolean":
      return "a boolean";
    case "number":
      return "a number";
    default:
      return "a string";
  }
}

function fits(kind: ArgSpec["kind"], value: unknown): boolean {
  switch (kind) {
    case "string":
      return typeof value === "string";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "list":
      return Array.isArray(value) && value.every((v) => typeof v === "string");
  }
}

/**
 * Checks the shape of a tool call's arguments (types, required, unknown names).
 * Values inside a valid shape (ranges, grammars, choices) are left to the verb,
 * so their refusals read exactly as on the command line.
 */
export function checkArguments(spec: ToolSpec, args: unknown): Record<string, unknown> {
  if (args === undefined || args === null) args = {};
  if (typeof args !== "object" || Array.isArray(args)) {
    throw new BimriError("usage", `${spec.name}: arguments must be a JSON object.`);
  }
  // A null argument means "not given", as an omitted flag does.
  const record = Object.fromEntries(
    Object.entries(args as Record<string, unknown>).filter(([, v]) => v !== null),
  );
  for (const name of Object.keys(record)) {
    if (!Object.hasOwn(spec.args, name)) {
      const known = Object.keys(spec.args);
      throw new BimriError(
        "usage",
        `${spec.name}: unknown argument ${JSON.stringify(name)}. ${
          known.length ? `Arguments: ${known.join(", ")}.` : "It takes no arguments."
        }`,
      );
    }
  }
  for (const name of spec.required) {
    if (record[name] === undefined) {
      throw new BimriError("usage", `${spec.name}: ${name} is required.`);
    }
  }
  for (const [name, arg] of Object.entries(spec.args)) {
    const value = record[name];
    if (value === undefined || value === null) continue;
    if (!fits(arg.kind, value)) {
      throw new BimriError("usage", `${spec.name}: ${name} must be ${typeName(arg.kind)}.`);
    }
    if (arg.kind === "list" && (value as string[]).some((v) => v.includes(","))) {
      throw new BimriError(
        "usage",
        `${spec.name}: ${name} entries cannot contain commas; pass one value per entry.`,
      );
    }
    // JSON can spell a lone surrogate (\ud800), which no command line can carry: written
    // out it would become U+FFFD in Markdown lines but stay as it is in JSON records.
    const strings = arg.kind === "list" ? value as string[] : [value];
    if (strings.some((v) => typeof v === "string" && !v.isWellFormed())) {
      throw new BimriError(
        "usage",
        `${spec.name}: ${name} is not valid Unicode text (it holds a lone surrogate).`,
      );
    }
  }
  return record;
}

/**
 * The argv the CLI verb would receive for these (checked) arguments. Values
 * are attached with `=` and the positional follows `--`, so a value that
 * starts with a dash stays a value.
 */
export function toArgv(spec: ToolSpec, args: Record<string, unknown>): string[] {
  const argv: string[] = [];
  const positionals: string[] = [];
  for (const [name, arg] of Object.entries(spec.args)) {
    let value = args[name];
    if ((value === undefined || value === null) && arg.onWith !== undefined) {
      const other = args[arg.onWith];
      if (other !== undefined && other !== null) value = true;
    }
    if (value === undefined || value === null) continue;
    if (arg.flag === null) {
      positionals.push(String(value));
      continue;
    }
    if (arg.kind === "boolean") {
      if (value === true) argv.push(`--${arg.flag}`);
    } else if (arg.kind === "list") argv.push(`--${arg.flag}=${(value as string[]).join(",")}`);
    else argv.push(`--${arg.flag}=${String(value)}`);
  }
  const all = [...(spec.positionalPrefix ?? []), ...positionals];
  return all.length > 0 ? [...argv, "--", ...all] : argv;
}
