/* fx-report-assets.c: the report's stylesheet and script, written next to the pages (no CDN, no network). The
   script only reads window.FXWB_SEARCH (search-index.js, loaded by a <script> tag because browsers block fetch() of
   file:// URLs) and builds result rows with textContent, so no string from a trace is ever parsed as HTML. */
#include "fx/report.h"

static const char report_css[] =
  ":root{--fg:#1d1d1f;--muted:#666;--bg:#fff;--alt:#f5f5f7;--line:#ddd;--ok:#1a7f37;--warn:#9a6700;--bad:#cf222e;"
  "--link:#0550ae}\n"
  "@media (prefers-color-scheme:dark){:root{--fg:#e6e6e6;--muted:#aaa;--bg:#1e1e1e;--alt:#2a2a2a;--line:#444;"
  "--link:#7cb7ff}}\n"
  "body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;padding:0 1.5em 3em;"
  "max-width:1400px}\n"
  "a{color:var(--link)}\n"
  "nav{position:sticky;top:0;background:var(--bg);border-bottom:1px solid var(--line);padding:.5em 0;display:flex;"
  "gap:1em;align-items:center;z-index:2}\n"
  "nav .search{margin-left:auto;position:relative}\n"
  "nav input{width:22em;padding:.3em .5em}\n"
  "#fxwb-results{position:absolute;right:0;top:2.2em;background:var(--bg);border:1px solid var(--line);"
  "max-height:60vh;overflow:auto;width:40em;display:none;box-shadow:0 4px 16px rgba(0,0,0,.2)}\n"
  "#fxwb-results a{display:block;padding:.3em .6em;text-decoration:none;border-bottom:1px solid var(--line)}\n"
  "#fxwb-results small{color:var(--muted);margin-left:.5em}\n"
  "h1{font-size:1.5em;margin:.6em 0 .3em}h2{font-size:1.2em;margin:1.4em 0 .4em;border-bottom:1px solid var(--line)}\n"
  "table{border-collapse:collapse;margin:.3em 0}th,td{border:1px solid var(--line);padding:.2em .5em;"
  "text-align:left;vertical-align:top;overflow-wrap:anywhere}th{background:var(--alt)}\n"
  "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
  "pre{background:var(--alt);padding:.6em;overflow:auto;max-height:40em;font:12px/1.4 ui-monospace,monospace}\n"
  "code{font:12px ui-monospace,monospace}\n"
  ".ok{color:var(--ok)}.graph-break,.recompiled{color:var(--warn)}.failed,.bad{color:var(--bad)}\n"
  ".muted{color:var(--muted)}\n"
  "tr.failed-guard td{background:rgba(207,34,46,.12)}\n"
  "details{margin:.3em 0}summary{cursor:pointer}\n"
  "img.graph{max-width:100%;border:1px solid var(--line);background:#fff}\n"
  ".cid{font-family:ui-monospace,monospace;white-space:nowrap}\n"
  ".warning{color:var(--warn)}\n";

static const char report_js[] =
  "// report.js: search over every page of the report (window.FXWB_SEARCH from search-index.js) and, on a\n"
  "// server following a trace, a reload when new compiles arrive. Results are built with textContent only.\n"
  "(function () {\n"
  "  'use strict';\n"
  "  var query = document.currentScript ? (document.currentScript.getAttribute('data-query') || '') : '';\n"
  "  function hrefOf (h) { return h + query; }\n"
  "  function search (text) {\n"
  "    var out = [], words = text.toLowerCase().split(/\\s+/).filter(function (w) { return w.length; });\n"
  "    var rows = window.FXWB_SEARCH || [];\n"
  "    if (!words.length) return out;\n"
  "    for (var i = 0; i < rows.length && out.length < 200; i++) {\n"
  "      var r = rows[i], hay = (r.id + ' ' + r.title + ' ' + r.status + ' ' + r.text).toLowerCase();\n"
  "      if (words.every(function (w) { return hay.indexOf(w) >= 0; })) out.push(r);\n"
  "    }\n"
  "    return out;\n"
  "  }\n"
  "  function show (box, results) {\n"
  "    while (box.firstChild) box.removeChild(box.firstChild);\n"
  "    results.forEach(function (r) {\n"
  "      var a = document.createElement('a');\n"
  "      a.href = hrefOf(r.href);\n"
  "      a.textContent = '[' + r.id + '] ' + r.title;\n"
  "      var s = document.createElement('small');\n"
  "      s.textContent = r.status;\n"
  "      a.appendChild(s);\n"
  "      box.appendChild(a);\n"
  "    });\n"
  "    if (!results.length) { var p = document.createElement('div'); p.className = 'muted';\n"
  "      p.textContent = 'no match'; box.appendChild(p); }\n"
  "    box.style.display = 'block';\n"
  "  }\n"
  "  function filterIndex (text) {\n"
  "    var table = document.getElementById('compiles');\n"
  "    if (!table) return;\n"
  "    var ids = {};\n"
  "    search(text).forEach(function (r) { ids[r.row] = true; });\n"
  "    Array.prototype.forEach.call(table.tBodies[0].rows, function (tr) {\n"
  "      tr.style.display = !text.trim() || ids[tr.getAttribute('data-row')] ? '' : 'none';\n"
  "    });\n"
  "  }\n"
  "  document.addEventListener('DOMContentLoaded', function () {\n"
  "    var input = document.getElementById('fxwb-search'), box = document.getElementById('fxwb-results');\n"
  "    if (input && box) {\n"
  "      input.addEventListener('input', function () {\n"
  "        if (!input.value.trim()) { box.style.display = 'none'; filterIndex(''); return; }\n"
  "        show(box, search(input.value)); filterIndex(input.value);\n"
  "      });\n"
  "      input.addEventListener('keydown', function (e) { if (e.key === 'Escape') { input.value = '';\n"
  "        box.style.display = 'none'; filterIndex(''); } });\n"
  "    }\n"
  "    var live = document.body.getAttribute('data-live');\n"
  "    if (live && window.EventSource) {\n"
  "      var es = new EventSource(live), timer = null;\n"
  "      es.addEventListener('compiles', function () {\n"
  "        if (timer) return;\n"
  "        timer = setTimeout(function () { location.reload(); }, 300);\n"
  "      });\n"
  "    }\n"
  "  });\n"
  "  window.fxwbSearch = search;\n"
  "})();\n";

const char *
fx_report_css (void)
{
  return report_css;
}

const char *
fx_report_js (void)
{
  return report_js;
}
