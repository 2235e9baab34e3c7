/**
 * The console's only assets, as TypeScript strings so that `deno run` from a
 * URL, `deno bundle` and `deno compile` all carry them: one stylesheet and
 * one script (served from this server; nothing comes from the network).
 */

/** The stylesheet: calm, readable at 200% zoom, light and dark, 390 px wide and up. */
export const STYLE_CSS = `
:root {
  color-scheme: light dark;
  --bg: #f6f7f9; --panel: #ffffff; --ink: #1c2430; --muted: #5b6573; --line: #dde2e8;
  --accent: #1f4e79; --accent-ink: #ffffff; --accent-soft: #e7eef6;
  --ok: #1d6b43; --warn: #8a5a00; --bad: #a12a2a; --ins: #dff3e6; --del: #fbe3e3;
  --focus: #2f7ad8;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #12161c; --panel: #1a2028; --ink: #e6eaef; --muted: #a3adb9; --line: #2c3440;
    --accent: #7fb0e0; --accent-ink: #0e1520; --accent-soft: #1f2c3b;
    --ok: #6fcf97; --warn: #e0b45a; --bad: #f08a8a; --ins: #183a26; --del: #44201f;
    --focus: #8cc2ff;
  }
}
* { box-sizing: border-box; }
html { font-size: 100%; -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
a { color: var(--accent); text-underline-offset: 2px; }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px;
}
.skip { position: absolute; left: -999px; top: 0; }
.skip:focus { left: 1rem; top: 1rem; background: var(--panel); padding: .5rem 1rem; z-index: 2; }
header.top {
  background: var(--panel); border-bottom: 1px solid var(--line);
}
.top-inner { max-width: 72rem; margin: 0 auto; padding: .75rem 1.25rem; display: flex;
  flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; }
.brand { font-weight: 650; letter-spacing: .02em; color: var(--ink); text-decoration: none; }
.brand small { font-weight: 400; color: var(--muted); margin-left: .4rem; }
nav.main ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem; }
nav.main a { display: inline-block; padding: .35rem .7rem; border-radius: .4rem; text-decoration: none;
  color: var(--ink); }
nav.main a[aria-current="page"] { background: var(--accent-soft); color: var(--accent); font-weight: 600; }
nav.main a:hover { background: var(--accent-soft); }
.badge { display: inline-block; min-width: 1.4em; padding: 0 .4em; margin-left: .3em; border-radius: 1em;
  background: var(--bad); color: #fff; font-size: .8em; text-align: center; font-weight: 600; }
.badge.zero { background: var(--line); color: var(--muted); }
.mode { margin-left: auto; color: var(--muted); font-size: .875rem; }
main { max-width: 72rem; margin: 0 auto; padding: 1.25rem; }
h1 { font-size: 1.5rem; font-weight: 600; margin: .25rem 0 1rem; }
h2 { font-size: 1.125rem; font-weight: 600; margin: 1.5rem 0 .75rem; }
h3 { font-size: 1rem; font-weight: 600; margin: 0 0 .5rem; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); }
.card > h2:first-child { margin-top: 0; }
details summary { cursor: pointer; color: var(--accent); }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: .6rem; padding: 1rem 1.1rem; }
.figure { font-size: 1.6rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.label { color: var(--muted); font-size: .875rem; }
.muted { color: var(--muted); }
.meter { margin: .6rem 0; }
.meter .row { display: flex; justify-content: space-between; gap: 1rem; font-size: .875rem; }
.bar { height: .55rem; background: var(--line); border-radius: .3rem; overflow: hidden; margin-top: .25rem; }
.bar span { display: block; height: 100%; background: var(--accent); border-radius: .3rem; }
.bar span.high { background: var(--warn); }
.bar span.over { background: var(--bad); }
table { width: 100%; border-collapse: collapse; background: var(--panel); font-size: .9375rem; }
th, td { text-align: left; padding: .55rem .7rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: .8125rem; text-transform: uppercase; letter-spacing: .04em; }
.table-wrap { border: 1px solid var(--line); border-radius: .6rem; overflow-x: auto; }
.text { overflow-wrap: anywhere; word-break: break-word; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .875em;
  overflow-wrap: anywhere; }
.pill { display: inline-block; padding: 0 .5em; border-radius: 1em; border: 1px solid var(--line);
  font-size: .8125rem; color: var(--muted); white-space: nowrap; }
.pill.ok { color: var(--ok); border-color: currentColor; }
.pill.warn { color: var(--warn); border-color: currentColor; }
.pill.bad { color: var(--bad); border-color: currentColor; }
.pill.wrap { white-space: normal; }
form.filters { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin-bottom: 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .8125rem; color: var(--muted); gap: .2rem; }
input, select, button { font: inherit; color: inherit; }
input[type=search], select { background: var(--panel); border: 1px solid var(--line); border-radius: .4rem;
  padding: .4rem .55rem; min-height: 2.4rem; }
input[type=search] { min-width: min(22rem, 100%); }
button, .button { display: inline-block; border: 1px solid var(--accent); background: var(--accent);
  color: var(--accent-ink); border-radius: .4rem; padding: .45rem .9rem; min-height: 2.4rem; cursor: pointer;
  text-decoration: none; font-weight: 550; }
button.secondary, .button.secondary { background: transparent; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); color: #fff; }
.pager { display: flex; gap: 1rem; align-items: center; margin: 1rem 0; flex-wrap: wrap; }
.question { margin-bottom: 1.25rem; }
.question h2 { margin: 0; }
.question header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: baseline; margin-bottom: .75rem; }
.sides { display: grid; gap: .75rem; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr)); }
.side { border: 1px solid var(--line); border-radius: .5rem; padding: .75rem .85rem; background: var(--bg); }
.side.live { border-left: 4px solid var(--accent); }
.side h3 { display: flex; justify-content: space-between; gap: .5rem; flex-wrap: wrap; }
.value { font-size: 1.0625rem; margin: .4rem 0; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .15rem .75rem; margin: .5rem 0;
  font-size: .875rem; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.diff { font-size: .9375rem; }
ins { background: var(--ins); text-decoration: none; border-radius: .2rem; padding: 0 .15em; margin: 0 .1em; }
del { background: var(--del); border-radius: .2rem; padding: 0 .15em; margin: 0 .1em; }
ul.lines { list-style: none; padding: 0; margin: .25rem 0 .75rem; font-size: .875rem; overflow-wrap: anywhere; }
ul.lines li { margin: .15rem 0; }
.choices { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: .85rem; }
code.command { display: block; background: var(--bg); border: 1px solid var(--line); border-radius: .4rem;
  padding: .45rem .6rem; margin: .3rem 0 .6rem; user-select: all; }
ul.trust { list-style: none; padding: 0; margin: .5rem 0 0; }
ul.trust > li + li { border-top: 1px solid var(--line); padding-top: .75rem; margin-top: .75rem; }
.notice { border: 1px solid var(--line); border-left: 4px solid var(--accent); background: var(--panel);
  padding: .75rem 1rem; border-radius: .4rem; margin: 0 0 1rem; }
.notice.bad { border-left-color: var(--bad); }
.notice.ok { border-left-color: var(--ok); }
ol.timeline { list-style: none; margin: 0; padding: 0; border-left: 2px solid var(--line); }
ol.timeline li { position: relative; padding: .2rem 0 .9rem 1.1rem; }
ol.timeline li::before { content: ""; position: absolute; left: -.42rem; top: .55rem; width: .7rem; height: .7rem;
  border-radius: 50%; background: var(--panel); border: 2px solid var(--accent); }
ol.timeline li.current::before { background: var(--accent); }
.when { color: var(--muted); font-size: .8125rem; font-variant-numeric: tabular-nums; }
footer { max-width: 72rem; margin: 0 auto; padding: 1rem 1.25rem 2rem; color: var(--muted); font-size: .8125rem; }
@media (max-width: 40rem) {
  main { padding: 1rem .75rem; }
  .top-inner { padding: .6rem .75rem; }
  .mode { margin-left: 0; }
  th.opt, td.opt { display: none; }
  .figure { font-size: 1.35rem; }
}
`;

/**
 * The script (an enhancement only: every page works without it). It polls
 * the store's change stamp every two seconds while the page is visible and,
 * when it changed, fetches the same page once and swaps its content in, unless
 * the owner is typing or choosing.
 */
export const APP_JS = `
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="bimri-stamp"]');
  if (!meta) return;
  var stamp = meta.getAttribute("content");
  var busy = false;
  function editing() {
    var el = document.activeElement;
    return !!el && (el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA");
  }
  function swap(text) {
    var doc = new DOMParser().parseFromString(text, "text/html");
    var next = doc.querySelector("main");
    var nav = doc.querySelector("nav.main");
    var m = doc.querySelector('meta[name="bimri-stamp"]');
    if (!next || !m) return;
    document.querySelector("main").replaceWith(document.importNode(next, true));
    if (nav) document.querySelector("nav.main").replaceWith(document.importNode(nav, true));
    stamp = m.getAttribute("content");
    meta.setAttribute("content", stamp);
    document.title = doc.title;
  }
  function tick() {
    if (busy || document.hidden || editing()) return;
    busy = true;
    fetch("/api/stamp", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (now) {
        if (now === null || now.trim() === stamp) return null;
        return fetch(location.pathname + location.search, { credentials: "same-origin", cache: "no-store" })
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (text) { if (text !== null) swap(text); });
      })
      .catch(function () {})
      .then(function () { busy = false; });
  }
  setInterval(tick, 2000);
})();
`;
