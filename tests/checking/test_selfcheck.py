"""``python -m microtape selfcheck``: every primitive against finite differences."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

import microtape as mt
from microtape.checking import samples as _samples
from microtape.engine.primitive import OPS
from microtape.cli import main, selfcheck

ROOT = Path(__file__).resolve().parents[2]


def _rows(text: str) -> dict[str, str]:
    """The table's lines by op name."""
    return {line.split()[0]: line for line in text.splitlines()[1:-1]}


@pytest.mark.slow
def test_selfcheck_command_exits_zero() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "microtape", "selfcheck"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["op", "cases", "full", "fast", "order", "2", "forward", "worst", "abs", "err"]
    assert lines[-1] == "selfcheck passed: every primitive agrees with finite differences, first and second derivatives"
    assert set(_rows(done.stdout)) == set(OPS)  # one row per primitive
    assert done.stderr == ""


def test_selfcheck_table_marks_each_kind_of_op() -> None:
    buffer = io.StringIO()
    assert selfcheck(buffer) == 0
    rows = _rows(buffer.getvalue())
    assert rows["exp"].split()[:5] == ["exp", "1", "ok", "ok", "ok"]
    assert rows["relu"].split()[:5] == ["relu", "1", "ok", "ok", "ok"]  # away from its kink: order 2 is 0
    assert rows["greater"].split()[2:] == ["ok", "ok", "ok", "ok", "0.00e+00"]  # piecewise constant: zero derivatives
    assert rows["sign"].split()[2:] == ["ok", "ok", "ok", "ok", "0.00e+00"]
    assert "FAIL" not in buffer.getvalue()


def test_selfcheck_fails_when_a_vjp_is_broken(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(OPS["exp"], "vjp", lambda dout, out, x: (dout * out * 2.0,))  # twice too big
    assert selfcheck() == 1
    out = capsys.readouterr().out
    rows = _rows(out)
    # forward mode is the VJP of the VJP, so a wrong VJP makes its JVP wrong as well
    assert rows["exp"].split()[:6] == ["exp", "1", "FAIL", "FAIL", "FAIL", "FAIL"]
    # logsumexp's VJP calls exp, so its second derivative goes through the broken VJP too
    # (its JVP differentiates logsumexp's VJP with respect to the cotangent, which exp's VJP never sees)
    assert rows["logsumexp"].split()[:6] == ["logsumexp", "3", "ok", "ok", "FAIL", "ok"]
    # and so does softmax_cross_entropy's (its VJP computes the softmax with exp)
    assert rows["softmax_cross_entropy"].split()[:5] == ["softmax_cross_entropy", "3", "ok", "ok", "FAIL"]
    assert [name for name, row in rows.items() if "FAIL" in row] == ["exp", "logsumexp", "softmax_cross_entropy"]
    assert out.splitlines()[-1] == "selfcheck FAILED: 6 check(s) disagree with finite differences"


def test_selfcheck_fails_when_an_op_has_no_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = dict(_samples.CASES)
    del cases["tanh"]
    monkeypatch.setattr("microtape.cli.CASES", cases)
    buffer = io.StringIO()
    assert selfcheck(buffer) == 1
    assert "tanh                       0  no sample inputs: add them to microtape/checking/samples.py" in buffer.getvalue()


def test_main_runs_selfcheck(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selfcheck"]) == 0
    assert capsys.readouterr().out.endswith("selfcheck passed: every primitive agrees with finite differences, first and second derivatives\n")
    st = mt.memory()
    assert st.num_tensors_held_by_tapes == 0
