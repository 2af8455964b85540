#!/usr/bin/env python3
"""Draws the panels of a Grafana dashboard from Prometheus, as PNG files.

    scripts/dashboard-png.py --prometheus http://127.0.0.1:9090 \\
        --start now-15m --end now --out DIR \\
        [--dashboard deploy/grafana/gate-proxy.json] [--step SECONDS] \\
        [--panels all|none|ID,ID...] [--marker TIME=LABEL ...] \\
        [--no-phase-markers] [--require-data]

Every query of every panel is asked of Prometheus's range API
(/api/v1/query_range) over [start, end]; the results are drawn the way the
dashboard lays them out:

  DIR/overview.png     every panel, placed by its gridPos (24 columns);
  DIR/<title>.png      one file per panel chosen by --panels (default all),
                       named after the panel's title in lower case.

A time series panel is one line per series, named by the target's
legendFormat ({{label}} filled in), its y axis labelled with the unit in the
title's parentheses (or fieldConfig's custom.axisLabel), and a series that
fieldConfig.overrides puts on the right axis drawn there with its own unit.
A stat panel whose series are all 1 where present (`... == 1`, as Phase and
Active colour are) is a strip showing which series held when; any other stat
panel is a step line. A series named blue or green is drawn in that colour.

Each change of the pipeline's phase (the query of the panel whose legend is
{{phase}}: steady, waiting, split, closed, aborted; docs/DESIGN.md, Phases)
is a dashed vertical line in every panel, labelled with the phase entered;
--marker adds others (TIME as for --start). Times are drawn in UTC.

TIME is epoch seconds, RFC 3339 (2026-01-02T03:04:05Z), `now` or `now-DURATION`
(30s, 15m, 2h). Exit status: 0 when every file was written; 1 when Prometheus
could not be asked or answered an error, or with --require-data a panel had
no data in the range; 2 on a bad command line.

Needs matplotlib (Debian: python3-matplotlib; scripts/install-deps.sh test).
"""
import argparse
import datetime as dt
import json
import math
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

UTC = dt.timezone.utc
COLOURS = {
    "blue": "#1f66c1", "green": "#2a9d3a",
    # phases (docs/DESIGN.md, Phases)
    "steady": "#8c8c8c", "waiting": "#e8a33d", "split": "#8e5fc2",
    "closed": "#1aa5a5", "aborted": "#d0453a",
    "ready": "#2a9d3a", "committed": "#4f6d8f", "written": "#4f6d8f",
}
BYTES_SCALE = 1 / 1048576  # bytes are drawn in MiB
CYCLE = ["#e8743b", "#8e5fc2", "#1aa5a5", "#d0453a", "#6b8e23", "#c05fa6",
         "#4f6d8f", "#b5892b", "#5a5a5a", "#2f9fd8"]


def fail(msg, code=1):
    print("dashboard-png: " + msg, file=sys.stderr)
    sys.exit(code)


def parse_time(s, now):
    s = s.strip()
    if s == "now":
        return now
    m = re.fullmatch(r"now-(\d+(?:\.\d+)?)([smhd])", s)
    if m:
        mult = {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
        return now - float(m.group(1)) * mult
    try:
        return float(s)
    except ValueError:
        pass
    try:
        t = dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError("not a time: %r (epoch seconds, RFC 3339, now, now-15m)" % s)
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return t.timestamp()


class Prometheus:
    def __init__(self, base, timeout=30):
        self.base = base.rstrip("/")
        self.timeout = timeout

    def query_range(self, expr, start, end, step):
        url = self.base + "/api/v1/query_range?" + urllib.parse.urlencode(
            {"query": expr, "start": "%.3f" % start, "end": "%.3f" % end, "step": "%g" % step})
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as r:
                body = json.load(r)
        except urllib.error.HTTPError as e:
            try:
                body = json.load(e)
            except ValueError:
                fail("%s: HTTP %d for %s" % (self.base, e.code, expr))
        except (urllib.error.URLError, OSError, ValueError) as e:
            fail("%s: %s" % (self.base, e))
        if body.get("status") != "success":
            fail("%s: %s: %s" % (self.base, expr, body.get("error", body)))
        return body["data"]["result"]


def legend(fmt, metric, expr):
    if not fmt:
        return ",".join("%s=%s" % kv for kv in sorted(metric.items()) if kv[0] != "__name__") or expr
    return re.sub(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", lambda m: metric.get(m.group(1), ""), fmt)


class Series:
    def __init__(self, name, points):
        self.name = name
        self.t = [float(p[0]) for p in points]
        self.v = [float(p[1]) for p in points]  # "NaN", "+Inf" parse too


def fetch_panel(prom, panel, start, end, step):
    out = []
    for target in panel.get("targets", []):
        expr = target.get("expr")
        if not expr:
            continue
        for r in prom.query_range(expr, start, end, step):
            out.append(Series(legend(target.get("legendFormat"), r["metric"], expr), r["values"]))
    return out


def spans(s, step):
    """Runs of consecutive samples (a gap over 1.5 steps ends one), as (t0, t1)."""
    out, t0, prev = [], None, None
    for t in s.t:
        if prev is not None and t - prev > 1.5 * step:
            out.append((t0, prev + step))
            t0 = None
        if t0 is None:
            t0 = t
        prev = t
    if t0 is not None:
        out.append((t0, prev + step))
    return out


def is_state(panel, series):
    return panel.get("type") == "stat" and series and all(
        v == 1 for s in series for v in s.v)


def phase_markers(dashboard, series_of):
    """(time, phase) at each change of phase, from the panel whose legend is {{phase}}."""
    for panel in dashboard["panels"]:
        if any(re.fullmatch(r"\{\{\s*phase\s*\}\}", t.get("legendFormat") or "")
               for t in panel.get("targets", [])):
            starts = []
            for s in series_of[panel["id"]]:
                for t0, _ in spans(s, series_of["_step"]):
                    starts.append((t0, s.name))
            starts.sort()
            return starts[1:]  # the first is where the range begins, not a change
    return []


def colour_for(name, used):
    if name in COLOURS:
        return COLOURS[name]
    c = CYCLE[len(used) % len(CYCLE)]
    used.append(name)
    return c


def overrides(panel):
    """{series name: {property: value}} from fieldConfig.overrides (byName)."""
    out = {}
    for o in (panel.get("fieldConfig") or {}).get("overrides", []):
        m = o.get("matcher") or {}
        if m.get("id") != "byName":
            continue
        props = out.setdefault(m.get("options"), {})
        for p in o.get("properties", []):
            props[p.get("id")] = p.get("value")
    return out


def axis_label(panel, unit):
    custom = ((panel.get("fieldConfig") or {}).get("defaults") or {}).get("custom") or {}
    if custom.get("axisLabel"):
        return custom["axisLabel"]
    m = re.search(r"\(([^()]*)\)\s*$", panel.get("title", ""))
    return m.group(1) if m else ""


def number(v, _=None):
    """1.5k, 12M, 0.25: a plain value for an axis without a unit of its own."""
    a = abs(v)
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return ("%.1f" % (v / div)).rstrip("0").rstrip(".") + suffix
    return ("%.3f" % v).rstrip("0").rstrip(".") if a else "0"


def setup_value_axis(ax, unit, label, ticker, mdates, values):
    """Tick labels and axis label for a Grafana unit (dateTimeAsIso, bytes, s, or none)."""
    if unit == "dateTimeAsIso":
        ax.yaxis.set_major_locator(mdates.AutoDateLocator(minticks=3, maxticks=8, tz=UTC))
        ax.yaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S", tz=UTC))
        finite = [v for v in values if math.isfinite(v)]
        day = dt.datetime.fromtimestamp(min(finite) / 1000, UTC).strftime("%Y-%m-%d") if finite else ""
        ax.set_ylabel(label or ("event time (UTC %s)" % day).replace(" ()", ""))
        return
    if unit == "bytes":
        # the values are drawn in MiB (BYTES_SCALE), so the ticks fall on round MiB
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: number(v) + " MiB"))
    elif unit == "s":
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(
            lambda v, _: number(v * 1000) + " ms" if 0 < abs(v) < 1 else number(v) + " s"))
    else:
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(number))
    if label:
        ax.set_ylabel(label)


def time_locator(mdates, span, ticks):
    """Ticks on round times (every 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h),
    at most about `ticks` of them over span seconds."""
    for every in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200):
        if span / every <= ticks:
            if every < 60:
                return mdates.SecondLocator(bysecond=range(0, 60, every), tz=UTC)
            if every < 3600:
                return mdates.MinuteLocator(byminute=range(0, 60, every // 60), tz=UTC)
            return mdates.HourLocator(byhour=range(0, 24, every // 3600), tz=UTC)
    return mdates.AutoDateLocator(maxticks=ticks, tz=UTC)


def draw_panel(ax, panel, series, ctx, small, width_in):
    plt, ticker, mdates = ctx["plt"], ctx["ticker"], ctx["mdates"]
    start, end, step = ctx["start"], ctx["end"], ctx["step"]
    fs = 7 if small else 8.5
    x = lambda ts: [mdates.date2num(dt.datetime.fromtimestamp(t, UTC)) for t in ts]
    title = panel.get("title", "panel %s" % panel.get("id"))
    ax.set_xlim(x([start, end]))
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S", tz=UTC))
    ax.xaxis.set_major_locator(time_locator(mdates, end - start, max(2, min(9, int(width_in / 0.9)))))
    ax.tick_params(labelsize=fs)
    ax.grid(True, color="#e6e6e6", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    used = []
    state = is_state(panel, series)
    legend_kw = dict(fontsize=fs - 0.5, loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False,
                     borderaxespad=0.1, handlelength=1.2, columnspacing=1.0)
    if not series:
        ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center",
                color="#999999", fontsize=fs + 2)
        ax.set_yticks([])
    elif state:
        # which series held when: the `... == 1` stat panels (Phase, Active colour)
        last = max(series, key=lambda s: s.t[-1])
        unlabelled = []
        for s in series:
            c = colour_for(s.name, used)
            labelled = False
            for t0, t1 in spans(s, step):
                x0, x1 = x([t0, t1])
                ax.broken_barh([(x0, x1 - x0)], (0, 1), facecolors=c, edgecolor="white", linewidth=0.8)
                if (t1 - t0) / (end - start) > (0.13 if small else 0.07):
                    ax.text((x0 + x1) / 2, 0.5, s.name, ha="center", va="center",
                            fontsize=fs, color="white", fontweight="bold")
                    labelled = True
            if not labelled:
                unlabelled.append((s.name, c))
        ax.set_ylim(0, 1)
        ax.set_yticks([])
        ax.grid(False)
        title += ": %s now" % last.name
        if unlabelled:
            ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=c) for _, c in unlabelled],
                      labels=[n for n, _ in unlabelled], ncol=len(unlabelled), **legend_kw)
    else:
        unit = ((panel.get("fieldConfig") or {}).get("defaults") or {}).get("unit")
        ov = overrides(panel)
        # many series, most of them zero throughout (dead-lettered by
        # reason): the zeros are left out and counted in the legend
        zero = [s for s in series if all(v == 0 for v in s.v)] if len(series) > 4 else []
        shown = [s for s in series if s not in zero]
        right, handles, left_vals = None, [], []
        for s in shown:
            props = ov.get(s.name, {})
            on = ax
            if props.get("custom.axisPlacement") == "right":
                if right is None:
                    right = ax.twinx()
                    right.tick_params(labelsize=fs)
                    right.spines["top"].set_visible(False)
                    setup_value_axis(right, props.get("unit"), props.get("custom.axisLabel") or s.name,
                                     ticker, mdates, s.v)
                    right.yaxis.label.set_size(fs)
                on = right
            else:
                left_vals += [v * BYTES_SCALE for v in s.v] if unit == "bytes" else s.v
            c = (props.get("color") or {}).get("fixedColor") or colour_for(s.name, used)
            xs, ys, prev = [], [], None
            for t, v in zip(s.t, s.v):
                if prev is not None and t - prev > 1.5 * step:  # a gap, not a line across it
                    xs.append(t - step)
                    ys.append(float("nan"))
                xs.append(t)
                ys.append(v)
                prev = t
            s_unit = props.get("unit") if on is right else unit
            if s_unit == "bytes":
                ys = [v * BYTES_SCALE for v in ys]
            if unit == "dateTimeAsIso" and on is ax:
                ys = [mdates.date2num(dt.datetime.fromtimestamp(v / 1000, UTC)) if math.isfinite(v)
                      else float("nan") for v in ys]
            h, = on.plot(x(xs), ys, color=c, linewidth=1.5, label=s.name, solid_capstyle="butt",
                         drawstyle="steps-post" if panel.get("type") == "stat" else "default")
            handles.append(h)
        setup_value_axis(ax, unit, axis_label(panel, unit), ticker, mdates, left_vals)
        ax.yaxis.label.set_size(fs)
        finite = [v for v in left_vals if math.isfinite(v)]
        if unit != "dateTimeAsIso" and (not finite or min(finite) >= 0):
            ax.set_ylim(bottom=0, top=max(finite + [0]) * 1.08 or 1)
        if right is not None:
            right.set_ylim(bottom=0)
        if panel.get("type") == "stat":
            last = max(series, key=lambda s: s.t[-1])
            title += ": %s now" % number(last.v[-1])
        if zero:
            handles.append(plt.Line2D([], [], color="none", label="%d more at 0" % len(zero)))
        ax.legend(handles=handles, ncol=min(len(handles), 3 if small else 4), **legend_kw)
    prev, level = None, 0
    for t, label in ctx["markers"]:
        xm = x([t])[0]
        ax.axvline(xm, color="#444444", linestyle=(0, (4, 3)), linewidth=0.9, zorder=5)
        # a label close after the one before goes one line lower
        level = level + 1 if prev is not None and (t - prev) / (end - start) < (0.09 if small else 0.06) else 0
        prev = t
        if not state and series:
            ax.text(xm, 0.98 - 0.11 * (level % 3), " " + label, transform=ax.get_xaxis_transform(),
                    fontsize=fs - 0.5,
                    va="top", ha="left", color="#222222", zorder=6,
                    bbox=dict(boxstyle="square,pad=0.15", facecolor="white", edgecolor="none", alpha=0.8))
    ax.set_title(title, fontsize=fs + 1, loc="left", fontweight="bold", pad=3)


def save_png(fig, path, dpi):
    """Saves fig as a palette PNG when Pillow is there (a third of the size), else as drawn."""
    try:
        from PIL import Image
    except ImportError:
        fig.savefig(path, dpi=dpi)
        return
    fig.set_dpi(dpi)
    fig.canvas.draw()
    img = Image.frombuffer("RGBA", fig.canvas.get_width_height(), fig.canvas.buffer_rgba(),
                           "raw", "RGBA", 0, 1).convert("RGB")
    img.quantize(colors=96, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        path, format="PNG", optimize=True)


def has_right_axis(panel):
    return any(v.get("custom.axisPlacement") == "right" for v in overrides(panel).values())


def inset(fig, box, right_axis=False, xlabel=False, y_ticks=True):
    """The axes' rectangle (figure fractions) inside box (x, y from the top,
    w, h, in inches), leaving room for the title and legend above, the tick
    labels below and the y axis labels either side."""
    x, y, w, h = box
    fw, fh = fig.get_figwidth(), fig.get_figheight()
    left, right = 0.78 if y_ticks else 0.25, 0.78 if right_axis else 0.40
    top, bottom = 0.34, 0.52 if xlabel else 0.30
    return [(x + left) / fw, 1 - (y + h - bottom) / fh,
            (w - left - right) / fw, (h - top - bottom) / fh]


def slug(title):
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "panel"


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    now = dt.datetime.now(UTC).timestamp()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[2:]))
    ap.add_argument("--prometheus", required=True, help="base URL, e.g. http://127.0.0.1:9090")
    ap.add_argument("--start", required=True, type=lambda s: parse_time(s, now))
    ap.add_argument("--end", default=now, type=lambda s: parse_time(s, now))
    ap.add_argument("--dashboard", default=os.path.join(here, "..", "deploy", "grafana", "gate-proxy.json"))
    ap.add_argument("--out", required=True, help="directory for the PNG files (created)")
    ap.add_argument("--step", type=float, help="seconds between points (default: the range / 600, at least 1)")
    ap.add_argument("--panels", default="all", help="all, none, or panel ids (1,4,5) for files of their own")
    ap.add_argument("--marker", action="append", default=[], metavar="TIME=LABEL")
    ap.add_argument("--no-phase-markers", action="store_true")
    ap.add_argument("--require-data", action="store_true", help="exit 1 when a panel has no data")
    ap.add_argument("--title", help="the overview's heading (default: the dashboard's title and the range)")
    ap.add_argument("--dpi", type=int, default=90)
    a = ap.parse_args()
    if a.end <= a.start:
        fail("--end must be after --start", 2)
    step = a.step or max(1.0, math.ceil((a.end - a.start) / 600))
    markers = []
    for m in a.marker:
        t, sep, label = m.partition("=")
        if not sep:
            fail("--marker %r: TIME=LABEL" % m, 2)
        try:
            markers.append((parse_time(t, now), label))
        except argparse.ArgumentTypeError as e:
            fail("--marker: %s" % e, 2)
    try:
        with open(a.dashboard) as f:
            dashboard = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (a.dashboard, e), 2)
    panels = dashboard.get("panels") or []
    if not panels:
        fail("%s: no panels" % a.dashboard, 2)
    ids = {p.get("id") for p in panels}
    if a.panels == "all":
        own = [p for p in panels]
    elif a.panels == "none":
        own = []
    else:
        try:
            want = [int(i) for i in a.panels.split(",")]
        except ValueError:
            fail("--panels %r: all, none, or ids" % a.panels, 2)
        missing = [i for i in want if i not in ids]
        if missing:
            fail("--panels: no panel with id %s in %s" % (missing, a.dashboard), 2)
        own = [p for i in want for p in panels if p.get("id") == i]

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt
    import matplotlib.ticker as ticker

    prom = Prometheus(a.prometheus)
    series_of = {"_step": step}
    for p in panels:
        series_of[p["id"]] = fetch_panel(prom, p, a.start, a.end, step)
    if not a.no_phase_markers:
        markers += [(t, "\u2192 " + ph) for t, ph in phase_markers(dashboard, series_of)]
    markers.sort()
    empty = [p.get("title") for p in panels if not series_of[p["id"]]]
    ctx = {"plt": plt, "ticker": ticker, "mdates": mdates, "start": a.start, "end": a.end,
           "step": step, "markers": markers}
    os.makedirs(a.out, exist_ok=True)
    written = []

    fmt = lambda t: dt.datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")

    # The overview: panels where gridPos puts them, 24 columns wide.
    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
    col_in, row_in, head_in = 16 / 24, 0.34, 0.45
    fig = plt.figure(figsize=(16, rows * row_in + head_in), dpi=a.dpi)
    for p in panels:
        g = p["gridPos"]
        box = (g["x"] * col_in, g["y"] * row_in + head_in, g["w"] * col_in, g["h"] * row_in)
        ax = fig.add_axes(inset(fig, box, right_axis=has_right_axis(p),
                                y_ticks=not is_state(p, series_of[p["id"]])))
        draw_panel(ax, p, series_of[p["id"]], ctx, small=True, width_in=box[2])
    fig.text(0.2 / 16, 1 - 0.12 / fig.get_figheight(),
             a.title or "%s, %s to %s UTC" % (dashboard.get("title", "dashboard"), fmt(a.start),
                                              fmt(a.end)[11:]),
             ha="left", va="top", fontsize=12, fontweight="bold")
    path = os.path.join(a.out, "overview.png")
    save_png(fig, path, a.dpi)
    plt.close(fig)
    written.append(path)

    for p in own:
        size = (9, 1.9 if p.get("type") == "stat" else 3.4)
        fig = plt.figure(figsize=size, dpi=a.dpi)
        ax = fig.add_axes(inset(fig, (0, 0) + size, right_axis=has_right_axis(p), xlabel=True))
        draw_panel(ax, p, series_of[p["id"]], ctx, small=False, width_in=size[0])
        ax.set_xlabel("time (UTC, %s)" % fmt(a.start)[:10], fontsize=8)
        path = os.path.join(a.out, slug(p.get("title", "")) + ".png")
        save_png(fig, path, a.dpi)
        plt.close(fig)
        written.append(path)

    for path in written:
        w, h = png_size(path) or (0, 0)
        print("%s %dx%d %d bytes" % (path, w, h, os.path.getsize(path)))
    print("%d panels, %d series, %d markers (%s)" % (
        len(panels), sum(len(v) for k, v in series_of.items() if k != "_step"), len(markers),
        ", ".join("%s %s" % (fmt(t)[11:], l) for t, l in markers) or "none"))
    if empty:
        print("no data: " + "; ".join(empty), file=sys.stderr)
        if a.require_data:
            sys.exit(1)


if __name__ == "__main__":
    main()
