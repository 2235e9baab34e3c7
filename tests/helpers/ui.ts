/**
 * Starts `bimri ui` as a separate process for black-box tests: reads its URL
 * from stdout, and stops it (SIGTERM) when the test is done.
 */
import { commandPrefix, MAIN_TS, RUN_PERMISSIONS } from "./cli.ts";
import { RUN_V8_FLAGS } from "../../engine/install/v8_flags.ts";

/** A running console process. */
export type UiProcess = {
  /** The printed URL, with its token. */
  url: string;
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  /** Stops the console and waits for it to exit; returns its exit code and stderr. */
  stop: () => Promise<{ code: number; stderr: string }>;
};

/** The command prefix for the console: the test prefix, plus loopback networking when run by deno. */
function uiPrefix(): string[] {
  if (Deno.env.get("BIMRI_CMD")) return commandPrefix();
  return [
    Deno.execPath(),
    "run",
    "--quiet",
    ...RUN_V8_FLAGS,
    ...RUN_PERMISSIONS,
    "--allow-net=127.0.0.1",
    MAIN_TS,
  ];
}

/** Starts `bimri --root <root> ui ...args` and waits for its URL line. */
export async function startUi(root: string, args: string[] = []): Promise<UiProcess> {
  const [cmd, ...prefix] = uiPrefix();
  const child = new Deno.Command(cmd, {
    args: [...prefix, "--root", root, "ui", ...args],
    cwd: root,
    env: { TZ: "UTC" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderrText = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let url: string | null = null;
  while (url === null) {
    const { value, done } = await reader.read();
    if (done) {
      const status = await child.status;
      throw new Error(
        `bimri ui exited (${status.code}) before printing its URL: ${await stderrText}`,
      );
    }
    seen += value;
    const m = /^BIMRI UI: (\S+)$/m.exec(seen);
    if (m) url = m[1];
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  const drained = (async () => {
    while (!(await reader.read()).done) { /* discard */ }
  })();
  return {
    url,
    origin: new URL(url).origin,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
      const status = await child.status;
      await drained;
      return { code: status.code, stderr: await stderrText };
    },
  };
}

/** The runs of a seeded store: `open` and `other` are still active; C000001 is open. */
export type SeededStore = { first: string; winner: string; loser: string };

/**
 * Seeds a store through the CLI with one concurrent conflict on
 * `deploy.target`: run 1 sets it, runs 2 and 3 both change it from the same
 * base, run 2 syncs first, so run 3's candidate R000003-Q001 is contested.
 */
export async function seedConflict(root: string): Promise<SeededStore> {
  const { must, newSubject, startRun } = await import("./cli.ts");
  const first = await startRun(root, "codex");
  await must(root, newSubject(first, "deploy.target", "Deploys go to eu-west"));
  await must(root, ["close", "--run", first, "--outcome", "success", "--summary", "seeded"]);
  const winner = await startRun(root, "claude", ["--session", "s-winner"]);
  const loser = await startRun(root, "cursor", ["--session", "s-loser"]);
  await must(root, [
    "propose",
    "--run",
    winner,
    "--key",
    "deploy.target",
    "--text",
    "Deploys go to us-east now",
  ]);
  await must(root, [
    "propose",
    "--run",
    loser,
    "--key",
    "deploy.target",
    "--text",
    "Deploys go to ap-south",
  ]);
  await must(root, ["sync", "--run", winner]);
  await must(root, ["sync", "--run", loser]);
  return { first, winner, loser };
}

/** A raw HTTP/1.1 exchange (any Host header), for refusals a browser would never send. */
export async function rawHttp(
  origin: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = "",
): Promise<{ status: number; headers: Headers; body: string }> {
  const url = new URL(origin);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const lines = [`${method} ${path} HTTP/1.1`];
  const all: Record<string, string> = { host: url.host, connection: "close", ...headers };
  if (body !== "") all["content-length"] = String(new TextEncoder().encode(body).length);
  for (const [name, value] of Object.entries(all)) lines.push(`${name}: ${value}`);
  await conn.write(new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n" + body));
  const text = await new Response(conn.readable).text();
  const [head, ...rest] = text.split("\r\n\r\n");
  const [statusLine, ...headerLines] = head.split("\r\n");
  const parsed = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    if (colon > 0) parsed.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return { status: Number(statusLine.split(" ")[1]), headers: parsed, body: rest.join("\r\n\r\n") };
}

/** Exchanges the console's printed token for its session cookie (`name=value`). */
export async function signIn(ui: UiProcess): Promise<string> {
  const url = new URL(ui.url);
  const exchange = await rawHttp(ui.origin, "GET", url.pathname + url.search, {});
  return (exchange.headers.get("set-cookie") ?? "").split(";")[0];
}
