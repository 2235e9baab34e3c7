/**
 * The retrieval benchmark's data: the memory of a realistic payments web
 * service (64 subjects, tiers 1 and 2, two of them with a replaced earlier
 * generation in history) and 67 questions phrased the way an agent asks in
 * the middle of a task, each with the key(s) that answer it.
 *
 * Written for this benchmark, before the ranking was changed, and not edited
 * to suit it afterwards. The split is fixed: questions at even positions (0,
 * 2, 4, ...) form the tuning half, odd positions the held-out half, which is
 * scored only to report the final figures (never to tune the ranking).
 */

/** One memory subject as the benchmark proposes it. */
export type BenchEntry = {
  key: string;
  tier: 1 | 2;
  /** Tier 1: decision, fact, pref or rule. */
  kind?: "decision" | "fact" | "pref" | "rule";
  /** Tier 2: 1 through 5. */
  importance?: number;
  tags: string[];
  text: string;
  /** Earlier generations, oldest first: proposed and synced before `text`, so they end in history. */
  earlier?: string[];
};

/** One question and the keys that answer it (any of them counts as found). */
export type BenchQuestion = { q: string; expect: string[] };

/** The project memory. */
export const ENTRIES: BenchEntry[] = [
  {
    key: "payments.idempotency-key",
    tier: 1,
    kind: "rule",
    tags: ["payments", "stripe"],
    text:
      "Every charge retry must reuse the original idempotency key; a new key makes the provider charge the card again.",
  },
  {
    key: "payments.retry-policy",
    tier: 1,
    kind: "rule",
    tags: ["payments", "http"],
    text:
      "Provider calls are retried at most 3 times with exponential backoff (200 ms, 800 ms, 3.2 s), only on 429, 502, 503 and network timeouts.",
  },
  {
    key: "db.postgres-version",
    tier: 1,
    kind: "fact",
    tags: ["database", "infra"],
    text: "Production runs PostgreSQL 16.4 on RDS; staging stays on 15.7 until the March upgrade.",
    earlier: ["Production runs PostgreSQL 14.9 on RDS; staging runs 15.7 as an upgrade trial."],
  },
  {
    key: "db.migrations",
    tier: 1,
    kind: "rule",
    tags: ["database", "sqitch"],
    text:
      "Schema migrations run with sqitch from db/migrations; every migration must stay backward compatible with the previous release because deploys are rolling.",
  },
  {
    key: "db.connection-pool",
    tier: 1,
    kind: "fact",
    tags: ["database", "pgbouncer"],
    text:
      "The API connects through pgbouncer in transaction mode, pool size 40 per pod; prepared statements are disabled for that reason.",
  },
  {
    key: "deploy.process",
    tier: 1,
    kind: "rule",
    tags: ["deploy", "argocd"],
    text:
      "Merging to main builds the image and staging syncs automatically; production needs a manual sync in the ArgoCD UI after the smoke tests pass.",
  },
  {
    key: "deploy.rollback",
    tier: 1,
    kind: "rule",
    tags: ["deploy", "argocd"],
    text:
      "To undo a bad release, re-sync the previous image tag in ArgoCD; never revert a migration in place, ship a forward fix instead.",
  },
  {
    key: "deploy.freeze",
    tier: 2,
    importance: 4,
    tags: ["deploy", "calendar"],
    text:
      "Change freeze from December 20 to January 3: only hotfixes approved by the on-call lead go to production.",
  },
  {
    key: "flags.provider",
    tier: 1,
    kind: "fact",
    tags: ["feature-flags", "launchdarkly"],
    text:
      "Feature flags live in LaunchDarkly; server code reads them through lib/flags.ts, which falls back to the default value when the SDK is offline.",
  },
  {
    key: "flags.cleanup",
    tier: 1,
    kind: "rule",
    tags: ["feature-flags"],
    text:
      "A flag fully rolled out for two weeks must be removed with its code path in the next sprint; make flags-report lists the stale ones.",
  },
  {
    key: "flags.new-checkout",
    tier: 2,
    importance: 3,
    tags: ["feature-flags", "checkout"],
    text:
      "The new-checkout flag serves 25% of EU traffic; ramp to 50% only after the conversion dashboard shows no drop for 3 days.",
    earlier: ["The new-checkout flag serves 10% of EU traffic while conversion is compared."],
  },
  {
    key: "auth.session-tokens",
    tier: 1,
    kind: "fact",
    tags: ["auth", "redis"],
    text:
      "Web sessions use opaque tokens stored in Redis with a 12 hour sliding expiry; the mobile app uses 15 minute JWT access tokens plus refresh tokens.",
  },
  {
    key: "auth.jwt-signing",
    tier: 1,
    kind: "fact",
    tags: ["auth", "jwt"],
    text:
      "JWTs are signed with RS256; signing keys rotate every 90 days and the JWKS endpoint serves the current and the previous key.",
  },
  {
    key: "auth.mfa",
    tier: 1,
    kind: "rule",
    tags: ["auth", "admin"],
    text:
      "Admin accounts require TOTP two-factor authentication; support staff cannot disable it, only the security team can.",
  },
  {
    key: "auth.password-hashing",
    tier: 1,
    kind: "rule",
    tags: ["auth", "security"],
    text:
      "Passwords are hashed with argon2id (64 MiB memory, 3 iterations); never log or compare raw passwords.",
  },
  {
    key: "ci.pipeline",
    tier: 1,
    kind: "fact",
    tags: ["ci", "github-actions"],
    text:
      "GitHub Actions runs lint, unit tests, integration tests against a postgres service container, then the Docker build; the whole pipeline takes about 14 minutes.",
  },
  {
    key: "ci.flaky-tests",
    tier: 2,
    importance: 3,
    tags: ["ci", "tests"],
    text:
      "test_refund_webhook_ordering is flaky because it depends on webhook arrival order; it is quarantined with @flaky and tracked in PAY-412.",
  },
  {
    key: "ci.required-checks",
    tier: 1,
    kind: "rule",
    tags: ["ci", "github"],
    text:
      "Branch protection on main requires the lint, unit and integration checks plus one approving review; admins cannot bypass it.",
  },
  {
    key: "webhooks.signature",
    tier: 1,
    kind: "rule",
    tags: ["webhooks", "stripe", "security"],
    text:
      "Incoming Stripe webhooks must be verified with the signing secret before the body is parsed; reject events older than 5 minutes.",
  },
  {
    key: "webhooks.ordering",
    tier: 1,
    kind: "fact",
    tags: ["webhooks", "stripe"],
    text:
      "Webhook events can arrive out of order and more than once; handlers look up the event id in processed_events and ignore duplicates.",
  },
  {
    key: "refunds.partial",
    tier: 1,
    kind: "fact",
    tags: ["refunds", "ledger"],
    text:
      "Partial refunds are allowed up to the captured amount; each refund writes a ledger row with a negative amount and the original charge id.",
  },
  {
    key: "ledger.double-entry",
    tier: 1,
    kind: "rule",
    tags: ["ledger", "accounting"],
    text:
      "The ledger is double-entry: every money movement writes a debit and a credit in one transaction, and each transaction must sum to zero.",
  },
  {
    key: "money.minor-units",
    tier: 1,
    kind: "rule",
    tags: ["money", "currency"],
    text:
      "Amounts are stored as integer minor units (cents) with an ISO 4217 currency code; never use floating point numbers for money.",
  },
  {
    key: "payouts.schedule",
    tier: 1,
    kind: "fact",
    tags: ["payouts", "scheduler"],
    text:
      "Merchant payouts run daily at 02:00 UTC for balances older than T+2; the job is payouts:daily in the scheduler.",
  },
  {
    key: "observability.logging",
    tier: 1,
    kind: "rule",
    tags: ["observability", "logs", "security"],
    text:
      "Logs are structured JSON through pino; include request_id and merchant_id, and never log card numbers, CVV or full tokens.",
  },
  {
    key: "observability.metrics",
    tier: 1,
    kind: "fact",
    tags: ["observability", "prometheus", "grafana"],
    text:
      "Metrics go to Prometheus with Grafana dashboards; the payments dashboard tracks authorization rate, p95 latency and provider error rate.",
  },
  {
    key: "observability.tracing",
    tier: 2,
    importance: 2,
    tags: ["observability", "opentelemetry"],
    text:
      "OpenTelemetry tracing is on for the API and the workers at 10% sampling; checkout spans are always sampled.",
  },
  {
    key: "oncall.escalation",
    tier: 1,
    kind: "fact",
    tags: ["oncall", "pagerduty"],
    text:
      "PagerDuty pages the payments on-call engineer; without an acknowledgement within 10 minutes it escalates to the engineering manager.",
  },
  {
    key: "incidents.double-charge-2024",
    tier: 2,
    importance: 5,
    tags: ["incident", "payments"],
    text:
      "Incident 2024-11: customers were billed twice because the retry worker generated a fresh idempotency key after a timeout; fixed by persisting the key before the first attempt.",
  },
  {
    key: "queue.workers",
    tier: 1,
    kind: "fact",
    tags: ["queue", "bullmq", "redis"],
    text:
      "Background jobs run on BullMQ backed by Redis; each queue has its own worker deployment and moves a job to a dead-letter queue after 5 failed attempts.",
  },
  {
    key: "cache.redis",
    tier: 1,
    kind: "fact",
    tags: ["redis", "infra"],
    text:
      "Redis 7 on ElastiCache holds the session store, rate limiting and the BullMQ queues; it is not a source of truth and may be flushed.",
  },
  {
    key: "api.rate-limits",
    tier: 1,
    kind: "fact",
    tags: ["api", "redis"],
    text:
      "The public API allows 100 requests per second per API key with a burst of 200, enforced in Redis with a sliding window.",
  },
  {
    key: "api.versioning",
    tier: 1,
    kind: "rule",
    tags: ["api"],
    text:
      "Public API versions are dated (2024-06-01); a breaking change needs a new version and old versions stay supported for 12 months.",
  },
  {
    key: "api.errors",
    tier: 1,
    kind: "rule",
    tags: ["api"],
    text:
      "API errors use the problem+json format with a stable type URI and a machine-readable code; never return stack traces to clients.",
  },
  {
    key: "api.pagination",
    tier: 1,
    kind: "fact",
    tags: ["api"],
    text:
      "List endpoints use cursor pagination with starting_after and a limit of at most 100; offset pagination is not supported.",
  },
  {
    key: "secrets.management",
    tier: 1,
    kind: "rule",
    tags: ["secrets", "aws", "security"],
    text:
      "Secrets live in AWS Secrets Manager and are injected as environment variables when the pod starts; never commit .env files.",
  },
  {
    key: "infra.kubernetes",
    tier: 1,
    kind: "fact",
    tags: ["infra", "kubernetes", "aws"],
    text:
      "Services run on EKS in eu-west-1 and us-east-1; each region has its own database and the clusters share nothing.",
  },
  {
    key: "infra.terraform",
    tier: 1,
    kind: "rule",
    tags: ["infra", "terraform"],
    text:
      "Infrastructure changes go through Terraform in the infra repo; plans are reviewed in the PR and applied by the Atlantis bot, never from a laptop.",
  },
  {
    key: "testing.integration",
    tier: 1,
    kind: "fact",
    tags: ["tests", "testcontainers"],
    text:
      "Integration tests start Postgres and Redis with testcontainers and use stripe-mock on port 12111 instead of the real provider.",
  },
  {
    key: "testing.fixtures",
    tier: 2,
    importance: 2,
    tags: ["tests"],
    text:
      "Test data is built with factory functions in tests/factories; do not add rows to the shared seed file.",
  },
  {
    key: "frontend.stack",
    tier: 1,
    kind: "fact",
    tags: ["frontend", "nextjs"],
    text:
      "The merchant dashboard is Next.js 14 with the app router and React Server Components, styled with Tailwind.",
  },
  {
    key: "frontend.i18n",
    tier: 2,
    importance: 2,
    tags: ["frontend", "translations"],
    text:
      "UI strings are in locales/*.json managed through Crowdin; add English strings only, the other languages sync nightly.",
  },
  {
    key: "pci.scope",
    tier: 1,
    kind: "rule",
    tags: ["pci", "security", "compliance"],
    text:
      "Card data never touches our servers: checkout uses Stripe Elements so we stay in PCI SAQ A scope.",
  },
  {
    key: "fraud.radar",
    tier: 2,
    importance: 3,
    tags: ["fraud", "stripe"],
    text:
      "Stripe Radar rules block a card after more than 3 declines in an hour; the manual review queue belongs to the risk team.",
  },
  {
    key: "email.transactional",
    tier: 1,
    kind: "fact",
    tags: ["email", "postmark"],
    text:
      "Receipts and password reset emails go through Postmark; templates are in emails/ and rendered with MJML.",
  },
  {
    key: "subscriptions.billing",
    tier: 1,
    kind: "fact",
    tags: ["subscriptions", "billing"],
    text:
      "Subscriptions bill on the anniversary date; upgrades are prorated immediately but downgrades take effect at the next period.",
  },
  {
    key: "subscriptions.dunning",
    tier: 2,
    importance: 4,
    tags: ["subscriptions", "billing"],
    text:
      "Failed renewals are retried on days 1, 3 and 7; after the last failure the subscription becomes past_due and the customer gets an email.",
  },
  {
    key: "tax.calculation",
    tier: 1,
    kind: "fact",
    tags: ["tax", "stripe"],
    text:
      "Sales tax and VAT are computed by Stripe Tax at checkout; invoices keep the tax breakdown per line item.",
  },
  {
    key: "currency.exchange-rates",
    tier: 1,
    kind: "fact",
    tags: ["currency", "fx"],
    text:
      "Exchange rates come from the ECB feed once a day and are cached; multi-currency charges settle in the merchant's payout currency.",
  },
  {
    key: "runtime.node-version",
    tier: 1,
    kind: "fact",
    tags: ["node", "docker"],
    text: "Services run on Node.js 20 LTS; .nvmrc and the Docker base image are bumped together.",
  },
  {
    key: "code.style",
    tier: 1,
    kind: "pref",
    tags: ["typescript", "style"],
    text:
      "TypeScript strict mode everywhere; prefer named exports and zod schemas at API boundaries.",
  },
  {
    key: "review.conventions",
    tier: 1,
    kind: "pref",
    tags: ["review", "git"],
    text:
      "Pull requests stay under 400 changed lines; titles follow Conventional Commits (feat:, fix:, chore:).",
  },
  {
    key: "release.versioning",
    tier: 1,
    kind: "rule",
    tags: ["release", "git"],
    text:
      "release-please tags semantic versions from the Conventional Commits on main and generates the changelog.",
  },
  {
    key: "backups.database",
    tier: 1,
    kind: "fact",
    tags: ["database", "backups", "aws"],
    text:
      "RDS takes automated snapshots nightly with 14 days retention plus point-in-time recovery; a restore drill runs every quarter.",
  },
  {
    key: "gdpr.erasure",
    tier: 1,
    kind: "rule",
    tags: ["gdpr", "privacy", "compliance"],
    text:
      "An erasure request must anonymize personal data within 30 days; ledger rows are kept but the customer's name and email are replaced.",
  },
  {
    key: "audit.log",
    tier: 1,
    kind: "rule",
    tags: ["audit", "admin", "compliance"],
    text:
      "Every admin action writes an audit_log row with actor, action, target and IP; the table is append-only and rows are never updated.",
  },
  {
    key: "performance.checkout-latency",
    tier: 2,
    importance: 3,
    tags: ["performance", "checkout"],
    text:
      "Checkout p95 target is 800 ms; most of it is the provider authorization call, so keep extra queries out of that path.",
  },
  {
    key: "search.merchants",
    tier: 2,
    importance: 2,
    tags: ["search", "postgres", "admin"],
    text:
      "Merchant search in the admin uses Postgres trigram indexes (pg_trgm); Elasticsearch was removed in 2023.",
  },
  {
    key: "jobs.scheduler",
    tier: 1,
    kind: "fact",
    tags: ["jobs", "cron"],
    text:
      "Scheduled jobs are declared in jobs/schedule.ts and run by the scheduler deployment; only the replica holding the leader lock runs them.",
  },
  {
    key: "local.dev-setup",
    tier: 1,
    kind: "fact",
    tags: ["local", "docker"],
    text:
      "Locally, docker compose up starts Postgres, Redis and stripe-mock, then npm run dev; npm run db:seed loads seed data.",
  },
  {
    key: "disputes.chargebacks",
    tier: 1,
    kind: "fact",
    tags: ["disputes", "stripe", "webhooks"],
    text:
      "Chargebacks arrive as charge.dispute.created webhooks; evidence must be submitted within 7 days through the disputes admin page.",
  },
  {
    key: "http.provider-timeouts",
    tier: 1,
    kind: "rule",
    tags: ["http", "payments"],
    text:
      "Outbound calls to providers have a 10 second timeout and a 2 second connect timeout; the whole checkout request gives up after 25 seconds.",
  },
  {
    key: "team.ownership",
    tier: 2,
    importance: 2,
    tags: ["team", "ownership"],
    text:
      "The payments team owns checkout, ledger and payouts; the platform team owns CI, Kubernetes and Terraform.",
  },
  {
    key: "docs.adr",
    tier: 1,
    kind: "pref",
    tags: ["docs", "architecture"],
    text:
      "Architecture decisions are written as numbered ADRs with a status in docs/adr; link the ADR from the PR that implements it.",
  },
];

/** The questions, in fixed order: even positions tune, odd positions are held out. */
export const QUESTIONS: BenchQuestion[] = [
  {
    q: "why did the customer get charged twice when we retried",
    expect: ["payments.idempotency-key", "incidents.double-charge-2024"],
  },
  { q: "which idempotency key should a retried charge send", expect: ["payments.idempotency-key"] },
  { q: "how many times do we retry a failing provider call", expect: ["payments.retry-policy"] },
  { q: "which postgres version is in production", expect: ["db.postgres-version"] },
  { q: "can I drop a column in the same release as the code change", expect: ["db.migrations"] },
  {
    q: "why are prepared statements not working against the database",
    expect: ["db.connection-pool"],
  },
  { q: "how do I ship this change to production", expect: ["deploy.process"] },
  { q: "how do we roll back a bad release", expect: ["deploy.rollback"] },
  { q: "can I deploy during the holidays", expect: ["deploy.freeze"] },
  { q: "where do feature flags come from in the server code", expect: ["flags.provider"] },
  { q: "when should an old feature flag be deleted", expect: ["flags.cleanup"] },
  { q: "what percentage of traffic sees the new checkout", expect: ["flags.new-checkout"] },
  {
    q: "how long does a web session last before the user is logged out",
    expect: ["auth.session-tokens"],
  },
  { q: "what algorithm signs our JWTs and when do the keys rotate", expect: ["auth.jwt-signing"] },
  { q: "does an admin need two-factor to log in", expect: ["auth.mfa"] },
  { q: "how should user passwords be hashed", expect: ["auth.password-hashing"] },
  { q: "what does the CI pipeline run and how long does it take", expect: ["ci.pipeline"] },
  {
    q: "the refund webhook ordering test failed again, is it a known flaky test",
    expect: ["ci.flaky-tests"],
  },
  { q: "what checks must pass before merging to main", expect: ["ci.required-checks"] },
  { q: "how do we verify that a stripe webhook is genuine", expect: ["webhooks.signature"] },
  {
    q: "what happens when the same webhook event is delivered twice",
    expect: ["webhooks.ordering"],
  },
  { q: "can a merchant refund only part of a payment", expect: ["refunds.partial"] },
  { q: "how are debits and credits recorded when money moves", expect: ["ledger.double-entry"] },
  { q: "should I store the price as a float", expect: ["money.minor-units"] },
  { q: "when do merchants get paid out", expect: ["payouts.schedule"] },
  {
    q: "what fields must every log line include and what must never be logged",
    expect: ["observability.logging"],
  },
  { q: "where can I see the authorization rate dashboard", expect: ["observability.metrics"] },
  { q: "is tracing sampled or do we keep every span", expect: ["observability.tracing"] },
  { q: "who gets paged when payments break at night", expect: ["oncall.escalation"] },
  {
    q: "what caused the double charge incident last year",
    expect: ["incidents.double-charge-2024"],
  },
  {
    q: "what library runs our background jobs and what happens after repeated failures",
    expect: ["queue.workers"],
  },
  { q: "is it safe to flush redis", expect: ["cache.redis"] },
  { q: "what is the rate limit of the public API per key", expect: ["api.rate-limits"] },
  {
    q: "I need a breaking change to an endpoint, how are API versions handled",
    expect: ["api.versioning"],
  },
  { q: "what format should an API error response use", expect: ["api.errors"] },
  { q: "how do list endpoints paginate", expect: ["api.pagination"] },
  { q: "where do I put a new secret for the service", expect: ["secrets.management"] },
  { q: "which AWS regions do we run in", expect: ["infra.kubernetes"] },
  { q: "can I apply terraform from my machine", expect: ["infra.terraform"] },
  {
    q: "what do the integration tests use instead of the real stripe",
    expect: ["testing.integration"],
  },
  { q: "where should I add test data for a new test", expect: ["testing.fixtures"] },
  { q: "which frontend framework does the dashboard use", expect: ["frontend.stack"] },
  { q: "how do I add a translated string to the UI", expect: ["frontend.i18n"] },
  { q: "are we allowed to receive raw card numbers on our backend", expect: ["pci.scope"] },
  { q: "why was this card blocked after a few declines", expect: ["fraud.radar"] },
  { q: "which service sends the password reset email", expect: ["email.transactional"] },
  {
    q: "what happens to the bill when a customer upgrades their plan mid cycle",
    expect: ["subscriptions.billing"],
  },
  {
    q: "what do we do when a subscription renewal payment fails",
    expect: ["subscriptions.dunning"],
  },
  { q: "how is VAT calculated on invoices", expect: ["tax.calculation"] },
  { q: "where do currency exchange rates come from", expect: ["currency.exchange-rates"] },
  { q: "which node version should the Dockerfile use", expect: ["runtime.node-version"] },
  { q: "should I use default exports in typescript modules", expect: ["code.style"] },
  {
    q: "how big can a pull request be and how should the title look",
    expect: ["review.conventions"],
  },
  {
    q: "how is the changelog and version number produced for a release",
    expect: ["release.versioning"],
  },
  { q: "how far back can we restore the database from backups", expect: ["backups.database"] },
  {
    q: "a customer asked us to delete their personal data, what do we have to do",
    expect: ["gdpr.erasure"],
  },
  { q: "do admin actions need to be recorded somewhere", expect: ["audit.log"] },
  { q: "what is the latency budget for checkout", expect: ["performance.checkout-latency"] },
  { q: "do we use elasticsearch for merchant search", expect: ["search.merchants"] },
  { q: "where are cron jobs defined", expect: ["jobs.scheduler"] },
  { q: "how do I run the service locally", expect: ["local.dev-setup"] },
  { q: "how long do we have to respond to a chargeback", expect: ["disputes.chargebacks"] },
  {
    q: "what timeout should the http client use for provider calls",
    expect: ["http.provider-timeouts"],
  },
  { q: "which team owns the kubernetes cluster", expect: ["team.ownership"] },
  { q: "where are architecture decisions documented", expect: ["docs.adr"] },
  { q: "idempotency retries", expect: ["payments.idempotency-key"] },
  { q: "how do retries work", expect: ["payments.retry-policy", "payments.idempotency-key"] },
];

/** The questions of one half ("tuning": even positions, "held-out": odd positions). */
export function half(name: "tuning" | "held-out"): BenchQuestion[] {
  return QUESTIONS.filter((_, i) => (i % 2 === 0) === (name === "tuning"));
}
