"""The ``check_grads`` report in Jupyter: rows coloured by status, the culprit and its line highlighted."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import microtape as mt
from microtape.views.html import BAD, GOOD, MARK, WARN, escape

GradFn = Callable[[mt.Tensor], mt.Tensor]


def wrong_scale(x: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    return x * x, lambda dy: dy * x  # forgot the 2


def test_a_failing_report_highlights_the_culprit_and_its_line() -> None:
    fn = mt.custom_grad(wrong_scale)
    report = mt.check_grads(lambda x: fn(x).sum(), [mt.tensor([0.5, -0.3])], seed=0)  # the culprit's line
    line = inspect.getsource(test_a_failing_report_highlights_the_culprit_and_its_line).splitlines()[2].strip()
    assert not report.ok and report.culprit is not None
    markup = report._repr_html_()
    assert markup.count(f'<tr style="{BAD}">') == len(report.failures) > 0
    assert f'<pre style="{MARK}; margin: 4px 0; padding: 2px 4px">{escape(line)}</pre>' in markup
    assert escape(report.culprit.where) in markup
    assert "check_grads FAILED" in markup
    assert str(report).startswith("check_grads FAILED")  # the text stays


def test_ok_and_kink_rows_are_coloured() -> None:
    report = mt.check_grads(mt.abs, [mt.tensor([0.0, 2.0])])
    markup = report._repr_html_()
    statuses = [r.status for r in report.rows]
    assert markup.count(f'<tr style="{WARN}">') == statuses.count("kink") == 1
    assert markup.count(f'<tr style="{GOOD}">') == statuses.count("ok")


def test_notes_and_messages_are_escaped() -> None:
    report = mt.check_grads(mt.exp, [mt.tensor([1.0])])
    report.notes.append('a note with &<>" in it')
    markup = report._repr_html_()
    assert "a note with &amp;&lt;&gt;&quot; in it" in markup and '&<>"' not in markup


def test_extreme_inputs_give_a_report_picture() -> None:
    report = mt.check_grads(mt.exp, [mt.tensor([1e308, float("nan"), -float("inf")])])
    markup = report._repr_html_()
    assert "<table" in markup and "nan" in markup
