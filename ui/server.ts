/**
 * The owner's console server: Deno's built-in HTTP server on a loopback
 * address, every request judged by the guard (token -> cookie, Host, Origin,
 * CSRF), pages read through the engine, answers recorded by the `resolve`
 * verb exactly as `bimri resolve ... --human-approved` records them.
 */
import { BimriError } from "../engine/errors.ts";
import type { CommandResult, FlagValues } from "../commands/command.ts";
import { APP_JS, STYLE_CSS } from "./assets.ts";
import { type Html, html } from "./html.ts";
import {
  type Guard,
  judge,
  newGuard,
  sameSecret,
  securityHeaders,
  sessionCookie,
} from "./security.ts";
import { changeStamp } from "./stamp.ts";
import {
  type MemoryFilter,
  type MemoryRow,
  readAnswer,
  readInbox,
  readKey,
  readMemory,
  readOverview,
  readRun,
  readRuns,
  searchMemory,
} from "./data.ts";
import {
  answeredPage,
  BAR_WIDTH_CSS,
  confirmPage,
  type Frame,
  healthPage,
  inboxPage,
  keyPage,
  memoryPage,
  messagePage,
  overviewPage,
  runPage,
  runsPage,
} from "./pages.ts";
import { CONFLICT_ID, RUN_ID } from "../engine/model/ids.ts";

/** Runs one CLI verb through the command layer (as `bimri <verb>` would) and returns its result. */
export type VerbRunner = (
  verb: string,
  flags: FlagValues,
  positionals: string[],
) => Promise<CommandResult>;

/** How the console is started. */
export type UiOptions = {
  root: string;
  hostname: string;
  port: number;
  readOnly: boolean;
  runVerb: VerbRunner;
};

/** A running console. */
export type UiServer = {
  /** The URL with this launch's token (print it; it is the only way in). */
  url: string;
  port: number;
  guard: Guard;
  /** Resolves when the server has stopped. */
  finished: Promise<void>;
  /** Stops the server. */
  shutdown: () => Promise<void>;
};

/** Rows per page of the Memory and Runs pages (keeps a page well under 1 MB). */
export const PAGE_ROWS = 100;

const STYLE = STYLE_CSS + "\n" + BAR_WIDTH_CSS + "\n";

/** Starts the console; refuses when it cannot listen. */
export function startUi(options: UiOptions): UiServer {
  let guard: Guard | null = null;
  const handler = (request: Request): Promise<Response> => {
    if (guard === null) return Promise.resolve(new Response("starting", { status: 503 }));
    return handle(options, guard, request).catch((error) => errorResponse(error));
  };
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: options.hostname,
      port: options.port,
      onListen: () => {},
    }, handler);
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) {
      throw new BimriError(
        "refused",
        `port ${options.port} on ${options.hostname} is in use; pass another --port, or --port 0 for any free port.`,
      );
    }
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      throw new BimriError(
        "refused",
        `bimri ui needs permission to listen on ${options.hostname}; run it with --allow-net=${options.hostname} (the compiled binary has it).`,
      );
    }
    throw error;
  }
  const port = server.addr.port;
  guard = newGuard(options.hostname, port);
  const host = options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname;
  return {
    url: `http://${host}:${port}/?token=${guard.token}`,
    port,
    guard,
    finished: server.finished,
    shutdown: () => server.shutdown(),
  };
}

function headers(type: string, extra: Record<string, string> = {}): Headers {
  return new Headers({ ...securityHeaders(), "content-type": type, ...extra });
}

function htmlResponse(body: string, status = 200): Response {
  return new Response(body, { status, headers: headers("text/html; charset=utf-8") });
}

function textResponse(body: string, status: number): Response {
  return new Response(body, { status, headers: headers("text/plain; charset=utf-8") });
}

function errorResponse(error: unknown): Response {
  const message = error instanceof Error ? error.message : String(error);
  return textResponse(`BIMRI ERROR: ${message}\n`, error instanceof BimriError ? 409 : 500);
}

// Pages and the frame's badge are cached per change stamp: a refresh of an
// unchanged store costs the stamp, not a new read of memory.
type Cached = { stamp: string; body: string };
const pageCache = new Map<string, Cached>();
const PAGE_CACHE_SIZE = 64;
let badge: { stamp: string; count: number } | null = null;

// What the engine read for the current stamp, by what was asked: a page
// rendered again (another filter, another offset, another tab) on an
// unchanged store reads nothing again.
let dataStamp = "";
const dataCache = new Map<string, unknown>();

function memo<T>(stamp: string, key: string, read: () => T): T {
  if (stamp !== dataStamp) {
    dataCache.clear();
    dataStamp = stamp;
  }
  if (dataCache.has(key)) return dataCache.get(key) as T;
  const value = read();
  dataCache.set(key, value);
  return value;
}

function cached(key: string, stamp: string, build: () => string): string {
  const hit = pageCache.get(key);
  if (hit && hit.stamp === stamp) return hit.body;
  const body = build();
  pageCache.delete(key);
  pageCache.set(key, { stamp, body });
  if (pageCache.size > PAGE_CACHE_SIZE) pageCache.delete(pageCache.keys().next().value!);
  return body;
}

function frameFor(options: UiOptions, guard: Guard, stamp: string): Frame {
  if (badge === null || badge.stamp !== stamp) {
    const inbox = memo(stamp, "inbox", () => readInbox(options.root));
    // Replicas waiting for trust are the owner's questions too (answered in a terminal).
    const open = inbox.questions.filter((q) => q.category !== "satisfied").length +
      inbox.held.length + inbox.trust.length;
    badge = { stamp, count: open };
  }
  return {
    stamp,
    openQuestions: badge.count,
    readOnly: options.readOnly,
    csrf: guard.csrf,
    root: options.root,
  };
}

async function handle(options: UiOptions, guard: Guard, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const verdict = judge(guard, {
    method: request.method,
    path: url.pathname,
    host: request.headers.get("host"),
    origin: request.headers.get("origin"),
    secFetchSite: request.headers.get("sec-fetch-site"),
    cookie: request.headers.get("cookie"),
    token: url.searchParams.get("token"),
  });
  if (verdict.kind === "refuse") {
    return textResponse(`Forbidden: ${verdict.reason}.\n`, verdict.status);
  }
  if (verdict.kind === "exchange") {
    url.searchParams.delete("token");
    const location = url.pathname + (url.search === "?" ? "" : url.search);
    return new Response(null, {
      status: 303,
      headers: headers("text/plain; charset=utf-8", {
        location,
        "set-cookie": sessionCookie(guard),
      }),
    });
  }
  const path = url.pathname;
  if (path === "/assets/app.css") {
    return new Response(STYLE, { headers: headers("text/css; charset=utf-8") });
  }
  if (path === "/assets/app.js") {
    return new Response(APP_JS, { headers: headers("text/javascript; charset=utf-8") });
  }
  if (path === "/favicon.ico") {
    return new Response(null, { status: 204, headers: headers("image/x-icon") });
  }
  const stamp = changeStamp(options.root);
  if (path === "/api/stamp") return textResponse(stamp, 200);
  if (request.method === "POST") return await post(options, guard, request, url, stamp);
  const frame = frameFor(options, guard, stamp);
  const key = path + url.search;
  if (path === "/") {
    return htmlResponse(
      cached(key, stamp, () =>
        overviewPage(
          frame,
          memo(stamp, "overview", () => readOverview(options.root)),
        )),
    );
  }
  if (path === "/memory") return htmlResponse(await memory(options, frame, url));
  if (path === "/key") {
    const k = url.searchParams.get("k") ?? "";
    if (!/^[a-z0-9][a-z0-9.-]{0,79}$/.test(k)) {
      return htmlResponse(
        messagePage(
          frame,
          "Unknown key",
          html`<p class="notice bad">That is not a memory key.</p>`,
        ),
        404,
      );
    }
    return htmlResponse(
      cached(key, stamp, () =>
        keyPage(
          frame,
          memo(stamp, `key:${k}`, () => readKey(options.root, k)),
        )),
    );
  }
  if (path === "/inbox") {
    return htmlResponse(
      cached(key, stamp, () =>
        inboxPage(
          frame,
          memo(stamp, "inbox", () => readInbox(options.root)),
          null,
        )),
    );
  }
  const question = /^\/inbox\/(C[0-9]{6})$/.exec(path);
  if (question && CONFLICT_ID.test(question[1])) {
    return htmlResponse(single(options, frame, question[1], null));
  }
  if (path === "/runs") {
    const offset = Math.max(0, Number.parseInt(url.searchParams.get("offset") ?? "0", 10) || 0);
    return htmlResponse(
      cached(
        key,
        stamp,
        () =>
          runsPage(
            frame,
            memo(stamp, `runs:${offset}`, () => readRuns(options.root, offset, PAGE_ROWS)),
            offset,
            PAGE_ROWS,
          ),
      ),
    );
  }
  const run = /^\/runs\/(R[0-9]{6})$/.exec(path);
  if (run && RUN_ID.test(run[1])) {
    const timeline = readRun(options.root, run[1]);
    if (timeline === null) {
      return htmlResponse(
        messagePage(frame, "No such run", html`<p class="notice bad">${run[1]} has no log.</p>`),
        404,
      );
    }
    return htmlResponse(cached(key, stamp, () => runPage(frame, run[1], timeline)));
  }
  if (path === "/health") {
    const body = cached(key, stamp, () => "");
    if (body !== "") return htmlResponse(body);
    const result = await options.runVerb("doctor", { "read-only": true }, []);
    const data = result.data as { passed?: boolean; errors?: string[]; warnings?: string[] };
    const page = healthPage(frame, {
      passed: data.passed === true,
      errors: data.errors ?? [],
      warnings: data.warnings ?? [],
    });
    pageCache.set(key, { stamp, body: page });
    return htmlResponse(page);
  }
  return htmlResponse(
    messagePage(frame, "Not found", html`<p class="notice">There is no such page.</p>`),
    404,
  );
}

function single(options: UiOptions, frame: Frame, id: string, flash: Html | null): string {
  const inbox = readInbox(options.root, id);
  if (inbox.questions.length > 0) return inboxPage(frame, inbox, flash, id);
  const answer = readAnswer(options.root, id);
  if (!answer.exists) {
    return messagePage(
      frame,
      "No such question",
      html`<p class="notice bad">${id} does not exist.</p>`,
    );
  }
  return answeredPage(frame, id, answer.answer, flash ?? html``);
}

const FILTER_NAMES = ["tier", "status", "source", "trust", "actor", "location"] as const;

async function memory(options: UiOptions, frame: Frame, url: URL): Promise<string> {
  const filter = Object.fromEntries(
    FILTER_NAMES.map((name) => [name, (url.searchParams.get(name) ?? "").slice(0, 80)]),
  ) as MemoryFilter;
  const query = (url.searchParams.get("q") ?? "").trim();
  const offset = Math.max(0, Number.parseInt(url.searchParams.get("offset") ?? "0", 10) || 0);
  const key = url.pathname + url.search;
  const hit = pageCache.get(key);
  if (hit && hit.stamp === frame.stamp) return hit.body;
  let rows: MemoryRow[];
  let actors: string[];
  let note: string | null = null;
  if (query !== "") {
    try {
      const found = await searchMemory(options.root, query, filter);
      rows = found.rows;
      actors = found.actors;
      note =
        `Ranked by relevance over current memory, held candidates and history (best first in each group).`;
    } catch (error) {
      if (!(error instanceof BimriError)) throw error;
      rows = [];
      actors = [];
      note = error.message;
    }
  } else {
    ({ rows, actors } = memo(
      frame.stamp,
      `memory:${JSON.stringify(filter)}`,
      () => readMemory(options.root, filter),
    ));
  }
  const body = memoryPage(frame, {
    filter,
    query,
    rows: rows.slice(offset, offset + PAGE_ROWS),
    actors,
    total: rows.length,
    offset,
    limit: PAGE_ROWS,
    searchNote: note,
  });
  pageCache.set(key, { stamp: frame.stamp, body });
  return body;
}

async function post(
  options: UiOptions,
  guard: Guard,
  request: Request,
  url: URL,
  stamp: string,
): Promise<Response> {
  if (options.readOnly) {
    return textResponse("Forbidden: this console is read-only; it changes nothing.\n", 403);
  }
  const type = request.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) {
    return textResponse("Forbidden: a change must come from the console's own form.\n", 403);
  }
  const body = await request.text();
  if (body.length > 4096) return textResponse("Request too large.\n", 413);
  const form = new URLSearchParams(body);
  if (!sameSecret(form.get("csrf") ?? "", guard.csrf)) {
    return textResponse("Forbidden: missing or wrong form token; reload the page.\n", 403);
  }
  const m = /^\/inbox\/(C[0-9]{6})\/(confirm|resolve)$/.exec(url.pathname);
  if (!m) return textResponse("Not found.\n", 404);
  const [, id, step] = m;
  const choice = form.get("choose") ?? "";
  const seen = form.get("seen") ?? "";
  const frame = { ...frameFor(options, guard, stamp), stamp: "" };
  if (!/^(?:current|dismiss|R[0-9]{6}-Q[0-9]{3})$/.test(choice)) {
    return htmlResponse(
      single(
        options,
        frame,
        id,
        html`<p class="notice bad" role="alert">Choose one of the question's answers.</p>`,
      ),
      400,
    );
  }
  const now = readAnswer(options.root, id);
  if (!now.exists) return htmlResponse(single(options, frame, id, null), 404);
  if (now.answer === null || now.answer.status !== "resolved") {
    if (now.seen !== seen) {
      return htmlResponse(
        single(
          options,
          frame,
          id,
          html`
            <p class="notice bad"
              role="alert">${id} changed since you read it (another run or answer touched it). Nothing was recorded; read it again and choose.</p>
          `,
        ),
        409,
      );
    }
  }
  if (step === "confirm") {
    const inbox = readInbox(options.root, id);
    const q = inbox.questions[0];
    if (!q) return htmlResponse(single(options, frame, id, null));
    return htmlResponse(confirmPage(frame, q, choice));
  }
  if (form.get("approved") !== "yes" || form.get("confirm") !== "yes") {
    return htmlResponse(
      single(
        options,
        frame,
        id,
        html`<p class="notice bad" role="alert">Tick the box that says you chose this answer, then record it.</p>`,
      ),
      400,
    );
  }
  // Exactly `bimri resolve <id> --choose <choice> --human-approved`.
  let message: Html;
  let status = 200;
  try {
    const result = await options.runVerb("resolve", { choose: choice, "human-approved": true }, [
      id,
    ]);
    message = html`<p class="notice ok" role="status">${result.text.trim()}</p>`;
    if (result.exitCode !== 0) status = 409;
  } catch (error) {
    if (!(error instanceof BimriError)) throw error;
    message =
      html`<p class="notice bad" role="alert">The engine refused this answer: ${error.message}</p>`;
    status = 409;
  }
  pageCache.clear();
  badge = null;
  const after = { ...frameFor(options, guard, changeStamp(options.root)), stamp: "" };
  return htmlResponse(single(options, after, id, message), status);
}
