/**
 * The console's request guard: loopback-only binding, the per-launch token
 * exchanged for an HttpOnly SameSite=Strict session cookie, Host and Origin
 * checks against DNS rebinding and cross-site requests, the CSRF token of
 * state-changing forms, and the response headers (a strict CSP with no
 * external source). Pure decisions over request facts; no I/O.
 */

/** True when `host` names the loopback interface (127.0.0.0/8, ::1 or localhost). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (bare === "localhost" || bare === "::1") return true;
  const octets = bare.split(".");
  return octets.length === 4 && octets[0] === "127" &&
    octets.every((o) => /^[0-9]{1,3}$/.test(o) && Number(o) <= 255);
}

/** A fresh random secret (32 bytes, base64url). */
export function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}

/** Compares two secrets in time independent of where they differ. */
export function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length || a.length === 0) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** The secrets and address of one launch. */
export type Guard = {
  /** The token printed in the URL (exchanged once per browser for the cookie). */
  token: string;
  /** The session cookie's value. */
  session: string;
  /** The CSRF token every form carries. */
  csrf: string;
  /** The cookie's name (port-specific: cookies are shared across ports of a host). */
  cookieName: string;
  /** Every `Host` header value this server answers to (host:port). */
  hosts: ReadonlySet<string>;
};

/** A guard for a server bound to `host`:`port`, with fresh secrets. */
export function newGuard(host: string, port: number): Guard {
  const names = new Set<string>();
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  if (bare === "::1") names.add(`[::1]:${port}`);
  else names.add(`${bare}:${port}`);
  // A loopback address is also reached as localhost; the name cannot be rebound
  // to another machine by a web page's DNS, unlike any other name.
  names.add(`localhost:${port}`);
  return {
    token: newSecret(),
    session: newSecret(),
    csrf: newSecret(),
    cookieName: `bimri_ui_${port}`,
    hosts: names,
  };
}

/** The facts of a request the guard looks at. */
export type RequestFacts = {
  method: string;
  path: string;
  host: string | null;
  origin: string | null;
  secFetchSite: string | null;
  cookie: string | null;
  /** The `token` query parameter, when present. */
  token: string | null;
};

/** What to do with a request. */
export type Verdict =
  | { kind: "allow" }
  | { kind: "exchange" } // a valid token: set the cookie, redirect to the URL without it
  | { kind: "refuse"; status: number; reason: string };

/** The value of cookie `name` in a Cookie header, or null. */
export function cookieValue(header: string | null, name: string): string | null {
  if (header === null) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/**
 * Judges a request: a foreign Host (DNS rebinding) or Origin, a cross-site
 * fetch, a missing or wrong session, or a state-changing method other than
 * POST are refused; a right token is exchanged for the cookie.
 */
export function judge(guard: Guard, facts: RequestFacts): Verdict {
  if (facts.host === null || !guard.hosts.has(facts.host.toLowerCase())) {
    return { kind: "refuse", status: 403, reason: "this console answers only to its own address" };
  }
  if (facts.origin !== null && facts.origin !== "null") {
    const allowed = [...guard.hosts].some((h) => facts.origin === `http://${h}`);
    if (!allowed) return { kind: "refuse", status: 403, reason: "cross-origin request refused" };
  }
  if (
    facts.secFetchSite !== null && facts.secFetchSite !== "same-origin" &&
    facts.secFetchSite !== "none"
  ) {
    return { kind: "refuse", status: 403, reason: "cross-site request refused" };
  }
  if (facts.method !== "GET" && facts.method !== "HEAD" && facts.method !== "POST") {
    return { kind: "refuse", status: 405, reason: "method not allowed" };
  }
  if (facts.method === "POST") {
    // A browser's form post carries Origin; under this console's no-referrer
    // policy it is "null", and then Sec-Fetch-Site must say the post came from
    // this very origin. Anything else is not our form.
    const opaque = facts.origin === null || facts.origin === "null";
    if (opaque && facts.secFetchSite !== "same-origin") {
      return {
        kind: "refuse",
        status: 403,
        reason: "a change must come from this console's own page",
      };
    }
  }
  if (facts.token !== null && facts.method === "GET") {
    return sameSecret(facts.token, guard.token)
      ? { kind: "exchange" }
      : { kind: "refuse", status: 403, reason: "wrong or expired token" };
  }
  const session = cookieValue(facts.cookie, guard.cookieName);
  if (session === null || !sameSecret(session, guard.session)) {
    return {
      kind: "refuse",
      status: 403,
      reason: "no session: open the URL `bimri ui` printed (with its token)",
    };
  }
  return { kind: "allow" };
}

/** The session cookie set when the token is exchanged. */
export function sessionCookie(guard: Guard): string {
  return `${guard.cookieName}=${guard.session}; HttpOnly; SameSite=Strict; Path=/`;
}

/** The Content-Security-Policy: nothing from anywhere but this server, no framing, no inline code. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/** Headers every response carries. */
export function securityHeaders(): Record<string, string> {
  return {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "cache-control": "no-store",
  };
}
