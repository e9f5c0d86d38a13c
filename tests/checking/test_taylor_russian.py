"""mt.taylor_test in Russian: its reports (text, HTML, the SVG's words) and its argument errors, scanned for English.

The scanner is ``tests/i18n/test_russian_run.py``'s ``english()``. What a Russian text writes as it is
passes as a name: the function and its arguments (``taylor_test``, ``h0``, ``steps``, ``order``,
``seed``, ``direction``) and the value ``nan`` a table cell or a reason prints. The English stays the
data: ``report.reason`` and the notes are English, translated where they are printed.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import fields

import pytest

import microtape as mt
from microtape.checking.taylor import REASONS
from microtape.language import tr
from tests.i18n.test_russian_run import english, russian  # noqa: F401 - russian: the fixture that sets the language

NAMES = frozenset({"taylor_test", "h0", "steps", "order", "seed", "direction", "nan"})
"""Names and values a Russian taylor_test text writes as they are."""
CODE = "direction=[mt.ones_like(x) for x in inputs]"
"""The hint's code, the same in both languages (its ``for`` and ``in`` are Python, not English prose)."""


def words(text: str) -> list[str]:
    """The English words of a terminal text, outside code, names and values."""
    return [w for w in english(text.replace(CODE, " ")) if w not in NAMES]


def page_text(markup: str) -> str:
    """What a notebook shows of ``_repr_html_``: the text of the elements, the SVG's title and labels among them."""
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def _halved() -> Callable[[mt.Tensor], mt.Tensor]:
    half = mt.custom_grad(lambda t: (t * t, lambda dy: dy * t))  # BUG: d(t²) is 2 t dy
    return lambda t: half(t).sum()


REPORTS: dict[str, tuple[Callable[[], mt.TaylorReport], str, str]] = {
    "passed": (lambda: mt.taylor_test(lambda t: (t * t).sum(), [mt.tensor([1.0, 2.0])]), "passed", "taylor_test: пройдена"),
    "passed, order 2": (
        lambda: mt.taylor_test(lambda t: (t.sin() * t.exp()).sum(), [mt.tensor([0.3, -1.2, 2.0])], order=2),
        "passed", "член"),
    "failed": (lambda: mt.taylor_test(_halved(), [mt.tensor([0.3, -1.2, 2.0])]), "failed", "taylor_test: не пройдена"),
    "inconclusive: a kink": (
        lambda: mt.taylor_test(lambda t: t.abs().sum(), [mt.tensor([0.0, 2.0])]), "inconclusive", "излом"),
    "inconclusive: nan": (
        lambda: mt.taylor_test(lambda t: t.log().sum(), [mt.tensor([-1.0, 2.0])]), "inconclusive", "f в точке x равна nan"),
    "inconclusive: an inf gradient": (
        lambda: mt.taylor_test(lambda t: t.sqrt().sum(), [mt.tensor([0.0, 2.0])]), "inconclusive", "градиент вдоль направления"),
    "inconclusive: a jump": (
        lambda: mt.taylor_test(lambda t: mt.where(t.greater(0.0), t + 1.0, t).sum(), [mt.tensor([0.0, 2.0])],
                               [mt.tensor([1.0, 1.0])]),
        "inconclusive", "скачет"),
    "a non-scalar f": (lambda: mt.taylor_test(lambda t: t * t, [mt.tensor([1.0, 2.0])]), "passed", "f возвращает форму (2,)"),
}


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_a_report_in_russian(russian: None, name: str) -> None:
    make, verdict, expected = REPORTS[name]
    report = make()
    assert report.verdict == verdict
    text = str(report)
    assert expected in text, text
    assert "почему:" in text and "порядок" in text, text
    assert words(text) == [], text
    shown = page_text(report._repr_html_())
    assert expected in shown and words(shown) == [], shown
    assert re.fullmatch(r"[a-zA-Z].*", report.reason)  # the data stays English: tr() translates it where it is printed
    assert tr(report.reason, "en") == report.reason


def test_the_plot_and_the_table_words_in_russian(russian: None) -> None:
    report = mt.taylor_test(lambda t: t.abs().sum(), [mt.tensor([0.0, 2.0])])
    svg = report._repr_html_()
    assert "<title>остатки в зависимости от h, обе оси логарифмические</title>" in svg
    assert re.search(r">log10 h: от -?\d\.\d\d до -?\d\.\d\d</text>", svg), svg
    assert report.columns()[-3:] == ["порядок", "порог", "излом"]
    assert report.cells()[0][-1] == "пересечён"


@pytest.mark.parametrize("m", sorted(REASONS))
@pytest.mark.parametrize("case", [f.name for f in fields(REASONS[1])])
def test_every_reason_of_a_term_has_its_russian(russian: None, m: int, case: str) -> None:
    english_text = getattr(REASONS[m], case).format("2.00", "0.1", "0.05", "0.025")
    russian_text = tr(english_text)
    assert russian_text != english_text and words(russian_text) == [], russian_text
    assert ("гессиан" in russian_text or "втор" in russian_text) == (m == 2), russian_text  # the term is the one tested


ERRORS: dict[str, tuple[Callable[[], object], type[mt.MicrotapeError], str]] = {
    "order": (lambda: mt.taylor_test(lambda t: t.sum(), [mt.tensor([1.0])], order=3),  # type: ignore[call-overload]  # the wrong order under test
              mt.InvalidArgumentError, "order=3 не равен ни 1, ни 2"),
    "h0": (lambda: mt.taylor_test(lambda t: t.sum(), [mt.tensor([1.0])], h0=-1.0), mt.InvalidArgumentError, "первый шаг"),
    "steps": (lambda: mt.taylor_test(lambda t: t.sum(), [mt.tensor([1.0])], steps=1), mt.InvalidArgumentError, "steps=1"),
    "seed": (lambda: mt.taylor_test(lambda t: t.sum(), [mt.tensor([1.0])], seed=1.5),  # type: ignore[call-overload]  # the wrong seed under test
             mt.InvalidArgumentError, "не целое число"),
    "direction, a tensor": (
        lambda: mt.taylor_test(lambda t: t.sum(), [mt.tensor([1.0])], mt.tensor([1.0])),  # type: ignore[call-overload]  # not a list: under test
        mt.InvalidArgumentError, "списком тензоров"),
    "direction, a shape": (
        lambda: mt.taylor_test(lambda t: t.sum(), [mt.tensor([1.0])], [mt.tensor([1.0, 2.0])]), mt.ShapeError, "формы [(2,)]"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_an_argument_error_in_russian(russian: None, name: str) -> None:
    call, kind, expected = ERRORS[name]
    with pytest.raises(kind) as caught:
        call()
    text = str(caught.value)
    assert expected in text and "подсказка:" in text, text
    assert words(text) == [], text


def test_the_english_is_what_it_was() -> None:
    report = mt.taylor_test(_halved(), [mt.tensor([0.3, -1.2, 2.0])])
    lines = str(report).splitlines()
    assert lines[0] == "taylor_test failed: order 1, 5 steps from h0=0.1, f(x) = 5.53, gradient along v = -1.31634"
    assert lines[1].split() == ["h", "|f(x+hv)", "-", "f(x)|", "order", "...", "-", "h", "∇f·v", "order", "floor", "kink"]
    assert lines[-3] == "  (* at the rounding floor: not measured; order: log2 of the remainder's ratio to the previous step's)"
    assert lines[-2] == (
        "  why: the remainder with the gradient term shrinks like h^1.00, not h^2: the gradient along the direction is wrong "
        "(it gives -1.31634, f's change says about -2.629387 at h=0.00625)"
    )
    assert lines[-1] == "  note: direction: random (seed 0), each entry scaled to its input's magnitude"
    with pytest.raises(mt.InvalidArgumentError) as caught:
        mt.taylor_test(lambda t: t.sum(), [mt.tensor([1.0])], steps=1)
    assert str(caught.value) == (
        "taylor_test: steps=1 gives no order.\n"
        "  An order is measured between two steps: steps is an int, 2 or more.\n"
        "  hint: use steps=5."
    )
