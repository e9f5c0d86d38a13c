"""Plant typical bugs one at a time and see whether the tests notice: a small mutation check.

Not collected by pytest (its name does not start with ``test_``); run it by hand::

    python tests/mutation.py                    # every mutant (slow: one pytest run each)
    python tests/mutation.py --only vjp-        # the mutants whose name contains "vjp-"
    python tests/mutation.py --list             # the mutants and the tests that must kill them

Each mutant is one textual change to one file of ``microtape/`` (an operator
swapped, a sign flipped, a factor dropped, a check removed, ``return text`` in
the page's escaping, ...). The script copies the checkout once into a
temporary folder, then for each mutant applies its change there, runs the
fast tier (``-m "not slow" -x``) of the test files that guard that file, plus
the mutated module's own doctests, and puts the file back. A mutant is
*killed* when those tests fail (or hang past ``--timeout``), and *survives*
when they pass: then either a test is missing, or the change does not alter
behaviour (say why in ``tests/README.md``).

Before the mutants, every group of test files runs once on the unchanged copy
(``--no-baseline`` skips this): a group that fails there would make every
mutant look killed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# What guards what: the test files a mutant of each area must make fail.
OPS = ("tests/ops/test_ops.py",)
ARENA = ("tests/engine/test_memory.py", "tests/autodiff/test_tape.py")
OPTIMIZERS = ("tests/train/test_train.py", "tests/test_planted_bugs.py")
CHECKER = ("tests/checking/test_gradcheck.py",)
GRADER = ("tests/test_planted_bugs.py", "tests/classroom/test_exercises.py")
PAGE = ("tests/test_planted_bugs.py", "tests/dashboard/test_dashboard.py")
CHECKPOINT = ("tests/test_planted_bugs.py", "tests/train/test_checkpoint.py")
HABITS = ("tests/test_planted_bugs.py", "tests/test_misuse.py")


@dataclass(frozen=True)
class Mutant:
    """Replace ``old`` (which must occur exactly once in ``path``) by ``new``.

    ``select`` narrows the run to the tests whose id matches it (pytest's ``-k``): for a VJP,
    the op's own cases, so a killed mutant does not wait for the rest of the op table."""

    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    select: str | None = None


ARI, PW, TR = "microtape/ops/arithmetic.py", "microtape/ops/piecewise.py", "microtape/ops/transcendental.py"
RED, SHP = "microtape/ops/reduce.py", "microtape/ops/shape_ops.py"
RT, TAPE, MEM = "microtape/engine/arena.py", "microtape/engine/tape.py", "microtape/engine/memory.py"
OPT = "microtape/train/optimizers.py"

MUTANTS: list[Mutant] = [
    # ── the op table's VJPs ──────────────────────────────────────────────────────────────
    Mutant("vjp-add-y-sign", ARI, "unbroadcast(dout, y.shape) if needs[1]", "unbroadcast(neg(dout), y.shape) if needs[1]", OPS, "add"),
    Mutant("vjp-sub-y-sign", ARI, "unbroadcast(neg(dout), y.shape) if needs[1]", "unbroadcast(dout, y.shape) if needs[1]", OPS, "sub"),
    Mutant("vjp-mul-operand-swap", ARI, "unbroadcast(mul(dout, y), x.shape)", "unbroadcast(mul(dout, x), x.shape)", OPS, "mul"),
    Mutant("vjp-div-x-mul-for-div", ARI, "unbroadcast(div(dout, y), x.shape)", "unbroadcast(mul(dout, y), x.shape)", OPS, "div"),
    Mutant("vjp-div-y-sign", ARI, "unbroadcast(neg(div(mul(dout, out), y)), y.shape)", "unbroadcast(div(mul(dout, out), y), y.shape)", OPS, "div"),
    Mutant("vjp-neg-sign", ARI, "return (neg(dout),)", "return (dout,)", OPS, "neg"),
    Mutant("vjp-clone-sign", ARI, "def _clone_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:\n    return (dout,)",
           "def _clone_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:\n    return (neg(dout),)", OPS, "clone"),
    Mutant("vjp-square-factor-dropped", ARI, "mul(dout, x * 2.0)", "mul(dout, x)", OPS, "square"),
    Mutant("vjp-sqrt-factor-dropped", ARI, "div(dout, out * 2.0)", "div(dout, out)", OPS, "sqrt"),
    Mutant("vjp-pow-x-exponent", TR, "pow(x, y - 1.0)", "pow(x, y)", OPS, "pow"),
    Mutant("vjp-pow-y-out-for-x", TR, "mul(out, safe_log)", "mul(x, safe_log)", OPS, "pow"),
    Mutant("vjp-exp-factor-dropped", TR, "return (mul(dout, out),)", "return (dout,)", OPS, "exp"),
    Mutant("vjp-log-mul-for-div", TR, "return (div(dout, x),)", "return (mul(dout, x),)", OPS, "log"),
    Mutant("vjp-abs-sign-dropped", PW, "return (mul(dout, sign(x)),)", "return (dout,)", OPS, "abs"),
    Mutant("vjp-sin-sin-for-cos", TR, "return (mul(dout, cos(x)),)", "return (mul(dout, sin(x)),)", OPS, "sin"),
    Mutant("vjp-cos-sign", TR, "return (neg(mul(dout, sin(x))),)", "return (mul(dout, sin(x)),)", OPS, "cos"),
    Mutant("vjp-tanh-sign", TR, "1.0 - square(out)", "1.0 + square(out)", OPS, "tanh"),
    Mutant("vjp-sigmoid-factor-dropped", TR, "mul(out, 1.0 - out)", "out", OPS, "sigmoid"),
    Mutant("vjp-relu-mask-flipped", PW, "return (mul(dout, x.greater(0.0)),)", "return (mul(dout, x.less(0.0)),)", OPS, "relu"),
    Mutant("vjp-maximum-mask-flipped", PW, "dx = mul(dout, greater_equal(x, y))", "dx = mul(dout, less_equal(x, y))", OPS, "maximum"),
    Mutant("vjp-minimum-mask-flipped", PW, "dx = mul(dout, less_equal(x, y))", "dx = mul(dout, greater_equal(x, y))", OPS, "minimum"),
    Mutant("vjp-clip-upper-bound-flipped", PW, "x.less_equal(clip_value_max)", "x.greater_equal(clip_value_max)", OPS, "clip_by_value"),
    Mutant("vjp-where-branches-swapped", PW, "dx = where(condition, dout, const(0.0))", "dx = where(condition, const(0.0), dout)", OPS, "where"),
    Mutant("vjp-where-y-gets-everything", PW, "unbroadcast(sub(dout, dx), y.shape) if needs[2]", "unbroadcast(dout, y.shape) if needs[2]", OPS, "where"),
    Mutant("vjp-max-ties-not-split", RED, "div(mul(unreduce(dout, x.shape, axis, keepdims), is_max), ties)",
           "mul(unreduce(dout, x.shape, axis, keepdims), is_max)", OPS, "max"),
    Mutant("vjp-logsumexp-softmax-dropped", RED, "mul(unreduce(dout, x.shape, axis, keepdims), softmax)",
           "unreduce(dout, x.shape, axis, keepdims)", OPS, "logsumexp"),
    Mutant("vjp-matmul-dx-sign", RED, "dx = _same_shape(matmul(d2, transpose(y2)), x.shape)",
           "dx = _same_shape(sub(matmul(d2, transpose(y2)), matmul(d2, transpose(y2))), x.shape)", OPS, "matmul"),
    Mutant("vjp-matmul-dy-operands", RED, "matmul(transpose(x2), d2)", "matmul(transpose(x2), sub(d2, d2))", OPS, "matmul"),
    Mutant("vjp-transpose-not-inverted", SHP, "inverse[axis] = i", "inverse[i] = axis", OPS, "transpose"),
    Mutant("vjp-slice-padding-swapped", SHP, "(bi, d - bi - si)", "(d - bi - si, bi)", OPS, "slice"),
    Mutant("vjp-pad-wrong-side", SHP, "begin=[p[0] for p in paddings]", "begin=[p[1] for p in paddings]", OPS, "pad"),
    Mutant("vjp-concat-offset-stuck", SHP, "start += t.shape[ax]", "start += 0", OPS, "concat"),
    Mutant("unbroadcast-stretched-axes-kept", SHP, "if d == 1 and have[lead + i] != 1", "if d == 0 and have[lead + i] != 1", OPS),
    # ── the arena: disposal ───────────────────────────────────────────────────────────────
    Mutant("arena-dispose-never-frees", RT, "    t._disposed = by\n    if t._holds == 0:\n        free(t)", "    t._disposed = by\n    if t._holds < 0:\n        free(t)", ARENA),
    Mutant("arena-free-stays-in-arena", RT, "    t._data = None\n    LIVE.pop(t._id, None)", "    t._data = None\n    LIVE.get(t._id, None)", ARENA),
    Mutant("arena-scope-never-frees", RT, "            if t._holds == 0:\n                unused.append(t)", "            if t._holds < 0:\n                unused.append(t)", ARENA),
    Mutant("arena-scope-disposes-its-result", RT, "if t._id in keep:", "if t._id not in keep:", ARENA),
    Mutant("arena-scope-disposes-kept", RT, "elif not t._kept and t._disposed is None:", "elif t._disposed is None:", ARENA),
    Mutant("arena-result-not-moved-out", RT, "                parent.append(t)", "                pass", ARENA),
    Mutant("arena-free-all-stays-in-arena", RT, "            pop(t._id, None)", "            LIVE.get(t._id, None)", ARENA),
    Mutant("arena-exception-leaks-the-scope", RT, "        close_scope(scope, (), outer)\n        raise", "        raise", ARENA),
    Mutant("arena-tape-release-keeps-inputs", TAPE, "                t._holds -= 1", "                t._holds -= 0", ARENA),
    Mutant("arena-keep-forgets", MEM, "        tensor._kept = True", "        tensor._kept = False", ARENA),
    # ── the optimizers' update rules ──────────────────────────────────────────────────────
    Mutant("opt-sgd-sign", OPT, "return [wi - lr * gi for wi, gi in zip(w, g)]", "return [wi + lr * gi for wi, gi in zip(w, g)]", OPTIMIZERS),
    Mutant("opt-momentum-factor-dropped", OPT, "a = [mu * ai + gi for", "a = [ai + gi for", OPTIMIZERS),
    Mutant("opt-nesterov-factor-dropped", OPT, "wi - lr * (gi + mu * ai)", "wi - lr * (gi + ai)", OPTIMIZERS),
    Mutant("opt-adagrad-square-dropped", OPT, "acc = [ai + gi * gi for", "acc = [ai + gi for", OPTIMIZERS),
    Mutant("opt-adagrad-sqrt-dropped", OPT, "_div(gi, _sqrt(ai + EPSILON))", "_div(gi, ai + EPSILON)", OPTIMIZERS),
    Mutant("opt-adadelta-ratio-inverted", OPT, "_div(_sqrt(aui + eps), _sqrt(agi + eps))", "_div(_sqrt(agi + eps), _sqrt(aui + eps))", OPTIMIZERS),
    Mutant("opt-adadelta-decay-swapped", OPT, "[rho * agi + (1.0 - rho) * gi * gi", "[(1.0 - rho) * agi + rho * gi * gi", OPTIMIZERS),
    Mutant("opt-adam-no-bias-correction", OPT, "c1, c2 = 1.0 - b1**t, 1.0 - b2**t", "c1, c2 = 1.0, 1.0 - b2**t", OPTIMIZERS),
    Mutant("opt-adam-v-square-dropped", OPT, "v = [b2 * vi + (1.0 - b2) * gi * gi for", "v = [b2 * vi + (1.0 - b2) * abs(gi) for", OPTIMIZERS),
    Mutant("opt-adamax-decay-off-by-one", OPT, "(1.0 + self._decay * (t - 1))", "(1.0 + self._decay * t)", OPTIMIZERS),
    Mutant("opt-adamax-abs-dropped", OPT, "nan_maximum(b2 * ui, abs(gi))", "nan_maximum(b2 * ui, gi)", OPTIMIZERS),
    Mutant("opt-rmsprop-centered-sign", OPT, "msi - mgi * mgi + eps", "msi + mgi * mgi + eps", OPTIMIZERS),
    Mutant("opt-rmsprop-momentum-dropped", OPT, "mom = [mu * mi + lr * _div", "mom = [lr * _div", OPTIMIZERS),
    # ── the checker ───────────────────────────────────────────────────────────────────────
    Mutant("checker-numerical-half-step", "microtape/checking/numerical.py", "grad.append((plus - minus) / (2 * eps))", "grad.append((plus - minus) / eps)", CHECKER),
    Mutant("checker-is-close-loose", "microtape/checking/numerical.py", "return abs(a - n) <= atol + rtol * abs(n)", "return abs(a - n) <= atol + rtol * abs(n) + 1.0", CHECKER),
    Mutant("checker-fail-is-ok", "microtape/checking/numerical.py", '    return row("FAIL", n, note)', '    return row("ok", n, note)', CHECKER),
    Mutant("checker-full-half-step", "microtape/checking/numerical.py", "central = (plus - minus) / (2 * eps)", "central = (plus - minus) / eps", CHECKER),
    # ── the grader ────────────────────────────────────────────────────────────────────────
    Mutant("grader-timeout-times-ten", "microtape/classroom/grader.py", "Limits(settings.timeout, settings.memory_mb,", "Limits(settings.timeout * 10, settings.memory_mb,", GRADER),
    Mutant("grader-timeout-reported-as-failed", "microtape/classroom/grader.py", 'grade.timed_out is not None:\n        entry["status"] = "timeout"', 'grade.timed_out is not None:\n        entry["status"] = "failed"', GRADER),
    # ── the page's escaping ───────────────────────────────────────────────────────────────
    Mutant("page-escape-return-text", "microtape/dashboard/charts.py", "    return html.escape(text, quote=True)", "    return text", PAGE),
    Mutant("page-escape-no-quotes", "microtape/dashboard/charts.py", "html.escape(text, quote=True)", "html.escape(text, quote=False)", PAGE),
    # ── checkpoints and habits ────────────────────────────────────────────────────────────
    Mutant("checkpoint-negative-iterations", "microtape/train/checkpoint_format.py", "or not isinstance(iterations, int) or iterations < 0:",
           "or not isinstance(iterations, int):", CHECKPOINT),
    Mutant("checkpoint-bool-dimension", "microtape/train/checkpoint_format.py", "isinstance(d, int) and not isinstance(d, bool) and d >= 0",
           "isinstance(d, int) and d >= 0", CHECKPOINT),
    Mutant("checkpoint-config-any-type", "microtape/train/checkpoint_format.py", 'if not isinstance(raw["config"], dict):', "if False:", CHECKPOINT),
    Mutant("habit-index-hint-empty", "microtape/views/habits.py", "{(1,) + (-1,) * rest}", "{(0,) + (-1,) * rest}", HABITS),
    Mutant("habit-less-names-greater", "microtape/views/habits.py", '"<": "less"', '"<": "greater"', HABITS),
]


def copy_checkout(dest: Path) -> None:
    """What the tests read: the package, the tests, the book's sources, the benchmarks, the top files."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "_build", "*.mo", ".venv*")
    for name in ("microtape", "tests", "tutorials", "docs", "bench"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, dest / name, ignore=skip)
    for name in ("conftest.py", "pyproject.toml", "README.md", "LICENSE", "hatch_build.py"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)


def run_tests(
    copy: Path, tests: tuple[str, ...], module: str | None, timeout: float, select: str | None = None
) -> tuple[str, float, str]:
    """Run the fast tier of ``tests`` (and ``module``'s doctests) in ``copy``.

    Returns "passed", "failed" or "timeout", the seconds it took, and the end of pytest's output."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-m", "not slow", *tests]
    if select is not None:
        command += ["-k", select]
    if module is not None:
        command.append(module)  # its doctests
    start = time.monotonic()
    try:
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - start, ""
    return ("passed" if done.returncode == 0 else "failed"), time.monotonic() - start, done.stdout[-3000:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--only", action="append", default=[], metavar="TEXT", help="run the mutants whose name contains TEXT (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--no-baseline", action="store_true", help="skip the runs on the unchanged copy")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S", help="seconds one test run may take (default 600)")
    args = parser.parse_args(argv)

    chosen = [m for m in MUTANTS if not args.only or any(text in m.name for text in args.only)]
    if args.list:
        for m in chosen:
            print(f"{m.name:<36} {m.path:<32} {' '.join(m.tests)}")
        return 0
    if not chosen:
        print(f"no mutant matches {args.only}")
        return 2
    for m in chosen:  # every change must apply to today's code, exactly once
        count = (ROOT / m.path).read_text(encoding="utf-8").count(m.old)
        if count != 1:
            print(f"mutant {m.name}: {m.old!r} occurs {count} times in {m.path}; update the mutant")
            return 2

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # `kill` too removes the copy (the with block below)
    with tempfile.TemporaryDirectory(prefix="microtape-mutation-") as tmp:
        copy = Path(tmp)
        copy_checkout(copy)
        if not args.no_baseline:
            for tests in sorted({m.tests for m in chosen}):
                outcome, seconds, output = run_tests(copy, tests, None, args.timeout)
                print(f"baseline {' '.join(tests)}: {outcome} ({seconds:.0f} s)", flush=True)
                if outcome != "passed":
                    print(f"{output}\nthe unchanged code fails these tests: fix that first")
                    return 2
        survivors: list[Mutant] = []
        for i, m in enumerate(chosen, 1):
            target = copy / m.path
            original = target.read_text(encoding="utf-8")
            target.write_text(original.replace(m.old, m.new, 1), encoding="utf-8")
            try:
                outcome, seconds, output = run_tests(copy, m.tests, m.path, args.timeout, m.select)
            finally:
                target.write_text(original, encoding="utf-8")
            verdict = {"failed": "killed", "timeout": "killed (timeout)", "passed": "SURVIVED"}[outcome]
            if outcome == "passed":
                survivors.append(m)
            first = next((line.split(" - ")[0] for line in output.splitlines() if line.startswith("FAILED ")), "")
            print(f"[{i}/{len(chosen)}] {m.name:<36} {verdict} ({seconds:.0f} s) {first}", flush=True)

    killed = len(chosen) - len(survivors)
    print(f"\nscore: {killed} of {len(chosen)} mutants killed ({100 * killed / len(chosen):.0f}%)")
    for m in survivors:
        print(f"  survived: {m.name} ({m.path}: {m.old!r} -> {m.new!r})")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
