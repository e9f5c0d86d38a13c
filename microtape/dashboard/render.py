"""Drawing a recorded run: the five charts, the status line and the flags, and the numbers of ``/data.json``.

``draw()`` turns a
``Snapshot`` into what ``Dashboard.render`` returns and the event stream
sends: one SVG per chart (the loss, the gradient norms with the monitor's
thresholds, the update-to-weight ratios, the latest gradients' histograms,
the live tensor count) and the table of the last backward pass logged
(``backward_panel.py``), one status line and the flags text. ``numbers()``
turns it into the plain lists ``Dashboard.data`` returns. Both are pure
functions of the snapshot, called after the dashboard's lock is released.
"""

from __future__ import annotations

from typing import Final, TypedDict

from . import backward_panel
from . import charts
from .recording import Points, Snapshot

__all__ = ["FOOT", "RATIO_RULE", "Rendered", "draw", "numbers"]

FOOT: Final = (
    "Drawn by microtape's dashboard; works offline. Older points are thinned "
    "(each kept point is the largest of those it replaces)."
)
RATIO_RULE: Final = 1e-3  # update/weight near 1e-3 is the usual rule of thumb for SGD-like training


class Rendered(TypedDict):
    """One drawing of the page: what ``Dashboard.render`` returns and the event stream sends."""

    charts: dict[str, str]
    status: str
    flags: str
    flags_calm: bool
    backward: str


def draw(snap: Snapshot, explode_norm: float, vanish_norm: float, finished: bool, viewers: int | None = None) -> Rendered:
    """Every chart of ``snap``, the status line (``viewers`` adds their count) and the flags text."""
    colors, marks = snap.colors, snap.marks
    norm_lines = [charts.Line(k, p, colors.get(k, "#000")) for k, p in snap.norms.items()]
    if snap.global_norm:
        norm_lines.append(charts.Line("global norm", snap.global_norm, "#333333", dashed=True))
    thresholds = [
        (explode_norm, f"exploding above {charts.short(explode_norm)}", charts.EXPLODE_COLOR),
        (vanish_norm, f"vanishing below {charts.short(vanish_norm)}", charts.VANISH_COLOR),
    ]
    drawn = {
        "loss": charts.line_chart("loss", "Training loss", [charts.Line("loss", snap.loss, "#0072b2")], y_label="loss", marks=marks),
        "grads": charts.line_chart(
            "grads", "Gradient norm per variable", norm_lines, y_label="‖gradient‖", hlines=thresholds, marks=marks,
            note="thresholds of GradientMonitor",
        ),
        "ratio": charts.line_chart(
            "ratio", "Update-to-weight ratio ‖Δw‖/‖w‖",
            [charts.Line(k, p, colors.get(k, "#000")) for k, p in snap.ratios.items()],
            y_label="ratio", hlines=[(RATIO_RULE, "rule of thumb 1e-3", "#6b6b6b")], marks=marks,
        ),
        "hist": charts.histogram_chart(
            "hist", "Gradient histograms" + (f" at step {snap.latest_step}" if snap.latest_step is not None else ""),
            [charts.Panel(k, v, colors.get(k, "#000")) for k, v in snap.latest.items() if len(v) > 1],
            note=_single_note(snap.latest),
            empty="each gradient is one number: see its norm" if snap.latest else "no gradients logged yet",
        ),
        "tensors": charts.line_chart(
            "tensors",
            "Live tensors: memory().num_tensors"
            + (f" − {snap.tensors_before} alive before the run" if snap.tensors_before is not None else ""),
            [charts.Line("tensors", snap.tensors, "#009e73")],
            log_y=False, y_label="tensors", marks=marks, note="a leak shows as a ramp",
        ),
    }
    last, flags, flag_count, first = snap.last_step, snap.flags, snap.flag_count, snap.first_flag
    parts = [f"<b>step {last if last is not None else '–'}</b>"]
    if snap.last_loss is not None:
        parts.append(f"loss {charts.short(snap.last_loss)}")
    parts.append(f"{snap.steps_logged} steps logged")
    parts.append("training finished" if finished else "training…")
    if viewers is not None:
        parts.append(f"{viewers} viewer{'s' if viewers != 1 else ''}")
    if flag_count > len(flags) and first is not None:  # the first flag of a run explains the rest
        text = f"{flag_count} flags raised; the first:\n{first}\nthe latest:\n" + "\n".join(flags)
    elif flag_count:
        text = f"{flag_count} flag{'s' if flag_count != 1 else ''} raised; the latest:\n" + "\n".join(flags)
    else:
        text = "no exploding or vanishing gradient flagged"
    backward = backward_panel.table(snap.backward, snap.backward_total, snap.backward_step)
    return {"charts": drawn, "status": " · ".join(parts), "flags": text, "flags_calm": not flag_count, "backward": backward}


def _single_note(latest: dict[str, list[float]]) -> str:
    """The histogram chart's note naming the one-entry gradients it leaves out (a histogram of one value says nothing)."""
    single = [name for name, values in latest.items() if len(values) == 1]
    if not single or len(single) == len(latest):
        return ""
    names = ", ".join(single[:3]) + (f" and {len(single) - 3} more" if len(single) > 3 else "")
    return f"one value, not drawn: {names}"


def numbers(snap: Snapshot, title: str, finished: bool, explode_norm: float, vanish_norm: float) -> dict[str, object]:
    """The recorded series as plain lists: what ``Dashboard.data`` returns and ``/data.json`` serves."""

    def pts(points: Points) -> list[list[float]]:
        return [[st, v] for st, v in points]

    return {
        "title": title,
        "steps_logged": snap.steps_logged,
        "last_step": snap.last_step,
        "finished": finished,
        "loss": pts(snap.loss),
        "grad_norm": {k: pts(p) for k, p in snap.norms.items()},
        "global_norm": pts(snap.global_norm),
        "update_ratio": {k: pts(p) for k, p in snap.ratios.items()},
        "tensors": pts(snap.tensors),
        "tensors_before": snap.tensors_before,
        "marks": [[s, label] for s, label in snap.marks],
        "flags": list(snap.flags),
        "flag_count": snap.flag_count,
        "thresholds": {"explode_norm": explode_norm, "vanish_norm": vanish_norm},
        "backward": {
            "step": snap.backward_step,
            "steps": snap.backward_total,
            "rows": [dict(zip(backward_panel.KEYS, row)) for row in snap.backward],
        },
    }
