/**
 * The console's pages, rendered on the server from the read model: plain
 * HTML that works with JavaScript disabled, every untrusted string escaped
 * through `html`. Pure: no I/O.
 */
import { diffHtml, type Html, html, join, untrusted, urlWith } from "./html.ts";
import type {
  Activity,
  Evidence,
  Generation,
  HeldQuestion,
  Inbox,
  KeyPage,
  LogLine,
  MemoryFilter,
  MemoryRow,
  Overview,
  ProposalFacts,
  Question,
  RunsPage,
  RunTimeline,
} from "./data.ts";
import type { CandidateProposal } from "../engine/records/conflict.ts";
import type { TrustQuestion } from "../engine/share/trust.ts";
import type { LiveEntry } from "../engine/records/live_entry.ts";
import { actionName, entryMetadata } from "../engine/memory/review_render.ts";
import { revisionName } from "../engine/model/ids.ts";
import type { JsonObject } from "../engine/model/json.ts";

/** What every page's frame needs. */
export type Frame = {
  /** The store's change stamp when the page was read (the script polls for a newer one); "" for none. */
  stamp: string;
  /** Open questions for the navigation badge. */
  openQuestions: number;
  readOnly: boolean;
  /** The CSRF token forms carry. */
  csrf: string;
  /** The store folder, shown in the header. */
  root: string;
};

const NAV: [string, string][] = [
  ["/", "Overview"],
  ["/memory", "Memory"],
  ["/inbox", "Review inbox"],
  ["/runs", "Runs"],
  ["/health", "Health"],
];

/** The page frame: head, persistent navigation, main content, footer. */
export function page(frame: Frame, title: string, active: string, body: Html): string {
  // A page answering a POST has no stamp: the script leaves it alone (it cannot be fetched again).
  const stampMeta = frame.stamp === ""
    ? html``
    : html`<meta name="bimri-stamp" content="${frame.stamp}">`;
  const links = NAV.map(([href, label]) => {
    const current = href === active
      ? html`
        aria-current="page"
      `
      : html``;
    const badge = href === "/inbox"
      ? html`<span class="badge${
        frame.openQuestions === 0 ? " zero" : ""
      }" aria-label="${frame.openQuestions} open questions">${frame.openQuestions}</span>`
      : html``;
    return html`<li><a href="${href}"${current}>${label}${badge}</a></li>`;
  });
  return "<!doctype html>\n" + html`
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        ${stampMeta}
        <title>${title} · bimri</title>
        <link rel="stylesheet" href="/assets/app.css">
        <script src="/assets/app.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#content">Skip to content</a>
        <header class="top">
          <div class="top-inner">
            <a class="brand" href="/">bimri<small>owner's console</small></a>
            <nav class="main" aria-label="Main">
              <ul>${links}</ul>
            </nav>
            <span class="mode">${frame.readOnly ? "Read-only" : ""}</span>
          </div>
        </header>
        <main id="content" tabindex="-1">
    ${body}
        </main>
        <footer>Store: <span class="mono">${frame
          .root}</span> · served locally by this bimri process; nothing is loaded from the network.</footer>
      </body>
    </html>
  `.markup;
}

function pct(value: number, max: number): number {
  if (max <= 0) return 0;
  return Math.min(100, Math.round((value / max) * 100));
}

function meter(label: string, value: number, max: number, unit: string): Html {
  const p = pct(value, max);
  const level = value > max ? "over" : p >= 85 ? "high" : "";
  // Widths come from a fixed set of classes: the CSP allows no inline style.
  return html`
    <div class="meter">
      <div
        class="row"><span>${label}</span><span class="mono">${value.toLocaleString("en-US")} / ${max
          .toLocaleString("en-US")} ${unit}</span></div>
      <div class="bar" role="meter" aria-label="${label}" aria-valuemin="0"
        aria-valuemax="${max}"
        aria-valuenow="${value}"><span class="w${Math.round(p / 5) * 5} ${level}"></span></div>
    </div>
  `;
}

/** Previous/next links of a paginated list at `offset` (`limit` rows of `total`). */
function pager(
  path: string,
  params: Record<string, string>,
  offset: number,
  limit: number,
  total: number,
  [back, forward]: [string, string],
): Html {
  const link = (to: number, rel: string, label: string) =>
    html`<a class="button secondary" href="${
      urlWith(path, { ...params, offset: to })
    }" rel="${rel}">${label}</a>`;
  return html`${offset > 0 ? link(Math.max(0, offset - limit), "prev", back) : html``}${
    offset + limit < total ? link(offset + limit, "next", forward) : html``
  }`;
}

/** A table in its scrolling frame; a column named `*Name` is hidden on narrow screens. */
function dataTable(columns: string[], rows: Html[]): Html {
  const heads = columns.map((c) =>
    c.startsWith("*")
      ? html`<th scope="col" class="opt">${c.slice(1)}</th>`
      : html`<th scope="col">${c}</th>`
  );
  return html`
    <div class="table-wrap">
      <table>
        <thead>
          <tr>${heads}</tr>
        </thead>
        <tbody>${rows}</tbody>
      </table>
    </div>
  `;
}

/** Bar widths in 5% steps, as CSS classes (no inline style under the CSP). */
export const BAR_WIDTH_CSS = Array.from(
  { length: 21 },
  (_, i) => `.bar .w${i * 5}{width:${i * 5}%}`,
)
  .join("\n");

function outcomePill(outcome: string | null, closed: boolean): Html {
  if (!closed) return html`<span class="pill warn">active</span>`;
  if (outcome === null) return html`<span class="pill">closed</span>`;
  const tone = outcome === "success" ? "ok" : outcome === "fail" ? "bad" : "warn";
  return html`<span class="pill ${tone}">${outcome}</span>`;
}

function runLink(run: string | null): Html {
  return run === null
    ? html`<span class="muted">—</span>`
    : html`<a class="mono" href="/runs/${run}">${run}</a>`;
}

function keyLink(key: string): Html {
  return html`<a class="mono" href="${urlWith("/key", { k: key })}">${key}</a>`;
}

/** Characters of one text shown before the rest is folded away. */
const FOLD_CHARS = 600;

/** Untrusted text; a very long one shows its start and folds the rest under a disclosure. */
function longText(text: string): Html {
  if (text.length <= FOLD_CHARS) return untrusted(text);
  const total = text.length.toLocaleString("en-US");
  return html`${
    untrusted(text.slice(0, FOLD_CHARS))
  }… <details><summary>Show all ${total} characters</summary>${untrusted(text)}</details>`;
}

function shareCard(share: NonNullable<Overview["share"]>): Html {
  const peers = share.peers.map((p) =>
    html`<li><span class="mono">${p.replica}</span>: ${p.seen} imported, ${p.waiting} waiting${
      p.gap
        ? html`
          <span class="pill warn wrap">gap: a record is missing; the rest arrives with a later git pull</span>
        `
        : html``
    }</li>`
  );
  return html`<section class="card" aria-labelledby="share-h"><h2 id="share-h">Team memory</h2>
<dl class="meta"><dt>This replica</dt><dd class="mono">${share.replica}</dd>
<dt>Records exported</dt><dd>${share.exported}</dd>
${
    share.unexported > 0
      ? html`
        <dt>Changes for the next export</dt>
        <dd>${share
          .unexported} (run <code>bimri share status</code> and <code>git add .bimri-share</code> before you commit)</dd>
      `
      : html``
  }
<dt>Waiting for <code>share pull</code></dt><dd>${share.waiting}</dd>
${
    share.trust > 0
      ? html`
        <dt>Waiting for your trust</dt>
        <dd>${share.trust} replicas (<a href="/inbox">review inbox</a>)</dd>
      `
      : html``
  }
${
    share.finishing > 0
      ? html`
        <dt>Pull finishing</dt>
        <dd>${share.finishing} effects (the next command finishes them)</dd>
      `
      : html``
  }
${
    share.problems > 0
      ? html`
        <dt>Refused records</dt>
        <dd>${share.problems} (see Health)</dd>
      `
      : html``
  }</dl>
${
    peers.length === 0
      ? html`<p class="muted">No other replica has shared yet.</p>`
      : html`<ul>${peers}</ul>`
  }
</section>`;
}

/** The Overview page. */
export function overviewPage(frame: Frame, o: Overview): string {
  const s = o.status;
  const [t1, t2, t3] = s.head.tiers;
  const [s1, s2, s3] = s.head.softTargets;
  const orphans = s.orphans.length;
  const open = s.actionableConflicts + s.legacyReviews + s.recoveryReviews + s.held.length;
  const outcomes = Object.keys(s.outcomes).sort();
  const activity = o.activity.map((a) => activityItem(a));
  const share = o.share === null ? html`` : shareCard(o.share);
  const errors = s.head.validationErrors.length;
  const issues = errors === 0 ? html`` : html`
    <div class="notice bad"
      role="alert"><strong>The hot view has ${errors} validation error(s).</strong> See <a href="/health">Health</a>.</div>
  `;
  return page(
    frame,
    "Overview",
    "/",
    html`
      <h1>Overview</h1>
      ${issues}
      <div class="grid">
        <section class="card">
          <div class="label">Accepted revision</div>
          <div class="figure mono">${revisionName(s.revision)}</div>
          <div class="muted">${s.revisions} revisions · ${s.proposals} proposals</div>
        </section>
        <section class="card">
          <div class="label">Runs</div>
          <div class="figure">${s.runs}</div>
          <div class="muted">${s.active.length} active · ${s.runs -
            s.active.length} closed · ${orphans} orphaned</div>
        </section>
        <section class="card">
          <div class="label">Open questions</div>
          <div class="figure">${open}</div>
          <div class="muted">${s.actionableConflicts} ${s.actionableConflicts === 1
            ? "conflict"
            : "conflicts"} · ${s.held.length} held · ${s
            .recoveryReviews} recovery</div>
          <p><a href="/inbox">Open the review inbox</a></p>
        </section>
        <section class="card"><div class="label">Outcomes</div>${outcomes.length === 0
          ? html`<p class="muted">No run closed yet.</p>`
          : html`<ul>${outcomes.map((k) => html`<li>${k}: ${s.outcomes[k]}</li>`)}</ul>`}</section>
      </div>
      <h2>Hot memory</h2>
      <section class="card" aria-label="Hot memory against its limits">
      ${meter("bimri.md bytes (hard ceiling)", s.hotBytes, s.hotMaxBytes, "bytes")}
      ${meter("Tier 1 · core (soft target)", t1, s1, "entries")}
      ${meter("Tier 2 · active context (soft target)", t2, s2, "entries")}
      ${meter("Tier 3 · patterns (soft target)", t3, s3, "entries")}
      <p class="muted">About ${s.head.tokens.toLocaleString("en-US")} tokens · ${s
        .coldCurrent} cold-current entries</p>
      </section>
      ${share}
      <h2>Recent activity</h2>
      ${activity.length === 0
        ? html`<p class="muted">No run yet.</p>`
        : html`<ol class="timeline">${activity}</ol>`}
      ${s.active.length > 0
        ? html`
          <h2>Active runs</h2>
          <ul>${s.active.map((a) => html`<li>${runLink(a.run)} · ${untrusted(a.actor)}</li>`)}</ul>
        `
        : html``}
    `,
  );
}

function activityItem(a: Activity): Html {
  const changes = a.proposals.length === 0
    ? html`<span class="muted">no memory change proposed</span>`
    : join(
      a.proposals.slice(0, 6).map((p) =>
        html`<span class="pill">${p.operation}</span> ${keyLink(p.key)}`
      ),
      " · ",
    );
  const more = a.proposals.length > 6
    ? html`
      · and ${a.proposals.length - 6} more
    `
    : html``;
  return html`
    <li>
      <div>${runLink(a.run)} by <strong>${untrusted(a.actor)}</strong> ${outcomePill(
        a.outcome,
        a.closed,
      )} <span class="when">${a.startedAt}</span></div>
      <div>${changes}${more}</div>
    </li>
  `;
}

const TIER_NAMES: Record<string, string> = { "1": "Tier 1", "2": "Tier 2", "3": "Tier 3" };

function select(name: string, label: string, value: string, options: [string, string][]): Html {
  return html`<label>${label}<select name="${name}">${
    options.map(([v, text]) =>
      html`
        <option value="${v}" ${v === value
          ? html`
            selected
          `
          : html``}>${text}</option>
      `
    )
  }</select></label>`;
}

/** What the Memory page shows. */
export type MemoryView = {
  filter: MemoryFilter;
  query: string;
  rows: MemoryRow[];
  actors: string[];
  total: number;
  offset: number;
  limit: number;
  /** The search's note (ranked over history too), or null when not searching. */
  searchNote: string | null;
};

/** The Memory page. */
export function memoryPage(frame: Frame, v: MemoryView): string {
  const f = v.filter;
  const any: [string, string] = ["", "any"];
  const params = { q: v.query, ...f };
  const rows = v.rows.map((r) =>
    html`
      <tr>
        <td>${keyLink(r.key)}<div class="muted mono">${r.id}</div></td>
        <td class="text">${untrusted(r.text)}</td>
        <td>${r.tier ? TIER_NAMES[String(r.tier)] : ""}${r.status
          ? html`<div class="muted">${r.status}</div>`
          : html``}</td>
        <td class="opt"><span class="pill">${r.location
          .toLowerCase()}</span>${r.reason !== "current"
          ? html`<div class="muted">${r.reason}</div>`
          : html``}</td>
        <td class="opt">${r.trust}<div class="muted">${r.source}</div></td>
        <td class="opt">${runLink(r.run)}<div class="muted">${untrusted(r.actor)}</div></td>
      </tr>
    `
  );
  const first = v.total === 0 ? 0 : v.offset + 1;
  const last = v.offset + v.rows.length;
  const pagerNav = pager("/memory", params, v.offset, v.limit, v.total, ["Previous", "Next"]);
  return page(
    frame,
    "Memory",
    "/memory",
    html`<h1>Memory</h1>
<form class="filters" method="get" action="/memory" role="search">
<label>Search<input type="search" name="q" value="${v.query}" placeholder="words to find, ranked"></label>
${select("tier", "Tier", f.tier, [any, ["1", "Tier 1"], ["2", "Tier 2"], ["3", "Tier 3"]])}
${
      select("location", "Where", f.location, [any, ["HOT", "hot"], ["COLD", "cold-current"], [
        "HELD",
        "held",
      ], ["HISTORY", "history"]])
    }
${
      select("status", "Status", f.status, [any, ["active", "active"], ["watch", "watch"], [
        "closed",
        "closed",
      ]])
    }
${
      select("source", "Source", f.source, [
        any,
        ...["user", "agent", "external", "system", "legacy"].map((s) => [s, s] as [string, string]),
      ])
    }
${
      select("trust", "Trust", f.trust, [
        any,
        ...["working", "confirmed", "contested"].map((s) => [s, s] as [string, string]),
      ])
    }
${select("actor", "Actor", f.actor, [any, ...v.actors.map((a) => [a, a] as [string, string])])}
<button type="submit">Apply</button> <a class="button secondary" href="/memory">Clear</a>
</form>
${v.searchNote === null ? html`` : html`<p class="muted">${v.searchNote}</p>`}
<p class="muted">${v.total} ${v.total === 1 ? "entry" : "entries"}${
      v.total > 0
        ? html`
          · showing ${first}–${last}
        `
        : html``
    }</p>
${
      v.rows.length === 0 ? html`<p class="notice">Nothing matches.</p>` : html`
        ${dataTable(["Key", "Text", "Tier", "*Where", "*Trust", "*Run"], rows)}
      `
    }
<nav class="pager" aria-label="Pages">${pagerNav}</nav>`,
  );
}

function entryBlock(live: LiveEntry): Html {
  return html`
    <p class="value text">${untrusted(live.entry.text)}</p>
    <dl class="meta">
      <dt>Entry</dt>
      <dd class="mono">${live.entry.id}</dd>
      <dt>Metadata</dt>
      <dd>${entryMetadata(live.entry)}</dd>
      <dt>Residency</dt>
      <dd>${live.storage === "hot" ? "hot (in bimri.md)" : "cold-current (archive)"}</dd>
    </dl>
  `;
}

function proposalLine(prefix: string, by: ProposalFacts): Html {
  const revision = by.revision === null ? "" : ` · ${revisionName(by.revision)}`;
  return html`
    <div
      class="when">${prefix} ${by.operation} <span class="mono">${by.id}</span> · run ${runLink(
        by.run,
      )} (${untrusted(by.actor)}) · ${by.createdAt}${revision}</div>
  `;
}

function generationItem(g: Generation, previous: Generation | null): Html {
  // A set that replaced the previous generation wrote this one.
  const written = previous !== null && previous.reason === "replaced" && previous.by !== null
    ? proposalLine("written by", previous.by)
    : html``;
  const provenance = g.by === null
    ? html``
    : proposalLine(`${g.reason} on ${g.archivedOn} by`, g.by);
  const diff = previous === null || previous.text === g.text
    ? untrusted(g.text)
    : diffHtml(previous.text, g.text);
  return html`
    <li
      class="${g.reason === "current" ? "current" : ""}"><div><strong>${g.reason === "current"
        ? "Current"
        : "Earlier generation"}</strong></div><div class="diff text">${diff}</div>${written}${provenance}</li>
  `;
}

/** A key's page. */
export function keyPage(frame: Frame, k: KeyPage): string {
  const generations = k.generations.map((g, i) =>
    generationItem(g, i > 0 ? k.generations[i - 1] : null)
  );
  const held = k.held.map((h) =>
    html`<li><span class="mono">${h.id}</span> · run ${runLink(h.run)} (${
      untrusted(h.actor)
    }) · ${h.reason}<div class="text">${untrusted(h.text)}</div></li>`
  );
  const conflicts = k.conflicts.map((c) =>
    html`<li><a class="mono" href="/inbox/${c.id}">${c.id}</a> · ${c.label} · raised ${c.createdAt} · candidates ${
      c.candidates.join(", ")
    }<div>${answerLine(c.answer)}</div></li>`
  );
  return page(
    frame,
    `Key ${k.key}`,
    "/memory",
    html`<h1>Key <span class="mono">${k.key}</span></h1>
<section class="card"><h2>Current entry</h2>${
      k.current === null
        ? html`<p class="muted">This key has no current entry.</p>`
        : entryBlock(k.current)
    }</section>
<h2>Timeline</h2>
<p class="muted">Oldest first. Each generation shows the words that changed from the one before.</p>
${
      generations.length === 0
        ? html`<p class="muted">No generation recorded.</p>`
        : html`<ol class="timeline">${generations}</ol>`
    }
<h2>Held candidates</h2>
${held.length === 0 ? html`<p class="muted">None.</p>` : html`<ul>${held}</ul>`}
<h2>Conflicts</h2>
${conflicts.length === 0 ? html`<p class="muted">None.</p>` : html`<ul>${conflicts}</ul>`}`,
  );
}

function answerLine(answer: JsonObject | null): Html {
  if (answer === null) return html`<span class="pill warn">open</span>`;
  const choice = typeof answer.choice === "string" ? answer.choice : "?";
  const at = typeof answer.resolved_at === "string" ? answer.resolved_at : "";
  const status = typeof answer.status === "string" ? answer.status : "";
  return html`
    <span class="pill ok">${status}</span> answered <strong
      class="mono">${choice}</strong>${at === "" ? html`` : html`
        at ${at}
      `}
  `;
}

function candidateMeta(c: CandidateProposal & { outcome: string }): Html {
  return html`
    <dl class="meta">
      <dt>Action</dt>
      <dd>${c.operation}</dd>
      <dt>Run</dt>
      <dd>${runLink(c.run_id)} · ${untrusted(c.actor)}</dd>
      <dt>Staged</dt>
      <dd>${c.created_at}</dd>
      <dt>Base</dt>
      <dd class="mono">${revisionName(c.base_revision)}</dd>
      <dt>Metadata</dt>
      <dd>Tier ${c.tier}${c.tier === 2
        ? html`; importance ${c.importance}; ${c.status}`
        : html``}; source ${c.source}; trust ${c.trust}</dd>
      <dt>Rationale</dt>
      <dd class="text">${untrusted(c.rationale)}</dd>
      <dt>Decision</dt>
      <dd>${c.outcome}</dd>
    </dl>
  `;
}

const CATEGORY_TITLES: Record<string, string> = {
  concurrent: "Concurrent conflict",
  legacy: "Legacy review",
  recovery: "Recovery review",
  satisfied: "Already satisfied",
};

function questionCard(frame: Frame, q: Question): Html {
  const c = q.conflict;
  const liveText = q.live?.entry.text ?? "";
  const liveBy = q.liveBy === null
    ? html``
    : html`<p class="when">Written by run ${runLink(q.liveBy.run)} · ${
      untrusted(q.liveBy.actor)
    }</p>`;
  const live = html`
    <div
      class="side live"><h3><span>Live value</span><span class="pill">keep current</span></h3>${q
          .live === null
        ? html`<p class="muted">${
          q.evidence === null
            ? "Absent from current memory."
            : "Accepted memory stays authoritative: bimri.md was already restored from it. Re-submit anything the edit meant as proposals."
        }</p>`
        : entryBlock(q.live)}${liveBy}</div>
  `;
  const sides = q.candidates.map((cand) => {
    const proposed = cand.operation === "close"
      ? html`<p class="value muted">Remove this subject (the exact line is kept in the archive).</p>`
      : cand.operation === "touch"
      ? html`<p class="value muted">Keep the value; refresh its recency for run ${cand.run_id}.</p>`
      : html`
        <p class="value text">${untrusted(cand.text)}</p>
        <div class="diff text"
          aria-label="Difference from the live value"><span class="label">Against live: </span>${diffHtml(
            liveText,
            cand.text,
          )}</div>
      `;
    return html`
      <div
        class="side"><h3><span class="mono">${cand
          .proposal_id}</span><span class="pill">${actionName(
            cand.operation,
            c.current_line !== null,
          )}</span></h3>${proposed}${candidateMeta(cand)}</div>
    `;
  });
  const answerable = q.category !== "satisfied";
  let actions = html``;
  if (answerable && frame.readOnly) {
    actions = html`
      <p
        class="muted">Read-only console. To answer in a terminal: <code>bimri resolve ${c
          .conflict_id} --choose &lt;${q.candidates.map((x) => x.proposal_id).join(
            "|",
          )}${q.candidates.length > 0 ? "|" : ""}current|dismiss&gt; --human-approved</code></p>
    `;
  } else if (answerable) {
    const choices: [string, string, string][] = [
      ...q.candidates.map((x) =>
        [x.proposal_id, `Choose ${x.proposal_id}`, ""] as [string, string, string]
      ),
      ["current", "Keep current", "secondary"],
      ["dismiss", "Dismiss", "secondary"],
    ];
    actions = html`<form method="post" action="/inbox/${c.conflict_id}/confirm" class="choices">
<input type="hidden" name="csrf" value="${frame.csrf}">
<input type="hidden" name="seen" value="${q.seen}">
${
      choices.map(([value, label, tone]) =>
        html`<button type="submit" name="choose" value="${value}" class="${tone}">${label}</button>`
      )
    }
</form>`;
  }
  return html`<article class="card question" id="${c.conflict_id}" aria-labelledby="${c.conflict_id}-h">
<header><h2 id="${c.conflict_id}-h"><a class="mono" href="/inbox/${c.conflict_id}">${c.conflict_id}</a> · ${q.label}</h2>
<span>${keyLink(c.key)}</span><span class="pill">${
    CATEGORY_TITLES[q.category]
  }</span><span class="when">raised ${c.created_at}</span></header>
${c.question === "" ? html`` : html`<p class="muted text">${untrusted(c.question)}</p>`}
<div class="sides">${live}${sides}${q.evidence === null ? html`` : evidenceSide(q.evidence)}</div>
${actions}
</article>`;
}

function evidenceSide(e: Evidence): Html {
  const lines = (items: string[], tag: "ins" | "del") =>
    items.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<ul class="lines">${
        items.map((line) =>
          tag === "ins"
            ? html`
              <li>
                <ins>${line}</ins>
              </li>
            `
            : html`
              <li>
                <del>${line}</del>
              </li>
            `
        )
      }</ul>`;
  return html`<div class="side"><h3><span>Preserved edit</span></h3>
<p class="mono">${e.file}</p>
${
    e.unreadable
      ? html`<p class="notice bad">The preserved file cannot be read here; open it in a terminal.</p>`
      : html`<p class="label">Lines only in the edit</p>${lines(e.onlyEdit, "ins")}
<p class="label">Lines only in accepted memory</p>${lines(e.onlyAccepted, "del")}`
  }</div>`;
}

function heldItem(h: HeldQuestion): Html {
  return html`
    <li>
      <div>${keyLink(h.row.key)} · <span class="mono">${h.row.id}</span> · run ${runLink(
        h.row.run,
      )} (${untrusted(h.row.actor)})</div>
      <div class="text">${untrusted(h.row.text)}</div>
      <div class="muted">${h.message}</div>
    </li>
  `;
}

/** A replica whose records wait for the owner's trust; answered in a terminal, never here. */
function trustItem(q: TrustQuestion): Html {
  if (q.fingerprint === null || (q.standing !== "new" && q.standing !== "rekeyed")) {
    return html`
      <li>
        <div class="text">${untrusted(q.text)}</div>
      </li>
    `;
  }
  const answer = (verb: string) =>
    html`
      <code
        class="command">bimri share ${verb} ${q.replica} --fingerprint ${q
          .fingerprint} --human-approved</code>
    `;
  const records = q.waiting === 1 ? "1 record waits" : `${q.waiting} records wait`;
  return html`
    <li>
      <div><span class="mono">${q.replica}</span> · ${q.standing === "new"
        ? "new replica"
        : html`<span class="pill warn">changed its key</span>`} · ${records}</div>
      <dl class="meta">
        <dt>Says it is</dt><dd>${untrusted(q.actor ?? "unknown")} on ${untrusted(
          q.host ?? "unknown",
        )} (unverified)</dd>
        <dt>Key fingerprint</dt><dd class="mono">${q.fingerprint}</dd>
        ${q.fromSeq !== null && q.fromSeq > 1
          ? html`
            <dt>Signs</dt>
            <dd>records from ${q.fromSeq} on; those before are unsigned</dd>
          `
          : html``}
      </dl>
      <p class="muted">Check the fingerprint with that teammate (not through the repository), then answer in a terminal. To trust:</p>
      ${answer("trust")}
      <p class="muted">To refuse it:</p>
      ${answer("distrust")}
    </li>
  `;
}

/** Held candidates listed in the inbox (the Memory page lists them all). */
const HELD_SHOWN = 50;

/** The Review inbox (or one question of it). */
export function inboxPage(frame: Frame, inbox: Inbox, flash: Html | null, single?: string): string {
  const questions = inbox.questions.map((q) => questionCard(frame, q));
  return page(
    frame,
    single ? `Question ${single}` : "Review inbox",
    "/inbox",
    html`<h1>${single ? html`Question <span class="mono">${single}</span>` : "Review inbox"}</h1>
${flash ?? html``}
${
      questions.length === 0
        ? html`<p class="notice ok">No open conflict or review.${
          inbox.trust.length === 0 ? " Memory is settled." : ""
        }</p>`
        : join(questions)
    }
${
      inbox.trust.length === 0 ? html`` : html`
        <section class="card" aria-labelledby="trust-h">
          <h2 id="trust-h">Replicas waiting for your trust (${inbox.trust.length})</h2>
          <p
            class="muted">Their records change nothing here until you decide. Trust is granted only in a terminal, by you: not from this page, and not by an agent.</p>
          <ul class="trust">${inbox.trust.map(trustItem)}</ul>
        </section>
      `
    }
${
      single ? html`<p><a href="/inbox">Back to the inbox</a></p>` : html`
        <h2>Held candidates (${inbox.held.length})</h2>
        <p
          class="muted">Held candidates change nothing until an owner states the fact directly (for example through an agent told by you); they need no answer here.</p>
        ${inbox.held.length === 0
          ? html`<p class="muted">None.</p>`
          : html`<ul>${inbox.held.slice(0, HELD_SHOWN).map(heldItem)}</ul>${
            inbox.held.length > HELD_SHOWN
              ? html`<p><a href="/memory?location=HELD">All ${inbox.held.length} held candidates</a></p>`
              : html``
          }`}
      `
    }`,
  );
}

/** What one choice does, in the owner's words. */
export function choiceMeaning(q: Question, choice: string): string {
  if (choice === "current") {
    return "Keep the live value unchanged. Every candidate of this question is closed as no change.";
  }
  if (choice === "dismiss") return "Close this question without changing memory.";
  const c = q.candidates.find((x) => x.proposal_id === choice);
  if (!c) return "This is not one of the question's candidates.";
  if (c.operation === "close") {
    return `Remove ${q.conflict.key} from memory (the exact line is archived).`;
  }
  if (c.operation === "touch") return "Keep the value and refresh its recency.";
  return `Write the candidate's value to ${q.conflict.key}, with confirmed trust (source ${c.source} stays).`;
}

/** The confirmation step: the owner states that they chose this answer. */
export function confirmPage(frame: Frame, q: Question, choice: string): string {
  const c = q.conflict;
  const cand = q.candidates.find((x) => x.proposal_id === choice);
  return page(
    frame,
    `Confirm ${c.conflict_id}`,
    "/inbox",
    html`<h1>Confirm your answer to <span class="mono">${c.conflict_id}</span></h1>
<section class="card">
<dl class="meta"><dt>Subject</dt><dd>${keyLink(c.key)}</dd>
<dt>Your choice</dt><dd><strong class="mono">${choice}</strong></dd>
<dt>What it does</dt><dd>${choiceMeaning(q, choice)}</dd></dl>
${
      cand && cand.operation === "set"
        ? html`<div class="diff text">${diffHtml(q.live?.entry.text ?? "", cand.text)}</div>`
        : html``
    }
<form method="post" action="/inbox/${c.conflict_id}/resolve">
<input type="hidden" name="csrf" value="${frame.csrf}">
<input type="hidden" name="seen" value="${q.seen}">
<input type="hidden" name="choose" value="${choice}">
<p><label><input type="checkbox" name="approved" value="yes" required> I am the owner of this memory and I chose this answer myself.</label></p>
<p class="muted">Recording it is exactly <code>bimri resolve ${c.conflict_id} --choose ${choice} --human-approved</code>: an attestation that you chose it.</p>
<div class="choices"><button type="submit" name="confirm" value="yes">Record this answer</button>
<a class="button secondary" href="/inbox/${c.conflict_id}">Cancel</a></div>
</form></section>`,
  );
}

/** The page after an answer: the recorded answer, or the engine's refusal. */
export function answeredPage(
  frame: Frame,
  id: string,
  answer: JsonObject | null,
  message: Html,
): string {
  return page(
    frame,
    `Answer ${id}`,
    "/inbox",
    html`<h1>Question <span class="mono">${id}</span></h1>
${message}
<section class="card"><h2>Recorded answer</h2><p>${answerLine(answer)}</p>${
      answer === null
        ? html``
        : html`<dl class="meta">${
          Object.keys(answer).sort().map((name) =>
            html`
              <dt>${name}</dt>
              <dd class="mono">${typeof answer[name] === "string"
                ? String(answer[name])
                : JSON.stringify(answer[name])}</dd>
            `
          )
        }</dl>`
    }</section>
<p><a href="/inbox">Back to the inbox</a></p>`,
  );
}

/** The Runs list. */
export function runsPage(frame: Frame, p: RunsPage, offset: number, limit: number): string {
  const rows = p.runs.map((a) =>
    html`
      <tr>
        <td>${runLink(a.run)}</td>
        <td>${untrusted(a.actor)}</td>
        <td class="opt when">${a.startedAt}</td>
        <td>${outcomePill(a.outcome, a.closed)}${p.orphans.includes(a.run)
          ? html`
            <span class="pill bad" title="inactive for over 24 hours; never auto-closed">orphan candidate</span>
          `
          : html``}</td>
        <td class="opt">${a.proposals.length}</td>
      </tr>
    `
  );
  const pagerNav = pager("/runs", {}, offset, limit, p.total, ["Newer", "Older"]);
  return page(
    frame,
    "Runs",
    "/runs",
    html`
      <h1>Runs</h1>
      <p
        class="muted">${p.total} runs · ${p.active.size} active · ${p.orphans
          .length} orphan candidates · newest first</p>
      ${dataTable(["Run", "Actor", "*Started", "State", "*Proposals"], rows)}
      <nav class="pager" aria-label="Pages">${pagerNav}</nav>
    `,
  );
}

function logItem(line: LogLine): Html {
  switch (line.kind) {
    case "journal":
      return html`
        <li>
          <div><span class="pill">journal</span> <span class="mono">${line
            .id}</span> <span class="muted">importance ${line.importance}</span></div>
          <div class="text">${longText(line.text)}</div>
        </li>
      `;
    case "propose":
      return html`
        <li>
          <div><span class="pill">proposal</span> <span class="mono">${line.id}</span> ${line
            .operation} ${keyLink(line.key)} · decision: <strong>${line.outcome}</strong></div>
          <div class="text">${untrusted(line.text)}</div>
        </li>
      `;
    case "outcome":
      return html`
        <li>
          <div>${outcomePill(line.outcome, true)} summary</div>
          <div class="text">${longText(line.text)}</div>
        </li>
      `;
    case "closed":
      return html`
        <li class="current">
          <div><span class="pill">closed</span> <span class="when">${line.at}</span></div>
        </li>
      `;
    default:
      return html`
        <li>
          <div class="text muted">${untrusted(line.text)}</div>
        </li>
      `;
  }
}

/** One run's log as a timeline. */
export function runPage(frame: Frame, run: string, t: RunTimeline): string {
  const h = t.header;
  return page(
    frame,
    `Run ${run}`,
    "/runs",
    html`
      <h1>Run <span class="mono">${run}</span></h1>
      <section class="card">
        <dl class="meta">
          <dt>Actor</dt>
          <dd>${untrusted(h?.actor ?? "")}</dd>
          <dt>Started</dt>
          <dd>${h?.startedAt ?? ""}</dd>
          <dt>Base</dt>
          <dd class="mono">${h?.base ?? ""}</dd>
          <dt>State</dt>
          <dd>${outcomePill(t.activity.outcome, t.activity.closed)}</dd>
        </dl>
      </section>
      <h2>Log</h2>
      ${t.lines.length === 0
        ? html`<p class="muted">Nothing logged yet.</p>`
        : html`<ol class="timeline">${t.lines.map(logItem)}</ol>`}
    `,
  );
}

/** The read-only audit's findings. */
export type HealthView = { passed: boolean; errors: string[]; warnings: string[] };

/** The next step for one audit finding. */
export function nextStep(finding: string): string {
  const said = /(?:;|\.)\s*((?:run|Run|use|Use|restore|Restore|resolve|Resolve)\b[^.]*)\.?$/.exec(
    finding,
  );
  if (said) return said[1].charAt(0).toUpperCase() + said[1].slice(1) + ".";
  if (/authority recovery needed/i.test(finding)) {
    return "Run `bimri status` for the recovery block, then follow its quarantine/restore steps.";
  }
  return "Run `bimri doctor` in a terminal for the full report.";
}

/** The Health page. */
export function healthPage(frame: Frame, h: HealthView): string {
  const list = (items: string[]) =>
    dataTable(
      ["Finding", "Next step"],
      items.map((item) =>
        html`
          <tr>
            <td class="text">${untrusted(item)}</td>
            <td>${nextStep(item)}</td>
          </tr>
        `
      ),
    );
  return page(
    frame,
    "Health",
    "/health",
    html`
      <h1>Health</h1>
      <p
        class="notice ${h.passed ? "ok" : "bad"}"><strong>${h.passed
          ? "Audit passed."
          : "Audit failed."}</strong> The read-only audit (<code>bimri doctor --read-only</code>) wrote nothing.</p>
      <h2>Errors (${h.errors.length})</h2>${h.errors.length === 0
        ? html`<p class="muted">None.</p>`
        : list(h.errors)}
      <h2>Warnings (${h.warnings.length})</h2>${h.warnings.length === 0
        ? html`<p class="muted">None.</p>`
        : list(h.warnings)}
    `,
  );
}

/** A small page for refusals and missing things. */
export function messagePage(frame: Frame, title: string, message: Html): string {
  return page(
    frame,
    title,
    "",
    html`<h1>${title}</h1>${message}<p><a href="/">Back to the overview</a></p>`,
  );
}
