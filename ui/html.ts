/**
 * Safe HTML building for the owner's console: every interpolated value is
 * escaped unless it is already built HTML, and untrusted memory text is first
 * made visible (bidi overrides, zero-width and control characters shown as
 * `\uXXXX`). Pure: no I/O.
 */
import { visible } from "../engine/model/visible.ts";

/** HTML that is already safe to emit (built by `html` or from constants). */
export class Html {
  /** Wraps markup that is known to be safe. */
  constructor(readonly markup: string) {}
  /** The markup. */
  toString(): string {
    return this.markup;
  }
}

/** A value `html` accepts between its literal parts. */
export type HtmlValue = Html | string | number | boolean | null | undefined | HtmlValue[];

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Escapes `text` for HTML text and attribute values (quoted). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (ch) => ESCAPES[ch]);
}

/** Untrusted text (memory, summaries, actor names) as safe, visible HTML text. */
export function untrusted(text: string): Html {
  return new Html(escapeHtml(visible(text)));
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  if (value === true) return "";
  // Every string goes through visible(): no interpolated string can carry a bidi override.
  return escapeHtml(visible(String(value)));
}

/** Tagged template: literal parts are trusted markup, every value is escaped. */
export function html(parts: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = parts[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + parts[i + 1];
  return new Html(out);
}

/** Joins built HTML fragments. */
export function join(items: readonly Html[], separator = ""): Html {
  return new Html(items.map((item) => item.markup).join(separator));
}

/** A query-string URL built from a path and parameters (values encoded; empty ones left out). */
export function urlWith(path: string, params: Record<string, string | number | undefined>): string {
  const query = Object.entries(params)
    .filter(([, value]) => value !== undefined && value !== "")
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .join("&");
  return query === "" ? path : `${path}?${query}`;
}

/** One piece of a word diff: kept, added or removed text. */
export type DiffPart = { kind: "same" | "add" | "del"; text: string };

/** Largest word-count product diffed word by word; longer texts show as replaced whole. */
const DIFF_CELLS = 250_000;

/**
 * A word diff of `before` -> `after` (longest common subsequence over words
 * and the spaces between them), with neighbouring parts of a kind merged.
 */
export function wordDiff(before: string, after: string): DiffPart[] {
  const a = before.split(/(\s+)/).filter((t) => t !== "");
  const b = after.split(/(\s+)/).filter((t) => t !== "");
  if (a.length * b.length > DIFF_CELLS) {
    return merge([{ kind: "del", text: before }, { kind: "add", text: after }]);
  }
  // lcs[i][j]: common length of a[i:] and b[j:].
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j]
        ? lcs[(i + 1) * width + j + 1] + 1
        : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  const parts: DiffPart[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      parts.push({ kind: "same", text: a[i] });
      i++;
      j++;
    } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
      parts.push({ kind: "del", text: a[i++] });
    } else {
      parts.push({ kind: "add", text: b[j++] });
    }
  }
  while (i < a.length) parts.push({ kind: "del", text: a[i++] });
  while (j < b.length) parts.push({ kind: "add", text: b[j++] });
  return merge(parts);
}

function merge(parts: DiffPart[]): DiffPart[] {
  const out: DiffPart[] = [];
  for (const part of parts) {
    if (part.text === "") continue;
    const last = out[out.length - 1];
    if (last && last.kind === part.kind) last.text += part.text;
    else out.push({ ...part });
  }
  return out;
}

/** A word diff as HTML: `<del>` and `<ins>` around changed words, untrusted text escaped. */
export function diffHtml(before: string, after: string): Html {
  return join(
    wordDiff(before, after).map((part) => {
      if (part.kind === "same") return untrusted(part.text);
      const tag = part.kind === "add" ? "ins" : "del";
      return html`<${new Html(tag)}>${part.text}</${new Html(tag)}>`;
    }),
  );
}
