"""Render an :class:`~changeprov.sparql.audit.AuditReport` as one self-contained HTML page.

No network resources: inline CSS, inline SVG drawn here (bar charts, layered lineage graph) and a few
lines of inline JS; a Content-Security-Policy forbids anything else, so a stray remote reference would
show up as a console error in the browser test rather than as a silent request.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import defaultdict
from html import escape

from changeprov.sparql.audit import KINDS, AuditReport, Comparison, Finding, Lineage, short_name
from changeprov.terminal import visible

MAX_EVENTS_SHOWN = 10
MAX_FINDINGS_SHOWN = 200


CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2f4f;color:#fff;padding:18px 28px}header h1{margin:0 0 4px;font-size:22px}
header p{margin:0;opacity:.85}main{padding:12px 28px 40px;max-width:1280px}
section{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:14px 18px;margin:16px 0}
h2{font-size:17px;margin:0 0 10px}h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 8px;
border-bottom:1px solid #eceff3;vertical-align:top}th{background:#f0f2f5}
.sev{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;color:#fff}
.sev-high{background:#c0392b}.sev-medium{background:#d68910}.sev-low{background:#5d6d7e}.sev-new{background:#1f6feb}
.ev span{font-family:ui-monospace,Menlo,monospace;font-size:12px;margin-right:6px}
.muted{color:#6b7685}.name{word-break:break-all}svg text{font-family:system-ui,sans-serif}
.charts{display:flex;flex-wrap:wrap;gap:24px}.bar:hover{fill:#e67e22}
"""

JS = """
(function () {
  var root = document.documentElement;
  var chart = document.getElementById('activity-chart');
  var lineage = document.getElementById('lineage-graph');
  root.setAttribute('data-chart-bars', chart ? chart.querySelectorAll('rect.bar').length : 0);
  root.setAttribute('data-chart-width', chart ? Math.round(chart.getBBox().width) : 0);
  root.setAttribute('data-lineage-nodes', lineage ? lineage.querySelectorAll('g.node').length : 0);
  root.setAttribute('data-lineage-width', lineage ? Math.round(lineage.getBBox().width) : 0);
  document.querySelectorAll('button[data-toggle]').forEach(function (b) {
    b.addEventListener('click', function () {
      var t = document.getElementById(b.getAttribute('data-toggle'));
      t.hidden = !t.hidden;
    });
  });
  root.setAttribute('data-rendered', 'yes');
})();
"""
# the one inline script by its hash, not 'unsafe-inline', which would also run a javascript: link
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
       f"script-src 'sha256-{base64.b64encode(hashlib.sha256(JS.encode()).digest()).decode()}'")


def _e(text) -> str:
    # controls shown as \uXXXX, as on a terminal: the page may go to one (--out -), and means nothing with them
    return escape(visible(str(text)), quote=True)


def _link(iri: str, inner: str, *, attrs: str = "") -> str:
    """``inner`` (HTML) with ``iri`` shown on hover, never a link: our IRIs and OpenMetadata's name no web
    page (ut47a #9: a click sent an entity's internal id to open-metadata.org and got a 404), and a
    crafted one (``javascript:``) must not run (rv40 M4)."""
    return f'<span{attrs} title="{_e(iri)}">{inner}</span>'


def _event_links(events: list[str]) -> str:
    shown = "".join(_link(ev, _e(ev.rsplit("/", 1)[-1][:12])) for ev in events[:MAX_EVENTS_SHOWN])
    more = len(events) - MAX_EVENTS_SHOWN
    return shown + (f'<span class="muted">+{more} more (see --format json)</span>' if more > 0 else "")


# ----------------------------------------------------------------------------- bar charts


def bar_chart_svg(bars: list[tuple[str, int, str]], *, svg_id: str, title: str, width: int = 760,
                  height: int = 220) -> str:
    """Vertical bars (label, value, tooltip); every k-th label shown so they never overlap."""
    left, bottom, top = 40, 46, 20
    n = max(len(bars), 1)
    peak = max((v for _, v, _ in bars), default=0) or 1
    plot_w, plot_h = max(width - left - 10, 1), height - bottom - top
    step = plot_w / n
    # a label rotated by 40 degrees needs ~16 px along the axis not to touch the next one (ut25 #8: at
    # 11 px, two years of days were a smear)
    every = max(1, -(-n * 18 // int(plot_w)))
    parts = [f'<svg id="{svg_id}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}">',
             f'<text x="{left}" y="14" font-size="13" font-weight="600">{_e(title)}</text>',
             f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 10}" y2="{top + plot_h}" stroke="#888"/>']
    for frac in (0.5, 1.0):
        y = top + plot_h - plot_h * frac
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" stroke="#eee"/>'
                     f'<text x="{left - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end">'
                     f'{round(peak * frac)}</text>')
    for i, (label, value, tip) in enumerate(bars):
        h = plot_h * value / peak
        x = left + i * step + step * 0.1
        parts.append(f'<rect class="bar" x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{max(step * 0.8, 1):.1f}" '
                     f'height="{h:.1f}" fill="#2e86c1"><title>{_e(tip)}</title></rect>')
        if i % every == 0:
            lx, ly = left + i * step + step / 2, top + plot_h + 10
            parts.append(f'<text x="{lx:.1f}" y="{ly}" font-size="10" text-anchor="end" '
                         f'transform="rotate(-40 {lx:.1f} {ly})">{_e(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def hbar_chart_svg(bars: list[tuple[str, int]], *, svg_id: str, title: str, width: int = 460) -> str:
    """Horizontal bars (label, value), one row each."""
    row, label_w, top = 18, 190, 24
    peak = max((v for _, v in bars), default=0) or 1
    height = top + row * len(bars) + 8
    parts = [f'<svg id="{svg_id}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}">',
             f'<text x="0" y="14" font-size="13" font-weight="600">{_e(title)}</text>']
    for i, (label, value) in enumerate(bars):
        y = top + i * row
        w = (width - label_w - 40) * value / peak
        text = label if len(label) <= 30 else "…" + label[-29:]
        parts.append(f'<text x="{label_w - 6}" y="{y + 12}" font-size="11" text-anchor="end">{_e(text)}'
                     f'<title>{_e(label)}</title></text>'
                     f'<rect class="bar" x="{label_w}" y="{y + 2}" width="{max(w, 1):.1f}" height="{row - 5}" '
                     f'fill="#28b463"><title>{_e(label)}: {value}</title></rect>'
                     f'<text x="{label_w + w + 4:.1f}" y="{y + 12}" font-size="10">{value}</text>')
    parts.append("</svg>")
    return "".join(parts)


# ----------------------------------------------------------------------------- layered lineage layout


def layered_layout(nodes: list[str], edges: list[tuple[str, str]]) -> dict[str, tuple[int, int]]:
    """(layer, position) per node for edges up → down: longest path from the sources, then a few
    barycentre sweeps to reduce crossings. Cycles are broken by capping layers at the node count."""
    ups: dict[str, set] = defaultdict(set)
    downs: dict[str, set] = defaultdict(set)
    for up, down in edges:
        if up != down:
            ups[down].add(up)
            downs[up].add(down)
    layer = {n: 0 for n in nodes}
    for _ in range(len(nodes)):
        changed = False
        for up, down in edges:
            if up != down and layer[down] < layer[up] + 1 and layer[up] + 1 < len(nodes):
                layer[down] = layer[up] + 1
                changed = True
        if not changed:
            break
    layers: dict[int, list[str]] = defaultdict(list)
    for n in sorted(nodes):
        layers[layer[n]].append(n)
    pos = {n: i for members in layers.values() for i, n in enumerate(members)}
    for sweep in range(4):
        order = sorted(layers) if sweep % 2 == 0 else sorted(layers, reverse=True)
        for k in order:
            near = ups if sweep % 2 == 0 else downs

            def bary(n):
                ps = [pos[m] for m in near[n] if m in pos]
                return (sum(ps) / len(ps)) if ps else pos[n]

            layers[k].sort(key=lambda n: (bary(n), n))
            for i, n in enumerate(layers[k]):
                pos[n] = i
    return {n: (layer[n], pos[n]) for n in nodes}


def lineage_svg(lineage: Lineage, *, svg_id: str = "lineage-graph") -> str:
    names = {}
    edges = []
    for e in lineage.edges:
        names[e["down"]], names[e["up"]] = e["down_name"], e["up_name"]
        edges.append((e["up"], e["down"], e))
    names.setdefault(lineage.entity, lineage.entity_name)
    layout = layered_layout(sorted(names), [(u, d) for u, d, _ in edges])
    col_w, row_h, box_w, box_h, pad = 320, 64, 270, 36, 20
    n_layers = max(l for l, _ in layout.values()) + 1
    n_rows = max(p for _, p in layout.values()) + 1
    width, height = pad * 2 + col_w * (n_layers - 1) + box_w, pad * 2 + row_h * (n_rows - 1) + box_h + 22

    def xy(node):
        l, p = layout[node]
        return pad + l * col_w, pad + 22 + p * row_h

    parts = [f'<svg id="{svg_id}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="lineage of {_e(lineage.entity_name)}">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#566573"/></marker></defs>',
             f'<text x="{pad}" y="16" font-size="12" class="muted">upstream → downstream; dashed red = removed '
             f'as of {_e(lineage.as_of)}</text>']
    for up, down, e in edges:
        (x1, y1), (x2, y2) = xy(up), xy(down)
        sx, sy, tx, ty = x1 + box_w, y1 + box_h / 2, x2, y2 + box_h / 2
        if x2 <= x1:  # same or earlier layer (cycle): route around the bottom
            sx, tx = x1 + box_w / 2, x2 + box_w / 2
            sy, ty = y1 + box_h, y2 + box_h
        mid = (sx + tx) / 2
        style = 'stroke="#566573"' if e["valid"] else 'stroke="#c0392b" stroke-dasharray="6 4"'
        state = "valid" if e["valid"] else "removed"
        path = (f'<path class="edge edge-{state}" d="M{sx:.1f},{sy:.1f} '
                f'C{mid:.1f},{sy:.1f} {mid:.1f},{ty:.1f} {tx:.1f},{ty:.1f}" fill="none" {style} '
                f'stroke-width="1.6" marker-end="url(#arrow)"><title>{_e(short_name(names[down]))} ← '
                f'{_e(short_name(names[up]))} ({state})</title></path>')
        parts.append(path)
    for node in sorted(names):
        x, y = xy(node)
        focus = node == lineage.entity
        label = short_name(names[node])
        text = label if len(label) <= 42 else "…" + label[-41:]
        parts.append(f'<g class="node{" focus" if focus else ""}"><rect x="{x}" y="{y}" width="{box_w}" '
                     f'height="{box_h}" rx="6" fill="{"#fdebd0" if focus else "#eaf2f8"}" '
                     f'stroke="{"#d35400" if focus else "#2e86c1"}" stroke-width="{2 if focus else 1}"/>'
                     f'<text x="{x + box_w / 2}" y="{y + box_h / 2 + 4}" font-size="11" text-anchor="middle">'
                     f'{_e(text)}</text><title>{_e(names[node])}</title></g>')
    parts.append("</svg>")
    return "".join(parts)


# ----------------------------------------------------------------------------- the page


def _finding_rows(findings: list[Finding], new: set[int] | None = None) -> str:
    """Table rows; with ``new`` (ids of the findings a baseline lacks) those come first, marked."""
    if new is not None:
        findings = sorted(findings, key=lambda f: id(f) not in new)
    rows = []
    for f in findings[:MAX_FINDINGS_SHOWN]:
        entity = (_link(f.entity, _e(short_name(f.entity_name)), attrs=' class="name"')
                  if f.entity else '<span class="muted">–</span>')
        mark = '<span class="sev sev-new">new</span> ' if new is not None and id(f) in new else ""
        rows.append(f"<tr><td>{_e(f.time)}</td><td>{entity}</td><td>{mark}{_e(f.summary)}</td>"
                    f'<td class="ev">{_event_links(f.events)}</td></tr>')
    if len(findings) > MAX_FINDINGS_SHOWN:
        rows.append(f'<tr><td colspan="4" class="muted">{len(findings) - MAX_FINDINGS_SHOWN} more findings '
                    f"of this kind in the JSON report (--format json)</td></tr>")
    return "".join(rows)


def _comparison(compared: Comparison | None, baseline: str | None) -> str:
    """What the command line says of a baseline comparison (ut42d #3: the page said only how many were new)."""
    if compared is None:
        return ""
    out = (f"<p>against {_e(baseline or 'the baseline')}: {len(compared.new)} new, {len(compared.known)} known "
           f"({len(compared.changed)} with another text), {len(compared.gone)} gone</p>")
    return out + "".join(f'<p class="warning">warning: {_e(w)}</p>' for w in compared.warnings)


def render_html(report: AuditReport, *, compared: Comparison | None = None, baseline: str | None = None) -> str:
    """The report as one self-contained page; ``compared`` (``audit --baseline``, with the ``baseline``
    report's name): the findings an earlier report lacks come first, marked, and the page says what the
    comparison found."""
    new = compared.new if compared is not None else None
    new_ids = {id(f) for f in new} if new is not None else None
    counts = report.counts()
    total_events = sum(c for _, _, c in report.activity)
    window = f"{report.since or 'the beginning'} … {report.until or 'now'}"
    by_day = report.by_day()
    day_bars = [(d, n, f"{d}: {n} event(s) — " + ", ".join(f"{u} {c}" for u, c in sorted(u.items())))
                for d, n, u in by_day]
    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>changeprov audit — {_e(window)}</title><style>{CSS}</style></head><body>",
           f"<header><h1>changeprov audit</h1><p>{_e(report.store)} · window {_e(window)} · generated "
           f"{_e(report.generated_at)} · {total_events} event(s) · {len(report.findings)} finding(s)"
           + (f", {len(new)} new since the baseline" if new is not None else "") + "</p>"
           + _comparison(compared, baseline) + "</header>",
           "<main>"]
    # summary
    out.append('<section id="summary"><h2>Findings by kind</h2><table><tr><th>kind</th><th>severity</th>'
               "<th>findings</th><th>what it means</th></tr>")
    for kind, meta in KINDS.items():
        n = counts.get(kind, 0)
        title = f'<a href="#kind-{kind}">{_e(meta.title)}</a>' if n else _e(meta.title)
        out.append(f'<tr><td>{title}</td><td><span class="sev sev-{meta.severity}">{meta.severity}</span></td>'
                   f"<td>{n}</td><td>{_e(meta.description)}</td></tr>")
    out.append("</table></section>")
    # activity
    out.append('<section id="activity"><h2>Activity</h2><div class="charts">')
    out.append(bar_chart_svg(day_bars, svg_id="activity-chart", title="change events per day (UTC)"))
    out.append(hbar_chart_svg(report.by_user()[:25], svg_id="user-chart", title="change events per user"))
    out.append("</div><h3>Most changed entities</h3><table><tr><th>entity</th><th>events</th><th>users</th>"
               "<th>last change</th></tr>")
    for t in report.top_entities:
        name = _link(t["entity"], _e(short_name(t["entity_name"])), attrs=' class="name"')
        out.append(f'<tr><td>{name}</td>'
                   f'<td>{t["events"]}</td><td>{t["users"]}</td><td>{_e(t["last_change"])}</td></tr>')
    out.append("</table></section>")
    # lineage
    out.append('<section id="lineage"><h2>Lineage of the most impacted asset</h2>')
    if report.lineage:
        out.append(f'<p><b class="name">{_e(short_name(report.lineage.entity_name))}</b> '
                   f'<span class="muted">(severity-weighted findings; {_e(report.lineage.entity)})</span></p>')
        out.append(lineage_svg(report.lineage))
    else:
        out.append('<p class="muted">No entity with findings has lineage edges.</p>')
    out.append("</section>")
    # findings
    for kind, meta in KINDS.items():
        found = report.of_kind(kind)
        if not found:
            continue
        out.append(f'<section id="kind-{kind}"><h2>{_e(meta.title)} <span class="sev sev-{meta.severity}">'
                   f'{meta.severity}</span> <span class="muted">{len(found)}</span></h2>'
                   f'<p class="muted">{_e(meta.description)}</p>'
                   f'<button type="button" data-toggle="table-{kind}">show / hide</button>'
                   f'<table id="table-{kind}"><tr><th>time</th><th>entity</th><th>finding</th>'
                   f"<th>evidence (event IRIs)</th></tr>{_finding_rows(found, new_ids)}</table></section>")
    out.append("</main>")
    # the data behind the page, for tools (inert: type application/json is never executed)
    data = json.dumps(report.counts(), sort_keys=True).replace("</", "<\\/")
    out.append(f'<script type="application/json" id="audit-counts">{data}</script>')
    out.append(f"<script>{JS}</script></body></html>\n")
    return "".join(out)
