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
from ..language import N_, tr

__all__ = ["FOOT", "RATIO_RULE", "Rendered", "draw", "numbers"]

FOOT: Final = N_(
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
        norm_lines.append(charts.Line(tr("global norm"), snap.global_norm, "#333333", dashed=True))
    thresholds = [
        (explode_norm, tr("exploding above {value}").format(value=charts.short(explode_norm)), charts.EXPLODE_COLOR),
        (vanish_norm, tr("vanishing below {value}").format(value=charts.short(vanish_norm)), charts.VANISH_COLOR),
    ]
    drawn = {
        "loss": charts.line_chart("loss", tr("Training loss"), [charts.Line(tr("loss"), snap.loss, "#0072b2")], y_label=tr("loss"), marks=marks),
        "grads": charts.line_chart(
            "grads", tr("Gradient norm per variable"), norm_lines, y_label=tr("‖gradient‖"), hlines=thresholds, marks=marks,
            note=tr("thresholds of GradientMonitor"),
        ),
        "ratio": charts.line_chart(
            "ratio", tr("Update-to-weight ratio ‖Δw‖/‖w‖"),
            [charts.Line(k, p, colors.get(k, "#000")) for k, p in snap.ratios.items()],
            y_label=tr("ratio"), hlines=[(RATIO_RULE, tr("rule of thumb 1e-3"), "#6b6b6b")], marks=marks,
        ),
        "hist": charts.histogram_chart(
            "hist", tr("Gradient histograms") + (tr(" at step {step}").format(step=snap.latest_step) if snap.latest_step is not None else ""),
            [charts.Panel(k, v, colors.get(k, "#000")) for k, v in snap.latest.items() if len(v) > 1],
            note=_single_note(snap.latest),
            empty=tr("each gradient is one number: see its norm") if snap.latest else tr("no gradients logged yet"),
        ),
        "tensors": charts.line_chart(
            "tensors",
            tr("Live tensors: memory().num_tensors")
            + (tr(" − {n} alive before the run").format(n=snap.tensors_before) if snap.tensors_before is not None else ""),
            [charts.Line(tr("tensors"), snap.tensors, "#009e73")],
            log_y=False, y_label=tr("tensors"), marks=marks, note=tr("a leak shows as a ramp"),
        ),
    }
    last, flags, flag_count, first = snap.last_step, snap.flags, snap.flag_count, snap.first_flag
    parts = ["<b>" + tr("step {step}").format(step=last if last is not None else "–") + "</b>"]
    if snap.last_loss is not None:
        parts.append(tr("loss {value}").format(value=charts.short(snap.last_loss)))
    parts.append(tr("{n} steps logged").format(n=snap.steps_logged))
    parts.append(tr("training finished") if finished else tr("training…"))
    if viewers is not None:
        parts.append((tr("{n} viewer") if viewers == 1 else tr("{n} viewers")).format(n=viewers))
    if flag_count > len(flags) and first is not None:  # the first flag of a run explains the rest
        text = tr("{n} flags raised; the first:\n{first}\nthe latest:\n").format(n=flag_count, first=tr(first)) + "\n".join(map(tr, flags))
    elif flag_count:
        text = (tr("{n} flag raised; the latest:\n") if flag_count == 1 else tr("{n} flags raised; the latest:\n")).format(n=flag_count) + "\n".join(map(tr, flags))
    else:
        text = tr("no exploding or vanishing gradient flagged")
    backward = backward_panel.table(snap.backward, snap.backward_total, snap.backward_step)
    return {"charts": drawn, "status": " · ".join(parts), "flags": text, "flags_calm": not flag_count, "backward": backward}


def _single_note(latest: dict[str, list[float]]) -> str:
    """The histogram chart's note naming the one-entry gradients it leaves out (a histogram of one value says nothing)."""
    single = [name for name, values in latest.items() if len(values) == 1]
    if not single or len(single) == len(latest):
        return ""
    names = ", ".join(single[:3]) + (tr(" and {n} more").format(n=len(single) - 3) if len(single) > 3 else "")
    return tr("one value, not drawn: {names}").format(names=names)


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
