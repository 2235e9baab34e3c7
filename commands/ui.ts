/** `ui`: serve the owner's console (review inbox, memory browser) on a local web page. */
import { BimriError } from "../engine/errors.ts";
import { boolFlag, type Command, ok, stringFlag } from "./command.ts";

/** The ui verb. */
export const uiCommand: Command = {
  name: "ui",
  summary: "serve the owner's console (review inbox, memory, runs, health) on a local web page",
  help: `usage: bimri ui [--port N] [--host 127.0.0.1] [--open] [--read-only]

Serves a local web page from this process and prints its URL, which carries a
random token for this launch only: open it in your browser (the token is
exchanged for a session cookie). Pages: Overview, Memory, a key's history,
the Review inbox (answer conflicts; each answer is recorded exactly as
\`bimri resolve <C...> --choose <...> --human-approved\` records it, after you
confirm that you chose it), Runs and Health. The page refreshes itself when
agents change the store. Stop with Ctrl+C.

  --port N       port to listen on (default 0: any free port)
  --host H       loopback address to bind (default 127.0.0.1; anything not
                 loopback is refused: the console is never served to a network)
  --open         also open the URL in the default browser
  --read-only    serve no form and refuse every change`,
  flags: {
    // Not `integer`: that marks the reference's int() flags, and ui is bimri's own verb.
    port: { type: "string" },
    host: { type: "string" },
    open: { type: "boolean" },
    "read-only": { type: "boolean" },
  },
  async run(ctx, flags) {
    const portText = stringFlag(flags, "port") ?? "0";
    const port = /^[0-9]{1,5}$/.test(portText) ? Number(portText) : -1;
    if (port < 0 || port > 65535) {
      throw new BimriError("usage", "ui: --port must be 0 (any free port) through 65535.");
    }
    const host = stringFlag(flags, "host") ?? "127.0.0.1";
    // Loaded only here so every other verb starts without the console.
    const { isLoopbackHost } = await import("../ui/security.ts");
    if (!isLoopbackHost(host)) {
      throw new BimriError(
        "usage",
        `ui: --host ${
          JSON.stringify(host)
        } is not a loopback address; the console is served only to this machine (use 127.0.0.1, ::1 or localhost).`,
      );
    }
    const { StorePaths } = await import("../engine/store/paths.ts");
    const { storeExists } = await import("../engine/store/store.ts");
    if (!storeExists(new StorePaths(ctx.root))) {
      throw new BimriError(
        "store-unsafe",
        `there is no BIMRI store at ${ctx.root} (.bimri/state.json is missing); run start there first or pass --root.`,
      );
    }
    requireLoopbackPermission(host === "localhost" ? "127.0.0.1" : host.replace(/^\[|\]$/g, ""));
    const { startUi } = await import("../ui/server.ts");
    const { runCommand } = await import("./run.ts");
    const { findVerb } = await import("./verbs.ts");
    const server = startUi({
      root: ctx.root,
      hostname: host === "localhost" ? "127.0.0.1" : host.replace(/^\[|\]$/g, ""),
      port,
      readOnly: boolFlag(flags, "read-only"),
      runVerb: (verb, verbFlags, positionals) => {
        const command = findVerb(verb);
        if (!command) throw new Error(`internal: no verb ${verb}`);
        return runCommand(command, { ...ctx, json: true }, verbFlags, positionals);
      },
    });
    const out = new TextEncoder();
    Deno.stdout.writeSync(out.encode(`BIMRI UI: ${server.url}\n`));
    Deno.stderr.writeSync(
      out.encode(
        `BIMRI: serving the owner's console for ${ctx.root}${
          boolFlag(flags, "read-only") ? " (read-only)" : ""
        }; open the URL above (its token is for this launch only). Ctrl+C stops it.\n`,
      ),
    );
    const stop = () => {
      server.shutdown().catch(() => {});
    };
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      try {
        Deno.addSignalListener(signal, stop);
      } catch {
        // Windows knows no SIGTERM; Ctrl+C still arrives as SIGINT.
      }
    }
    if (boolFlag(flags, "open")) openBrowser(server.url);
    await server.finished;
    return ok("", {});
  },
};

/**
 * bimri runs without network permission; the console needs to listen on one
 * loopback address. Granted on the command line (`--allow-net=127.0.0.1`), or
 * asked for once at a terminal; otherwise refused with the way to grant it.
 */
function requireLoopbackPermission(hostname: string): void {
  const descriptor = { name: "net", host: hostname } as const;
  let state = Deno.permissions.querySync(descriptor).state;
  if (state === "prompt" && Deno.stdin.isTerminal()) {
    state = Deno.permissions.requestSync(descriptor).state;
  }
  if (state !== "granted") {
    throw new BimriError(
      "refused",
      `bimri ui must listen on ${hostname}, and this bimri runs without network permission. Run it with --allow-net=${hostname} added to its deno permissions (e.g. deno run ... --allow-net=${hostname} main.ts ui), or answer yes when asked at a terminal.`,
    );
  }
}

function openBrowser(url: string): void {
  const [cmd, args] = Deno.build.os === "windows"
    ? ["cmd", ["/c", "start", "", url]]
    : Deno.build.os === "darwin"
    ? ["open", [url]]
    : ["xdg-open", [url]];
  try {
    new Deno.Command(cmd, { args, stdin: "null", stdout: "null", stderr: "null" }).spawn();
  } catch {
    Deno.stderr.writeSync(
      new TextEncoder().encode("BIMRI: could not open a browser; open the URL above yourself.\n"),
    );
  }
}
