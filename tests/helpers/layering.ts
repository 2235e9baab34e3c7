/** The checker of DESIGN.md section 3 and the room ranks of docs/ARCHITECTURE.md: every broken rule of an import map, one line each. */
import { posix } from "node:path";

/** A room of the house: its rank (docs/ARCHITECTURE.md) and the folder or files it holds. */
export type Room = { name: string; rank: number };

/**
 * The rooms by rank (docs/ARCHITECTURE.md). A file imports files of its own room
 * or of a lower rank, never higher. ui/ and mcp/ share a rank but are two
 * rooms that do not import each other.
 */
const ROOMS: readonly { prefix: string; room: Room }[] = [
  { prefix: "engine/errors.ts", room: { name: "engine base", rank: 0 } },
  { prefix: "engine/versions.ts", room: { name: "engine base", rank: 0 } },
  { prefix: "engine/model/", room: { name: "engine/model", rank: 1 } },
  { prefix: "engine/store/", room: { name: "engine/store", rank: 2 } },
  { prefix: "engine/records/", room: { name: "engine/records", rank: 3 } },
  { prefix: "engine/guard/", room: { name: "engine/guard", rank: 4 } },
  { prefix: "engine/integrity/", room: { name: "engine/integrity", rank: 5 } },
  { prefix: "engine/retrieval/", room: { name: "engine/retrieval", rank: 6 } },
  { prefix: "engine/memory/", room: { name: "engine/memory", rank: 7 } },
  { prefix: "engine/share/", room: { name: "engine/share", rank: 8 } },
  { prefix: "engine/redaction/", room: { name: "engine/redaction", rank: 9 } },
  { prefix: "engine/migrate/", room: { name: "engine/migrate", rank: 10 } },
  { prefix: "engine/install/", room: { name: "engine/install", rank: 11 } },
  // The generated listing of the files install copies (DESIGN.md lists it under the installer).
  { prefix: "templates/", room: { name: "templates", rank: 10.5 } },
  { prefix: "ui/", room: { name: "ui", rank: 12 } },
  { prefix: "mcp/", room: { name: "mcp", rank: 12 } },
  { prefix: "commands/", room: { name: "commands", rank: 13 } },
  { prefix: "main.ts", room: { name: "main.ts", rank: 14 } },
];

/** The room of a repo-relative path, or null outside every room. */
export function roomOf(path: string): Room | null {
  return ROOMS.find(({ prefix }) => path === prefix || path.startsWith(prefix))?.room ?? null;
}

/**
 * The named rules of DESIGN.md section 3 that an upward import breaks, by
 * "from room -> to room" (every other upward import breaks the rank order).
 */
const NAMED_RULES: Readonly<Record<string, string>> = {
  "engine/store -> engine/memory": "engine/store/ knows no memory rules",
  "engine/retrieval -> engine/memory": "retrieval never reaches the write path (engine/memory/)",
  "engine/integrity -> engine/memory": "integrity never reaches the write path (engine/memory/)",
  "engine/integrity -> engine/migrate": "integrity knows no migration",
  "engine/integrity -> engine/install": "integrity knows no installer",
  "engine/memory -> engine/share": "the commit protocol knows no replication (share observes it)",
};

/** Verb files that alone load their adapter: adapter folder -> the one importer. */
const ADAPTER_VERB: Readonly<Record<string, string>> = {
  mcp: "commands/mcp.ts",
  ui: "commands/ui.ts",
};

/** What engine/model/ may import besides its own files. */
const MODEL_MAY_IMPORT = new Set(["engine/errors.ts", "engine/versions.ts"]);

/** Any use of the Deno namespace: files, processes, network, environment, clock sources. */
const DENO_API = /\bDeno\s*\.\s*\w+/;

/** Source without comments, so examples in doc comments are not taken for imports. */
export function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** The specifiers a module imports: static, type-only, re-exported, side-effect and literal dynamic. */
export function importSpecifiers(source: string): string[] {
  const code = withoutComments(source);
  const specifiers: string[] = [];
  const statement =
    /(?:^|[;\n}])\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?["']([^"']+)["']/g;
  const dynamic = /\bimport\(\s*["']([^"']+)["']\s*\)/g;
  for (const match of code.matchAll(statement)) specifiers.push(match[1]);
  for (const match of code.matchAll(dynamic)) specifiers.push(match[1]);
  return specifiers;
}

/** A relative specifier of `file` as a repo-relative path; null for a runtime module (node:, npm:, URLs). */
export function importTarget(file: string, specifier: string): string | null {
  if (!specifier.startsWith(".")) return null;
  // Repo keys and ES module specifiers both use "/" on every OS: join them as URL-style paths.
  return posix.normalize(posix.join(posix.dirname(file), specifier));
}

/** The file import graph: file -> repo-relative files it imports (only files of `files`). */
export function importGraph(files: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, source] of files) {
    const targets = importSpecifiers(source)
      .map((specifier) => importTarget(file, specifier))
      .filter((to): to is string => to !== null && files.has(to));
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/**
 * The file circles of `graph`: its strongly connected components of more than
 * one file (or one file importing itself), each sorted, in sorted order
 * (Tarjan's algorithm, iterative so deep chains do not overflow the stack).
 */
export function fileCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let next = 0;
  for (const root of [...graph.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++];
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || edges.includes(frame.node)) circles.push(component.sort());
    }
  }
  return circles.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
}

/** The broken rules of one import of `file`, one line each. */
function importProblems(file: string, specifier: string): string[] {
  const problems: string[] = [];
  const say = (rule: string) => problems.push(`${file} imports ${specifier}: ${rule}`);
  const from = roomOf(file);
  const to = importTarget(file, specifier);
  if (from === null) return problems;
  if (to === null) {
    if (from.name === "engine/model") say("engine/model/ is pure data: no runtime module");
    return problems;
  }
  const target = roomOf(to);
  if (target === null) {
    say("imports a file outside every room of the rank table");
    return problems;
  }
  if (from.name === "engine/model" && target.name !== "engine/model" && !MODEL_MAY_IMPORT.has(to)) {
    say("engine/model/ is pure data (only model/, errors.ts, versions.ts)");
    return problems;
  }
  const adapterVerb = ADAPTER_VERB[target.name];
  if (adapterVerb !== undefined && from.name !== target.name && file !== adapterVerb) {
    say(`only ${adapterVerb} imports ${target.name}/`);
    return problems;
  }
  if (from.name === target.name) return problems;
  if (ADAPTER_VERB[from.name] !== undefined && target.name === "commands") {
    if (Object.values(ADAPTER_VERB).includes(to)) {
      say(`${from.name}/ may reuse commands/ helpers but never the verb files of the adapters`);
    }
    return problems;
  }
  if (target.rank > from.rank) {
    say(
      NAMED_RULES[`${from.name} -> ${target.name}`] ??
        `rank order: ${from.name} (${from.rank}) must not import ${target.name} (${target.rank})`,
    );
  } else if (target.rank === from.rank) {
    say(`${from.name} and ${target.name} are separate rooms of one rank`);
  }
  return problems;
}

/** Every broken rule in `files` (repo-relative path -> source), one line each, circles last. */
export function layeringViolations(files: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, source] of files) {
    for (const specifier of importSpecifiers(source)) {
      problems.push(...importProblems(file, specifier));
    }
    if (roomOf(file)?.name === "engine/model" && DENO_API.test(withoutComments(source))) {
      problems.push(`${file} uses the Deno API: engine/model/ does no I/O (no files, no env)`);
    }
  }
  for (const circle of fileCircles(importGraph(files))) {
    problems.push(`file circle: ${circle.join(" -> ")}`);
  }
  return problems;
}
