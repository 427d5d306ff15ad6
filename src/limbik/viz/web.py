"""An interactive 3-D viewer of motions in one self-contained HTML file.

:func:`to_html` writes a page that draws one or more joint-position motions over each
other (joints and bones, each motion in its own colour), optionally on a terrain mesh,
with foot traces and contact frames highlighted on the feet. The page has an orbit
camera (drag to turn, right-drag or shift-drag to pan, wheel to zoom), a ground grid, and
play, pause, frame slider and speed controls. It works offline: three.js (MIT licence,
shipped beside this module as ``web_assets/LICENSE``) is inlined, and the motion data is
stored in the page as little-endian float32, base64-encoded, with JSON metadata. A
1000-frame, 31-joint pair of motions takes about 1 MB of data over the page's fixed
~0.7 MB of script.

The page reads URL parameters: ``frame=N`` shows frame N paused, ``speed=S`` sets the
playback speed, ``size=WxH`` draws the scene W by H CSS pixels, and ``azimuth=A`` and
``elevation=E`` (degrees) place the camera: azimuth 0 looks along -Z, 90 along -X;
elevation 0 is level, 90 straight down. While
paused it writes a check of what it loaded and drew (joint and frame counts, the first
frame's root, the joints' screen positions on the shown frame, terrain mesh vertices,
errors and loaded resources) as JSON into the element ``#limbik-check``.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from limbik._runtime.atomic import atomic_write
from limbik._runtime.validation import as_float, as_float_array, as_parents
from limbik.errors import InvalidInputError, NonFiniteInputError

__all__ = ["ViewerMotion", "footplant_page", "footplant_positions_page", "report_table",
           "to_html"]

_HERE = Path(__file__).with_name("web_assets")
#: Height-field samples drawn at most per side; a larger field is drawn every n-th sample.
MAX_TERRAIN_SAMPLES = 400
#: Colours of the motions, in order (the first is the source in a before/after pair).
COLOURS = ("#3d8bd9", "#f07c27", "#3fae5a", "#b45ad6", "#d6c23d", "#d64d6f")


@dataclasses.dataclass(frozen=True)
class ViewerMotion:
    """One motion drawn by :func:`to_html`.

    Attributes
    ----------
    positions : array_like (T, J, 3)
        World joint positions per frame (Y up, the clip's length units).
    parents : array_like (J,)
        Parent index per joint, -1 for a root (parents before children).
    names : sequence of str, optional
        Joint names (default ``joint0``, ``joint1``, ...), stored with the data.
    label : str
        The motion's name in the legend.
    feet : sequence of int
        Joints drawn with traces (with ``traces=True``) and contact highlights.
    contacts : array_like (T, len(feet)) of bool, optional
        Per frame, whether each foot joint is in contact (drawn highlighted).
    frame_time : float, optional
        Seconds per frame of this motion (default: the page's ``frame_time``); a motion
        at another rate shows its frame nearest the slider's time.
    """

    positions: Any
    parents: Any
    names: Sequence[str] | None = None
    label: str = ""
    feet: Sequence[int] = ()
    contacts: Any = None
    frame_time: float | None = None


def _three_script() -> str:
    """three.js's module build as a classic script that sets ``window.THREE``."""
    source = (_HERE / "three.module.min.js").read_text(encoding="utf-8")
    match = re.search(r"export\s*\{([^}]*)\}\s*;?\s*$", source)
    if match is None:  # pragma: no cover - the vendored file is fixed
        raise RuntimeError("the vendored three.js build has no export list")
    pairs = []
    for item in match.group(1).split(","):
        local, _, exported = item.strip().partition(" as ")
        pairs.append(f"{(exported or local).strip()}:{local.strip()}")
    body = source[:match.start()]
    return "(function(){\"use strict\";" + body + ";window.THREE={" + ",".join(pairs) + "};})();"


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array).astype("<f4").tobytes()).decode("ascii")


def _motion_record(index: int, motion: Any, frame_time: float) -> dict[str, Any]:
    if not isinstance(motion, ViewerMotion):
        raise InvalidInputError(f"motions[{index}] must be a ViewerMotion, got "
                                f"{type(motion).__name__}", argument="motions")
    name = f"motions[{index}]"
    pos = as_float_array(motion.positions, f"{name}.positions", (3,))
    if pos.ndim != 3 or pos.shape[0] < 1:
        raise InvalidInputError(f"{name}.positions must have shape (T, J, 3) with T >= 1, got "
                                f"{pos.shape}", argument=f"{name}.positions")
    if not np.all(np.isfinite(pos)):
        raise NonFiniteInputError(f"{name}.positions must be finite, got NaN or inf",
                                argument=f"{name}.positions")
    par = as_parents(motion.parents, f"{name}.parents", min_joints=1, forest=True)
    joints = pos.shape[1]
    if par.size != joints:
        raise InvalidInputError(f"{name}.parents must have {joints} entries (one per joint), "
                                f"got {par.size}", argument=f"{name}.parents")
    names = ([f"joint{j}" for j in range(joints)] if motion.names is None
             else [str(n) for n in motion.names])
    if len(names) != joints:
        raise InvalidInputError(f"{name}.names must have {joints} entries, got {len(names)}",
                                argument=f"{name}.names")
    feet = [int(f) for f in motion.feet]
    if any(not 0 <= f < joints for f in feet):
        raise InvalidInputError(f"{name}.feet must be joint indices in [0, {joints}), got "
                                f"{feet}", argument=f"{name}.feet")
    record: dict[str, Any] = {
        "label": motion.label or f"motion {index + 1}", "frames": int(pos.shape[0]),
        "joints": joints, "parents": par.tolist(), "names": names, "feet": feet,
        "colour": COLOURS[index % len(COLOURS)], "positions": _b64(pos), "contacts": None,
        "frameTime": frame_time if motion.frame_time is None else as_float(
            motion.frame_time, f"{name}.frame_time", minimum=0.0, exclusive=True)}
    if motion.contacts is not None:
        contacts = np.asarray(motion.contacts)
        if contacts.shape != (pos.shape[0], len(feet)):
            raise InvalidInputError(f"{name}.contacts must have shape ({pos.shape[0]}, "
                                    f"{len(feet)}) (frames, feet), got {contacts.shape}",
                                    argument=f"{name}.contacts")
        record["contacts"] = base64.b64encode(
            np.ascontiguousarray(contacts, dtype=bool).astype(np.uint8).tobytes()
        ).decode("ascii")
    return record


def _terrain_record(terrain: Any) -> dict[str, Any] | None:
    if terrain is None:
        return None
    try:
        heights = np.asarray(terrain.heights, dtype=np.float64)
        cell = float(terrain.cell_size)
        x0, z0 = (float(v) for v in terrain.origin)
    except (AttributeError, TypeError, ValueError):
        raise InvalidInputError(f"terrain must be a Terrain (heights, cell_size, origin), got "
                                f"{type(terrain).__name__}", argument="terrain") from None
    if heights.ndim != 2 or not np.all(np.isfinite(heights)):
        raise InvalidInputError(f"terrain heights must be a finite 2-D array, got shape "
                                f"{heights.shape}", argument="terrain")
    step = max(1, -(-max(heights.shape) // MAX_TERRAIN_SAMPLES))
    rows = np.unique(np.r_[np.arange(0, heights.shape[0], step), heights.shape[0] - 1])
    cols = np.unique(np.r_[np.arange(0, heights.shape[1], step), heights.shape[1] - 1])
    return {"rows": int(rows.size), "cols": int(cols.size),
            "x": _b64(x0 + cols * cell), "z": _b64(z0 + rows * cell),
            "heights": _b64(heights[np.ix_(rows, cols)]),
            "name": str(getattr(terrain, "name", "terrain"))}


def _cell(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return f"{float(value):.5g}"
    return str(value)


def to_html(path: str | Path, motions: Sequence[ViewerMotion] | ViewerMotion, *,
            frame_time: float, terrain: Any = None, traces: bool = False,
            metrics: Mapping[str, Mapping[str, Any]] | None = None,
            title: str = "limbik viewer") -> Path:
    """Write an interactive 3-D viewer of ``motions`` to ``path`` (one HTML file).

    ``motions`` is one :class:`ViewerMotion` or several, drawn over each other in
    distinct colours; the frame slider steps by ``frame_time`` seconds (> 0), and each
    motion shows its frame at the slider's time (a shorter one holds its last frame).
    ``terrain`` is a :class:`~limbik.placement.terrain.Terrain` (any object with
    ``heights (rows, cols)``, ``cell_size`` and ``origin``), drawn as a mesh through its
    samples (a field over 400 samples a side through every n-th sample); a ground grid
    lies at y = 0, or at the terrain's lowest sample.
    ``traces`` draws each foot's path. ``metrics`` is a table beside the scene:
    column name → {row name → value}. Returns the path written (atomically).
    """
    items = [motions] if isinstance(motions, ViewerMotion) else list(motions)
    if not items:
        raise InvalidInputError("motions must hold at least one motion, got none",
                                argument="motions")
    dt = as_float(frame_time, "frame_time", minimum=0.0, exclusive=True)
    records = [_motion_record(k, m, dt) for k, m in enumerate(items)]
    table = None
    if metrics is not None:
        columns = list(metrics)
        rows: list[str] = []
        for column in columns:
            rows.extend(r for r in metrics[column] if r not in rows)
        table = {"columns": columns,
                 "rows": [[r] + [_cell(metrics[c][r]) if r in metrics[c] else ""
                                 for c in columns] for r in rows]}
    meta = {"title": title, "frameTime": dt, "motions": records,
            "terrain": _terrain_record(terrain), "traces": bool(traces), "table": table}
    data = json.dumps(meta, separators=(",", ":")).replace("</", "<\\/")
    parts = {"TITLE": html.escape(title), "DATA": data,
             "THREE": _three_script().replace("</script", "<\\/script"),
             "VIEWER": (_HERE / "viewer.js").read_text(encoding="utf-8")}
    page = re.sub(r"\{\{(TITLE|DATA|THREE|VIEWER)\}\}", lambda m: parts[m.group(1)],
                  (_HERE / "viewer.html").read_text(encoding="utf-8"))
    with atomic_write(path, encoding="utf-8") as handle:
        handle.write(page)
    return Path(path)


def report_table(report: Any) -> dict[str, dict[str, Any]]:
    """A report's fields as a :func:`to_html` table: each field that maps names to
    numbers is a column (the metrics before and after), and the fields that are single
    numbers, and the count of contact spans per leg, are rows of a column "value"."""
    import numbers

    fields = ([f.name for f in dataclasses.fields(report)] if dataclasses.is_dataclass(report)
              else list(vars(report)))
    table: dict[str, dict[str, Any]] = {}
    for name in fields:
        value = getattr(report, name)
        if isinstance(value, numbers.Real):
            table.setdefault("value", {})[name] = value
        elif isinstance(value, Mapping) and value and all(isinstance(v, numbers.Real)
                                                          for v in value.values()):
            table[name] = dict(value)
    spans = getattr(report, "contacts", None)
    if isinstance(spans, Mapping):
        for side, runs in spans.items():
            table.setdefault("value", {})[f"{side} contacts"] = len(runs)
    return table


def footplant_page(path: str | Path, motion: Any, result: Any, terrain: Any, legs: Any,
                   report: Any, *, name: str = "clip") -> Path:
    """The viewer page of a planted clip: ``motion`` (the source) and ``result`` on
    ``terrain``, the feet's paths, each leg's ankle and toe red on the frames of its
    contact spans (``report.contacts[leg.side]``, half-open ``(start, stop)``), and
    :func:`report_table` of ``report`` beside them. ``legs`` have ``side``, ``ankle``
    and ``toe`` (None where there is none). Returns the path written."""
    return footplant_positions_page(
        path, [motion.world_positions()], [result.world_positions()], result.skeleton.parents,
        result.names, terrain, legs, [report], frame_time=result.frame_time, name=name)


def footplant_positions_page(path: str | Path, sources: Sequence[Any], results: Sequence[Any],
                             parents: Any, names: Sequence[str] | None, terrain: Any,
                             legs: Any, reports: Sequence[Any], *, frame_time: float,
                             name: str = "clip") -> Path:
    """:func:`footplant_page` of clips given as joint positions: each ``sources[k]`` and
    ``results[k]`` (``(T_k, J, 3)``, Y up, one skeleton of ``parents`` and ``names``,
    ``frame_time`` seconds per frame) over each other on ``terrain``, with the contacts
    of ``reports[k]`` on the feet of ``legs``. One clip is labelled ``source: NAME`` and
    ``planted`` with :func:`report_table` beside them; several are drawn where they
    are, pair ``k`` labelled ``source: NAME[k]`` and ``planted [k]``, and the table's
    rows once per clip (``[k] floor``, ...). Returns the path written."""
    if not 1 <= len(sources) == len(results) == len(reports):
        raise InvalidInputError(f"sources, results and reports must hold one entry per clip "
                                f"(at least one), got {len(sources)}, {len(results)} and "
                                f"{len(reports)}", argument="sources")
    several = len(sources) > 1
    tracks = []
    table: dict[str, dict[str, Any]] = {}
    for k, (source, result, report) in enumerate(zip(sources, results, reports, strict=True)):
        frames = len(result)
        feet: list[int] = []
        columns = []
        spans = getattr(report, "contacts", None) or {}
        for leg in legs:
            on = np.zeros(frames, dtype=bool)
            for start, stop in spans.get(leg.side, ()):
                on[start:stop] = True
            for joint in (leg.ankle, leg.toe):
                if joint is not None:
                    feet.append(joint)
                    columns.append(on)
        contacts = np.stack(columns, axis=1) if columns else None
        tag = f"[{k}]" if several else ""
        for positions, label in ((source, f"source: {name}{tag}"),
                                 (result, f"planted {tag}".rstrip())):
            tracks.append(ViewerMotion(positions, parents, names, label, feet=feet,
                                       contacts=contacts if len(positions) == frames else None,
                                       frame_time=frame_time))
        for column, rows in report_table(report).items():
            table.setdefault(column, {}).update({f"{tag} {row}".lstrip(): value
                                                 for row, value in rows.items()})
    return to_html(path, tracks, frame_time=frame_time, terrain=terrain, traces=True,
                   metrics=table,
                   title=f"footplant: {name} on {getattr(terrain, 'name', 'terrain')}")
