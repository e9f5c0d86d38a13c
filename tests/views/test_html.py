"""Pictures for Jupyter: ``_repr_html_`` of tensors and of ``memory()``, ``profile()`` and leak reports.

Each picture must escape user text (a variable named ``<script>``), survive NaN, Inf, 1e308 and
empty shapes, cut big tensors short, and leave ``repr``/``str`` exactly as they were.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

import microtape as mt
from microtape.views.html import MAX_CELLS, escape, heatmap, record_html, sparkline_svg, table

EVIL = "<script>alert(1)</script>"


class _Checker(HTMLParser):
    """Collects the tags, so a test can see no ``<script>`` got through and tags are balanced."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag not in ("br", "img", "polyline", "rect", "circle", "line", "path"):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.open and self.open[-1] == tag:
            self.open.pop()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def well_formed(markup: str) -> list[str]:
    """The tags of ``markup``; fails if a ``<script>`` tag is there or a tag is left open."""
    checker = _Checker()
    checker.feed(markup)
    checker.close()
    assert "script" not in checker.tags, markup
    assert checker.open == [], f"unclosed {checker.open}"
    return checker.tags


def test_escape_covers_every_special_character() -> None:
    assert escape('&<>"\'') == "&amp;&lt;&gt;&quot;&#x27;"


def test_a_variable_named_script_is_shown_as_text() -> None:
    v = mt.variable([[1.0, 2.0], [3.0, 4.0]], name=EVIL)
    markup = v._repr_html_()
    well_formed(markup)
    assert EVIL not in markup and escape(EVIL) in markup


@pytest.mark.parametrize(
    "values",
    [
        [1.0, float("nan"), float("inf"), -float("inf"), 1e308, -1e308],
        [[1e308, -1e308], [float("nan"), 5e-324]],
        [[5e-324, -5e-324], [0.0, -0.0]],
        [],
    ],
    ids=["1-D extremes", "2-D extremes", "2-D subnormal", "empty"],
)
def test_extreme_values_are_drawn(values: list[float]) -> None:
    t = mt.tensor(values)
    markup = t._repr_html_()
    well_formed(markup)
    assert f"shape={t.shape}" in markup


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4), ()])
def test_empty_shapes_and_scalars(shape: tuple[int, ...]) -> None:
    t = mt.zeros(shape)
    well_formed(t._repr_html_())


def test_2d_has_a_heat_map_and_nan_inf_counts() -> None:
    markup = mt.tensor([[1.0, -2.0], [float("nan"), float("inf")]])._repr_html_()
    assert markup.count("<svg") == 1 and markup.count("<rect") == 4
    assert "1 NaN" in markup and "1 Inf" in markup
    assert "#a1a1aa" in markup and "#18181b" in markup  # NaN grey, Inf black


def test_big_tensors_are_cut_short_with_an_ellipsis() -> None:
    t = mt.zeros((500, 400))
    markup = t._repr_html_()
    assert markup.count("<rect") == MAX_CELLS * MAX_CELLS
    assert markup.count("<td") < 2 * (MAX_CELLS + 2) ** 2 and "…" in markup
    assert len(markup) < 200_000
    long = mt.zeros((10_000,))._repr_html_()
    assert "…" in long and len(long) < 20_000


def test_repr_and_str_stay_text() -> None:
    t = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert repr(t) == str(t) == "Tensor([[1.0, 2.0], [3.0, 4.0]], shape=(2, 2))"
    assert str(mt.memory()).startswith(f"{mt.memory().num_tensors} tensors")


def test_disposed_tensor() -> None:
    t = mt.tensor([1.0])
    t.dispose()
    assert "(disposed)" in t._repr_html_()


def test_memory_profile_and_leak_reports() -> None:
    info = mt.memory()
    markup = info._repr_html_()
    well_formed(markup)
    assert f"<td style=\"border: 1px solid #d4d4d8; padding: 2px 6px; text-align: right\">{info.num_tensors}</td>" in markup
    prof = mt.profile(lambda: mt.tidy(lambda: (mt.ones((4,)) * 2.0).sum()))
    markup = prof._repr_html_()
    well_formed(markup)
    assert "kernels" in markup and ">mul<" in markup and ">sum<" in markup
    x = mt.tensor([1.0, 2.0])
    with mt.leak_check(on_leak="ignore") as report:
        y = x * x
    markup = report._repr_html_()
    well_formed(markup)
    assert "leak_check: 1 tensor(s), 16 bytes still alive" in markup and ">mul<" in markup
    y.dispose()
    with mt.leak_check(on_leak="ignore") as empty:
        pass
    assert "no leaks" in empty._repr_html_()


def test_record_html_escapes_field_values() -> None:
    report = mt.profile(lambda: EVIL)
    markup = record_html(report)
    well_formed(markup)
    assert escape(EVIL) in markup and EVIL not in markup


def test_table_cuts_long_tables() -> None:
    markup = table(["a"], [[str(i)] for i in range(500)], caption='&<>"')
    assert "… 450 more" in markup and "&amp;&lt;&gt;&quot;" in markup
    well_formed(markup)


@pytest.mark.parametrize(
    "series",
    [[], [1.0], [0.0, 0.0], [float("nan")] * 3, [-1.7e308, 1.7e308, float("inf")], [1e-300, 1e300]],
)
def test_sparkline_and_heatmap_survive_any_series(series: list[float]) -> None:
    for log in (False, True):
        svg = sparkline_svg(series, log=log)
        well_formed(svg)
        coords = [float(c) for c in re.findall(r'(?:points="|\s|,|c[xy]=")(-?[0-9.]+)', svg)]
        assert all(0.0 <= c <= 160.0 for c in coords), svg
    if series:
        well_formed(heatmap(series, 1, len(series)))
