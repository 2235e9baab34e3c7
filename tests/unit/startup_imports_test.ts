// Keeps the everyday verbs' module graphs small: no node: or npm: module, and no writer machinery behind a read.
import { deepStrictEqual } from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

type InfoModule = {
  specifier: string;
  dependencies?: { code?: { specifier?: string }; isDynamic?: boolean }[];
};

/** The modules `entry` loads before it runs (static imports only, followed transitively). */
async function staticGraph(entry: string): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: InfoModule[] };
  const bySpecifier = new Map(info.modules.map((m) => [m.specifier, m]));
  const start = new URL(entry, `file://${ROOT}`).href;
  const seen = new Set([start]);
  const queue = [start];
  while (queue.length > 0) {
    for (const dep of bySpecifier.get(queue.pop()!)?.dependencies ?? []) {
      const next = dep.code?.specifier;
      if (dep.isDynamic || !next || seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return [...seen].map((s) => s.startsWith("file://") ? s.slice(`file://${ROOT}`.length) : s);
}

// Loading any node: module costs a short CLI process 10-40 ms of start-up.
for (
  const entry of [
    "main.ts",
    "commands/start.ts",
    "commands/journal.ts",
    "commands/propose.ts",
    "commands/sync.ts",
    "commands/close.ts",
    "commands/get.ts",
    "engine/integrity/everyday.ts",
    "engine/integrity/authority.ts",
  ]
) {
  Deno.test(`${entry} loads no node: or npm: module before it runs`, async () => {
    const runtime = (await staticGraph(entry)).filter((s) => /^(node|npm|jsr):/.test(s));
    deepStrictEqual(runtime, []);
  });
}

for (const entry of ["engine/integrity/everyday.ts", "engine/integrity/authority.ts"]) {
  Deno.test(`${entry}, which a read (get, recall) loads, brings no writer machinery`, async () => {
    const graph = await staticGraph(entry);
    const writers = graph.filter((s) =>
      /^engine\/(share\/|memory\/(commit|commit_evidence|resolve|propose|proposal_batch|close_run|sync|start_recovery)\.ts)/
        .test(s)
    );
    deepStrictEqual(writers, []);
  });
}

Deno.test("the everyday check (get, recall, propose) loads none of the full check", async () => {
  const graph = await staticGraph("engine/integrity/everyday.ts");
  const full = graph.filter((s) =>
    /^engine\/(integrity\/(authority|authority_facts|authority_graph|settled|consumed)|memory\/review|records\/(conflict|answer_proof))\.ts$/
      .test(s)
  );
  deepStrictEqual(full, []);
  const propose = await staticGraph("commands/propose.ts");
  deepStrictEqual(propose.filter((s) => s === "engine/integrity/authority.ts"), []);
  // Settled history serves the full check of status and review only.
  for (const verb of ["start", "sync", "close"]) {
    const graph = await staticGraph(`commands/${verb}.ts`);
    deepStrictEqual(graph.filter((s) => s === "engine/integrity/settled.ts"), [], verb);
  }
});

Deno.test("the runner loads the credential guard only for a store with a policy file", async () => {
  // get and sync screen no text: without .bimri-secrets.json nothing can be
  // redacted, so the policy reader and the credential rules stay unloaded.
  for (const entry of ["commands/run.ts", "commands/get.ts", "commands/sync.ts"]) {
    const graph = await staticGraph(entry);
    const guard = graph.filter((s) =>
      s === "engine/guard/policy.ts" || s === "engine/model/credentials.ts"
    );
    deepStrictEqual(guard, [], entry);
  }
  const { POLICY_FILE_NAME } = await import("../../commands/run.ts");
  const { POLICY_FILE } = await import("../../engine/guard/policy.ts");
  deepStrictEqual(POLICY_FILE_NAME, POLICY_FILE);
});

Deno.test("a read of a store with no active run loads neither the record schemas nor everyday.ts", async () => {
  // recall.ts loads summary.ts and takes everyday.ts only when the
  // summary names an active run whose records must be validated.
  for (const entry of ["engine/retrieval/recall.ts", "engine/integrity/summary.ts"]) {
    const graph = await staticGraph(entry);
    const heavy = graph.filter((s) =>
      s === "engine/integrity/schemas.ts" || s === "engine/integrity/everyday.ts"
    );
    deepStrictEqual(heavy, [], entry);
  }
});

Deno.test("the runner loads share wiring only for a share verb or a shared store", async () => {
  // Without a replica file (and outside share/install) wiring does nothing,
  // so run.ts checks with one lstat and leaves share_wiring.ts unloaded.
  for (const entry of ["commands/run.ts", "commands/get.ts", "commands/journal.ts"]) {
    const graph = await staticGraph(entry);
    deepStrictEqual(graph.filter((s) => s === "commands/share_wiring.ts"), [], entry);
  }
  const { REPLICA_FILE_NAME, SHARE_WIRED_VERBS } = await import("../../commands/run.ts");
  const { REPLICA_FILE } = await import("../../engine/memory/share_observer.ts");
  const { SHARE_VERBS } = await import("../../commands/share_wiring.ts");
  deepStrictEqual(REPLICA_FILE_NAME, REPLICA_FILE);
  deepStrictEqual([...SHARE_WIRED_VERBS].sort(), [...SHARE_VERBS].sort());
});

Deno.test("the CLI's flag parser loads Python's string repr without the Python JSON reader", async () => {
  // commands/command.ts needs only invalidChoice (py_repr.ts) for its refusals.
  for (const entry of ["main.ts", "commands/get.ts", "commands/journal.ts"]) {
    const graph = await staticGraph(entry);
    deepStrictEqual(graph.filter((s) => s === "engine/model/py_json.ts"), [], entry);
  }
});

Deno.test("the everyday verbs load no top-level regex literal with a Unicode property class", async () => {
  // V8 checks a regex literal at a module's top level while parsing the
  // module: a \p{...} class costs every process ~4M instructions even when
  // never used. Inside a function (built on first use) it costs nothing until then.
  const offenders: string[] = [];
  for (const verb of ["start", "journal", "propose", "sync", "close", "get"]) {
    for (
      const file of [...await staticGraph("main.ts"), ...await staticGraph(`commands/${verb}.ts`)]
    ) {
      if (!file.endsWith(".ts") || file.includes(":")) continue;
      const lines = Deno.readTextFileSync(`${ROOT}${file}`).split("\n");
      lines.forEach((line, i) => {
        if (/^(export )?(const|let|var) /.test(line) && /\\p\{/.test(line)) {
          offenders.push(`${file}:${i + 1}`);
        }
      });
    }
  }
  deepStrictEqual([...new Set(offenders)], []);
});

Deno.test("the credential rules' patterns are built on first use, not while the guard loads", async () => {
  // Every writer loads credentials.ts; most text never passes its cheap
  // trigger, so the rules (a dozen RegExp constructions) wait in a function.
  const offenders: string[] = [];
  for (const verb of ["start", "journal", "propose", "close"]) {
    for (const file of await staticGraph(`commands/${verb}.ts`)) {
      if (!file.endsWith(".ts") || file.includes(":")) continue;
      let topLevel = false;
      Deno.readTextFileSync(`${ROOT}${file}`).split("\n").forEach((line, i) => {
        if (/^\S/.test(line)) topLevel = /^(export )?(const|let|var) /.test(line);
        if (topLevel && /new RegExp\(/.test(line)) offenders.push(`${file}:${i + 1}`);
      });
    }
  }
  deepStrictEqual([...new Set(offenders)], []);
});

Deno.test("main.ts loads the store only once a verb runs", async () => {
  // `--version` and `--help` answer from main.ts's own graph: the runner
  // (commands/run.ts) is part of it, but store.ts and its dozen modules come
  // with the verb's module, or load in the runner for the verbs that need them.
  const graph = await staticGraph("main.ts");
  const store = graph.filter((s) =>
    s === "engine/store/store.ts" || s === "commands/run_recovery.ts" ||
    s === "commands/run_policy.ts"
  );
  deepStrictEqual(store, []);
});

// --- share on the everyday path (issue 38): exporting loads no node: module ---
Deno.test("exporting a change of a shared store loads no node: module (signing is pure)", async () => {
  // What share_wiring.ts loads for every verb on a shared store; node:crypto
  // and node:fs load only through loadSignatureChecks and loadNoFollowOpen.
  for (
    const entry of [
      "engine/share/export.ts",
      "engine/share/scan.ts",
      "engine/share/trust.ts",
      "engine/share/own.ts",
      "engine/share/sign.ts",
      "engine/share/safe_read.ts",
    ]
  ) {
    const runtime = (await staticGraph(entry)).filter((s) => /^(node|npm|jsr):/.test(s));
    deepStrictEqual(runtime, [], entry);
  }
});

Deno.test("exporting one change loads no pull machinery (import.ts joins through its hook)", async () => {
  for (
    const entry of ["engine/share/export.ts", "engine/share/own.ts", "commands/share_wiring.ts"]
  ) {
    const pull = (await staticGraph(entry)).filter((s) =>
      /^engine\/(share\/(import|pull|scan|trust)|memory\/(contest_batch|commit_batch|propose))\.ts$/
        .test(s)
    );
    deepStrictEqual(pull, [], entry);
  }
});

// ---- trimB (issue 42): start, journal, propose ------------------------------------------------

Deno.test("start loads commit, resolve and share wiring only when it needs them", async () => {
  // start_recovery.ts loads commit.ts and resolve.ts for a store a crash may
  // have left something to finish; run.ts loads share_wiring.ts for a shared store.
  const graph = await staticGraph("commands/start.ts");
  const lazy = graph.filter((s) =>
    /^(engine\/memory\/(commit|resolve)|commands\/share_wiring)\.ts$/.test(s)
  );
  deepStrictEqual(lazy, []);
});

Deno.test("the writers load the credential rules only for text that could hold one", async () => {
  // run_input.ts loadTextScreen loads credentials.ts and policy.ts only when a
  // text passes the cheap first pass (unsafe_text.ts) or a policy file exists.
  for (
    const entry of [
      "commands/start.ts",
      "commands/journal.ts",
      "commands/propose.ts",
      "commands/close.ts",
    ]
  ) {
    const graph = await staticGraph(entry);
    const guard = graph.filter((s) =>
      s === "engine/model/credentials.ts" || s === "engine/guard/policy.ts"
    );
    deepStrictEqual(guard, [], entry);
  }
  // The screen finds the policy file by the name policy.ts reads.
  const { loadTextScreen } = await import("../../engine/memory/run_input.ts");
  const { POLICY_FILE } = await import("../../engine/guard/policy.ts");
  const root = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${root}/${POLICY_FILE}`, "{not json");
    let refused = "";
    try {
      await loadTextScreen(root, ["plain text"], true);
    } catch (error) {
      refused = (error as Error).message;
    }
    deepStrictEqual(refused.includes(POLICY_FILE), true, refused);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("propose loads the held notice only for a proposal that will be held", async () => {
  // The notice's words live with the hold reasons (decision_record.ts), loaded on demand.
  const graph = await staticGraph("commands/propose.ts");
  deepStrictEqual(graph.filter((s) => s === "engine/memory/decision_record.ts"), []);
});

Deno.test("the store loads the cold records' archive check only for a state.json someone else wrote", async () => {
  // store.ts withStore stops with ColdAgreementPending; commands/run.ts loads
  // archive_month.ts up front for the other verbs, on demand for these.
  for (
    const entry of [
      "engine/store/store.ts",
      "commands/run.ts",
      "commands/start.ts",
      "commands/journal.ts",
      "commands/propose.ts",
      // get --key also proves a cold subject's record through it (store.ts coldBindingCheck).
      "commands/get.ts",
    ]
  ) {
    const graph = await staticGraph(entry);
    deepStrictEqual(graph.filter((s) => s === "engine/store/archive_month.ts"), [], entry);
  }
});

Deno.test("start and propose load the view repair only for a bimri.md that differs from the head", async () => {
  // view_on_demand.ts checks the view; view_sync.ts (with the manual-edit
  // review) loads on demand, registering its syncView with store.ts.
  for (const entry of ["commands/start.ts", "commands/propose.ts"]) {
    const graph = await staticGraph(entry);
    const repair = graph.filter((s) =>
      /^engine\/(memory\/(view_sync|conflicts)|integrity\/manual_edit)\.ts$/
        .test(s)
    );
    deepStrictEqual(repair, [], entry);
  }
  // Any other verb that starts a run or stages a proposal (hooks, share pull,
  // secrets redact) has view_sync.ts in its graph, so the repair is registered
  // before it runs: commands/run.ts runs only start, journal and propose again.
  const missing: string[] = [];
  for (const entry of Deno.readDirSync(`${ROOT}commands`)) {
    const file = `commands/${entry.name}`;
    if (!file.endsWith(".ts") || ["commands/start.ts", "commands/propose.ts"].includes(file)) {
      continue;
    }
    const graph = await staticGraph(file);
    const writes = graph.some((s) =>
      s === "engine/memory/start_run.ts" || s === "engine/memory/propose.ts"
    );
    if (writes && !graph.includes("engine/memory/view_sync.ts")) missing.push(file);
  }
  deepStrictEqual(missing, []);
});

Deno.test("journal loads the view parsing (hot.ts) only when it must read the head", async () => {
  // store.ts loadHeadViews: run.ts loads it up front for every other verb; a
  // journal on a new store or a foreign state.json stops with LoadPending and runs again.
  for (const entry of ["main.ts", "commands/run.ts", "commands/journal.ts"]) {
    const graph = await staticGraph(entry);
    deepStrictEqual(graph.filter((s) => s === "engine/model/hot.ts"), [], entry);
  }
});

Deno.test("journal loads neither the head's verified read nor any SHA-256 code", async () => {
  // journal reads no head and hashes nothing: head_load.ts (with hot.ts and
  // text.ts's hashing) loads through store.ts loadHeadViews, which run.ts
  // awaits for every other verb; the text rules journal needs are plain_text.ts.
  for (const entry of ["main.ts", "commands/run.ts", "commands/journal.ts"]) {
    const graph = await staticGraph(entry);
    const heavy = graph.filter((s) =>
      s === "engine/store/head_load.ts" || s === "engine/model/text.ts" ||
      s === "engine/model/sha256.ts"
    );
    deepStrictEqual(heavy, [], entry);
  }
});

Deno.test("the runner loads its recovery (upgrade, retirement, reruns) only when a verb stops", async () => {
  // run.ts runs the verb once; run_recovery.ts, and the converters it may
  // need, load only when the verb stopped with a LoadPending, an older v5
  // state or a pending v1-v3 retirement.
  const graph = await staticGraph("commands/run.ts");
  const recovery = graph.filter((s) =>
    s === "commands/run_recovery.ts" || s.startsWith("engine/migrate/")
  );
  deepStrictEqual(recovery, []);
});

// ---- end trimB -------------------------------------------------------------------------------

Deno.test("team memory's export reaches the commit machinery only through its hook", async () => {
  // A shared store's start exports without commit.ts; commit.ts, once loaded
  // by a verb that commits, registers the finisher export calls.
  const graph = await staticGraph("engine/share/export.ts");
  deepStrictEqual(graph.filter((s) => s === "engine/memory/commit.ts"), []);
  const { commitFinisher } = await import("../../engine/memory/commit_finisher.ts");
  deepStrictEqual(commitFinisher(), null);
  const commit = await import("../../engine/memory/commit.ts");
  deepStrictEqual(commitFinisher(), commit.finalizeInterruptedCommit);
});

Deno.test("a shared store's idle check loads no export, signing, scan or pull", async () => {
  // start and close of a shared store with nothing pending load share_wiring.ts
  // and idle.ts only; the export and what it brings load when the check finds work.
  for (const entry of ["commands/share_wiring.ts", "engine/share/idle.ts"]) {
    const graph = await staticGraph(entry);
    const heavy = graph.filter((s) =>
      /^engine\/share\/(export|sign|scan|trust|own|keep|record|import|pull|state)\.ts$/.test(s) ||
      s === "engine/model/ed25519.ts" || s === "engine/guard/publish_screen.ts"
    );
    deepStrictEqual(heavy, [], entry);
  }
});

Deno.test("sync and close load the full authority check and resolve.ts only when they need them", async () => {
  // everyday.ts requireEverydayHealth vouches in the usual case (answers are
  // proven by its full check only: consumed_answers.ts), and commit.ts
  // finishes resolutions only when one may be applying; otherwise the verb
  // stops before writing (LoadPending) and runs again with the module loaded.
  for (const entry of ["commands/sync.ts", "commands/close.ts"]) {
    const graph = await staticGraph(entry);
    const full = graph.filter((s) =>
      /^engine\/(integrity\/(authority|authority_facts|authority_graph|consumed_answers)|memory\/resolve|records\/answer_proof)\.ts$/
        .test(s)
    );
    deepStrictEqual(full, [], entry);
  }
  // Callers that cannot run again (share, redaction, hook-close) close through
  // close_run.ts, which loads both with them.
  const wrapper = await staticGraph("engine/memory/close_run.ts");
  deepStrictEqual(wrapper.includes("engine/integrity/authority.ts"), true);
  deepStrictEqual(wrapper.includes("engine/memory/resolve.ts"), true);
});

Deno.test("get --key loads held candidates and history only for --history", async () => {
  // retrieval/lookup.ts builds the current record; records.ts (decisions,
  // proposals, the archive's history) loads for --history and queries.
  const graph = await staticGraph("commands/get.ts");
  const history = graph.filter((s) =>
    /^engine\/(retrieval\/records|records\/(decision|proposal))\.ts$/.test(s)
  );
  deepStrictEqual(history, []);
});

Deno.test("no command assembles the SHA-256 WebAssembly module at run time", async () => {
  // sha256.ts embeds the module's bytes; sha256_wasm.ts, the assembler, is for the tests.
  for (
    const entry of [
      "main.ts",
      "commands/start.ts",
      "commands/sync.ts",
      "commands/close.ts",
      "commands/get.ts",
      "engine/model/sha256.ts",
    ]
  ) {
    const graph = await staticGraph(entry);
    deepStrictEqual(graph.filter((s) => s === "engine/model/sha256_wasm.ts"), [], entry);
  }
});
