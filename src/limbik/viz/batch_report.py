"""A library run's report for people: ``summary.html`` and ``summary.png``.

Per clip, before/after bars of foot skate, penetration and floating (the worse of
the clip's legs), in leg lengths so that clips in metres, centimetres or any other
unit compare. Worst clips first: failed clips, then by the sum over the three of the
clip's after-value relative to the largest after-value in the library.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["REPORT_METRICS", "rank_clips", "write_batch_report"]

#: metric families drawn (each the largest over a clip's legs, ``<side>_<family>``)
REPORT_METRICS = ("skate", "penetration", "floating")
#: clips drawn in the PNG (the worst ones); the HTML lists every clip
PNG_CLIPS = 25


def _family(record: Mapping[str, Any], when: str, family: str) -> float | None:
    """The largest ``{when}_{side}_{family}`` over the record's legs in leg lengths, or None."""
    values = [record.get(f"{when}_{side}_{family}") for side in str(record.get("legs", "")).split()]
    found = [float(v) for v in values if isinstance(v, int | float)]
    scale = record.get("leg_length")
    if not found or not isinstance(scale, int | float) or not scale > 0:
        return None
    return max(found) / scale


def rank_clips(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows ``{clip, status, error, frames, <family>: (before, after)}``, worst first;
    values in leg lengths."""
    rows = []
    for record in records:
        row: dict[str, Any] = {k: record.get(k) for k in ("clip", "status", "error", "frames")}
        for family in REPORT_METRICS:
            row[family] = (_family(record, "before", family), _family(record, "after", family))
        rows.append(row)
    largest = {f: max((r[f][1] or 0.0 for r in rows), default=0.0) for f in REPORT_METRICS}

    def badness(row: dict[str, Any]) -> tuple[int, float]:
        score = sum((row[f][1] or 0.0) / largest[f] for f in REPORT_METRICS if largest[f] > 0)
        return (0 if row["status"] != "ok" else 1, -score)

    return sorted(rows, key=badness)


def _bar(value: float | None, scale: float, css: str) -> str:
    width = 100.0 * (value or 0.0) / scale if scale > 0 else 0.0
    return f'<div class="bar {css}" style="width:{min(width, 100.0):.1f}%"></div>'


def _cell(values: tuple[float | None, float | None], scale: float) -> str:
    before, after = values
    text = " → ".join("–" if v is None else f"{v:.3g}" for v in values)
    return (f'<td class="m">{_bar(before, scale, "before")}{_bar(after, scale, "after")}'
            f"<span>{text}</span></td>")


def _html(rows: Sequence[Mapping[str, Any]], title: str, png_name: str | None) -> str:
    scale = {f: max((max(v or 0.0 for v in r[f]) for r in rows), default=0.0)
             for f in REPORT_METRICS}
    ok = sum(r["status"] == "ok" for r in rows)
    out = ["<!DOCTYPE html>", '<html><head><meta charset="utf-8">',
           f"<title>{html.escape(title)}</title>", """<style>
body { font: 14px sans-serif; margin: 1.5em; }
table { border-collapse: collapse; }
td, th { padding: 2px 8px; border-bottom: 1px solid #ddd; vertical-align: top; }
td.m { width: 14em; }
.bar { height: 7px; margin: 2px 0 0 0; }
.before { background: #aaa; } .after { background: #1f77b4; }
td.m span { font-size: 11px; color: #555; }
.failed { color: #b00; }
</style></head><body>""",
           f"<h1>{html.escape(title)}</h1>",
           f"<p>{len(rows)} clips: {ok} planted, {len(rows) - ok} failed. Bars: grey before, "
           "blue after, each metric the worse of the clip's legs in leg lengths, scaled to the "
           "largest in the library. Worst clips first.</p>"]
    if png_name:
        out.append(f'<p><img src="{html.escape(png_name)}" alt="worst clips" '
                   'style="max-width:100%"></p>')
    out.append("<table><tr><th>clip</th><th>frames</th>"
               + "".join(f"<th>{f}</th>" for f in REPORT_METRICS) + "</tr>")
    for row in rows:
        clip = html.escape(str(row["clip"]))
        if row["status"] != "ok":
            out.append(f'<tr class="failed"><td>{clip}</td><td>{row["frames"] or ""}</td>'
                       f'<td colspan="{len(REPORT_METRICS)}">failed: '
                       f'{html.escape(str(row["error"]))}</td></tr>')
            continue
        cells = "".join(_cell(row[f], scale[f]) for f in REPORT_METRICS)
        out.append(f"<tr><td>{clip}</td><td>{row['frames']}</td>{cells}</tr>")
    out.append("</table></body></html>")
    return "\n".join(out)


def _figure(rows: Sequence[Mapping[str, Any]], title: str) -> Any:
    import numpy as np
    from matplotlib.figure import Figure

    shown = [r for r in rows if r["status"] == "ok"][:PNG_CLIPS]
    n = max(len(shown), 1)
    fig = Figure(figsize=(4.2 * len(REPORT_METRICS), 1.2 + 0.32 * n))
    axes = fig.subplots(1, len(REPORT_METRICS), sharey=True)
    y = np.arange(len(shown))
    for ax, family in zip(axes, REPORT_METRICS, strict=True):
        before = [r[family][0] or 0.0 for r in shown]
        after = [r[family][1] or 0.0 for r in shown]
        ax.barh(y - 0.2, before, height=0.4, color="#aaaaaa", label="before")
        ax.barh(y + 0.2, after, height=0.4, color="#1f77b4", label="after")
        ax.set_title(family)
        ax.set_xlabel("leg lengths")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, [_short(str(r["clip"])) for r in shown])
    axes[0].invert_yaxis()
    axes[0].legend(loc="lower right", fontsize=8)
    failed = sum(r["status"] != "ok" for r in rows)
    fig.suptitle(f"{title}: worst {len(shown)} of {len(rows) - failed} planted clips"
                 + (f" ({failed} failed, listed in summary.html)" if failed else ""))
    fig.tight_layout()
    return fig


def _short(name: str, width: int = 36) -> str:
    return name if len(name) <= width else "…" + name[-(width - 1):]


def write_batch_report(records: Sequence[Mapping[str, Any]], html_path: str | Path,
                       png_path: str | Path | None = None, *, title: str = "footplant"
                       ) -> None:
    """Write the HTML report (and the PNG of the worst clips, which the HTML shows)."""
    from limbik._runtime.atomic import atomic_save, atomic_write

    rows = rank_clips(records)
    png = Path(png_path) if png_path is not None else None
    if png is not None:
        fig = _figure(rows, title)
        atomic_save(png, lambda tmp: fig.savefig(tmp, dpi=90, bbox_inches="tight"))
    with atomic_write(html_path, encoding="utf-8") as handle:
        handle.write(_html(rows, title, png.name if png is not None else None))
