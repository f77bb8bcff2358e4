"""The report page's inline stylesheet and script (no network: nothing is loaded from outside).

The script records uncaught errors (``window.onerror``) into ``#js-errors`` and, once the page
has loaded, a self-check into ``#selfcheck``: ``data-status`` ``ok`` or ``fail`` and a JSON text
of what it counted (functions, compiles, graphs, graph-break links and whether each one's target
line exists). ``--dump-dom`` of a headless browser shows both (``tests/cli/test_report_browser.py``).
The filter box hides index rows and function sections whose title does not match.
"""

PAGE_CSS = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1300px;padding:0 16px 40px;color:#222;background:#fff}
h1{font-size:22px;margin:16px 0 4px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:3px;margin-top:28px}
h3{font-size:15px}h4{font-size:13px;margin:8px 0}.muted{color:#777}
table{border-collapse:collapse;margin:6px 0;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
th{background:#f5f5f5}.num{text-align:right;font-variant-numeric:tabular-nums}
details.compile{border:1px solid #ccc;border-radius:6px;margin:10px 0;padding:6px 10px}
details.compile>summary{font-weight:600;cursor:pointer}details.artefact>summary{cursor:pointer;color:#0b57d0}
.graph-break{background:#fff3e0;border-left:4px solid #fb8c00;padding:6px 10px;margin:8px 0}
.recompile-reason{background:#fce4ec;border-left:4px solid #d81b60;padding:6px 10px;margin:8px 0}
.limit-hit{background:#fff3e0;border-left:4px solid #ef6c00;padding:6px 10px;margin:8px 0}
ol.history li.recompile{color:#ad1457}.graph-box{overflow-x:auto}
pre.code{background:#fafafa;border:1px solid #eee;padding:6px;overflow-x:auto;font-size:12px;line-height:1.35}
pre.code .ln{display:block}pre.code .no{display:inline-block;width:3.2em;color:#aaa;user-select:none}
pre.code .ln:target{background:#fff59d}.legend .key{margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:12px;height:10px;margin-right:4px}
#filter{margin:4px 0;padding:3px 6px;width:260px}#js-errors:empty{display:none}
#js-errors{color:#b00020}#selfcheck{font-size:11px;color:#999;margin-top:30px}
"""

PAGE_SCRIPT = r"""
window.__errors = [];
window.onerror = function (message, source, line) {
  window.__errors.push(String(message) + " (" + source + ":" + line + ")");
  var box = document.getElementById("js-errors");
  if (box) { box.textContent = window.__errors.join("\n"); }
  return false;
};
function reportSelfCheck() {
  var q = function (sel) { return document.querySelectorAll(sel); };
  var links = q("a.line-link"), missing = [];
  for (var i = 0; i < links.length; i++) {
    var target = links[i].getAttribute("href").slice(1);
    if (!document.getElementById(target)) { missing.push(target); }
  }
  var result = {
    functions: q("section.function").length, index_rows: q("table.index tbody tr").length,
    compiles: q("details.compile").length, graphs: q("svg.graph").length,
    graph_nodes: q("svg.graph g.node").length, timeline_bars: q("#timeline-svg rect.phase").length,
    breaks: q(".graph-break").length, recompiles: q(".recompile-reason").length,
    line_links: links.length, missing_targets: missing, errors: window.__errors.length
  };
  var ok = result.functions > 0 && result.functions === result.index_rows && result.compiles > 0 &&
           result.timeline_bars > 0 && missing.length === 0 && window.__errors.length === 0;
  var box = document.getElementById("selfcheck");
  box.setAttribute("data-status", ok ? "ok" : "fail");
  box.textContent = "self-check " + JSON.stringify(result);
}
function wireFilter() {
  var input = document.getElementById("filter");
  input.addEventListener("input", function () {
    var needle = input.value.toLowerCase(), rows = document.querySelectorAll("table.index tbody tr");
    for (var i = 0; i < rows.length; i++) {
      var show = rows[i].textContent.toLowerCase().indexOf(needle) >= 0;
      rows[i].style.display = show ? "" : "none";
      document.getElementById(rows[i].getAttribute("data-fn")).style.display = show ? "" : "none";
    }
  });
}
function openTarget() {  // a link to a line inside closed <details>: open them
  var target = document.getElementById(location.hash.slice(1));
  for (var el = target; el; el = el.parentElement) { if (el.tagName === "DETAILS") { el.open = true; } }
}
document.addEventListener("DOMContentLoaded", function () {
  wireFilter();
  window.addEventListener("hashchange", openTarget);
  reportSelfCheck();
});
"""
