"""What a Russian student runs, run in Russian, scanned for English words outside code, names and values.

The scanner is the book's (``tests/test_docs.py``: ``english_words``), fed the
terminal's text as a page's paragraph; an op's name (``mul``, ``tanh``) is a
name too. What is scanned: ``selfcheck``, the reports a chapter prints when a
gradient is wrong (``check_grads`` with its culprit, ``summary()``,
``explain_gradient``, backward steps, the tape drawing), the dashboard's page,
and grading in Russian: every starter as it is handed out (files and
notebooks), a file that does not load, one that does not parse, and a
notebook with a wrong answer (the culprit's notebook line, the skipped magics).

The misuse table's errors (every ``MicrotapeError`` a test provokes) are
scanned too. A chapter's tour is not scanned whole: its own ``print`` lines are the
chapter's code, English in both editions (the book's page scan leaves output
out too); what microtape prints in it is covered by the parts above.
"""

from __future__ import annotations

import functools
import ast
import errno
import gc
import html
import inspect
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import microtape as mt
from microtape import cli
from microtape.engine.primitive import OPS
from microtape.language import chosen, use

from ..test_docs import english_words

ROOT = Path(__file__).resolve().parents[2]
NAMES = frozenset(OPS) | {"selfcheck", "check_grads", "dout", "VJP", "custom_grad", "cube", "center", "energy", "mode", "order", "eps", "atol", "rtol", "out", "inputs", "begin", "size", "await", "return", "lambda"}
"""Names a Russian text writes as they are: ops, commands, arguments of check_grads."""
VALUES = frozenset({"nan", "inf", "int", "float", "str", "bool", "list", "tuple", "dict", "None", "True", "False", "NoneType"})
"""Values and Python's type names, as a message shows them (``получен list``, ``равен nan``)."""
_CODE = re.compile(
    r"(?<!\w)--[\w-]+"  # an option (--seed, --lang)
    r"|`[^`\n]*`"  # code in backquotes
    r"|'[^'\n]*'|\"[^\"\n]*\""  # a quoted value: a repr ('oops'), a string argument ("full")
    r"|\b[\w.]+\((?:[^()\n]|\([^()\n]*\))*\)"  # a call written out: mt.slice(t, begin, size), f(x + eps)
)


def _parameters() -> frozenset[str]:
    """The parameter names of microtape's public functions and methods (``axis``, ``perm``, ``sources``): names."""
    found: set[str] = set()
    for name in mt.__all__:
        obj = getattr(mt, name)
        for fn in [obj, *(getattr(obj, m) for m in dir(obj) if not m.startswith("_"))] if isinstance(obj, type) else [obj]:
            try:
                found.update(inspect.signature(fn).parameters)
            except (TypeError, ValueError):
                continue
    return frozenset(found)


PARAMETERS = _parameters()


def _compiles(code: str, header: bool = False) -> bool:
    """Whether ``code`` is Python (``...`` may stand for a block: ``with tape: ... with tape.stop_recording(): ...``)."""
    for attempt in (code, code.replace("... ", "...\n")):
        try:
            compile(attempt, "<hint>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        except SyntaxError:
            continue
        return header or bool(re.search(r"[(=\[.]", code))  # code, not a word that happens to parse as a name
    return False


def _without_code(line: str) -> str:
    """``line`` without the Python a message quotes: the longest tail after a ': ' (or a space) that
    compiles (a hint written as code), and a head before ': ' that is a statement's header (``for x in t:``)."""
    head = re.match(r"\s*((?:for|with|while|if) [^:]+):", line)
    if head and _compiles(head[1] + ": pass", header=True):
        line = line[: head.start(1)] + line[head.end(1):]
    for match in re.finditer(r"(?:^|: |\s)", line):
        tail = line[match.end():].strip()
        if tail and (_compiles(tail) or _compiles(tail.rstrip("."))):  # a sentence's full stop after the code
            return line[: match.end()]
    return line


def english(text: str) -> list[str]:
    """The English words of a terminal text, outside names, values and code (a hint written as Python)."""
    text = "\n".join(_without_code(line) for line in text.split("\n"))
    text = _CODE.sub(" ", text.replace("one-hot", " "))  # one-hot: a term the Russian uses as it is
    return [w for w in english_words(f"<p>{html.escape(text)}</p>") if w not in NAMES | VALUES | PARAMETERS]


@pytest.fixture
def russian() -> Iterator[None]:
    before = chosen()
    use("ru")
    yield
    use(before)


def test_the_scanner_finds_english_and_lets_names_pass() -> None:
    assert english("шаг 1: mul в x.py:3, check_grads: пройдена") == []
    assert {"the", "wrong"} <= set(english("the answer went wrong: шаг 1"))
    # values, reprs, string arguments and calls written out are code, not prose
    assert english("получен list: 'oops'; mode='x' — не \"full\" и не \"fast\"; равен nan") == []
    assert english("подсказка: mt.slice(t, begin, size) вырезает блок, f(x + eps) и f(g(x))") == []
    found = english("the 'quoted' words are code, but these are not")
    assert {"words", "code", "these"} <= set(found) and "quoted" not in found


def test_selfcheck_in_russian(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["selfcheck", "--lang", "ru"]) == 0
    out = capsys.readouterr().out
    assert "selfcheck пройден" in out.splitlines()[-1]
    assert english(out) == [], out[-2000:]
    assert chosen() is None  # the command's language does not outlive it


def _wrong_model() -> tuple[Callable[..., mt.Tensor], list[mt.Tensor]]:
    def center(t: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], mt.Tensor]]:
        return t - t.mean(axis=-1, keepdims=True), lambda dy: dy  # forgets that the mean moves with t

    center_op = mt.custom_grad(center)

    def model(inputs: mt.Tensor, w1: mt.Tensor, w2: mt.Tensor) -> mt.Tensor:
        out = mt.tanh(center_op(inputs @ w1)) @ w2
        return (out * out).mean()

    return model, [mt.random_normal((4, 3), seed=1), mt.random_normal((3, 2), seed=2), mt.random_normal((2, 1), seed=3)]


def test_the_reports_of_a_wrong_gradient_in_russian(russian: None) -> None:
    model, xs = _wrong_model()
    report = mt.check_grads(model, xs)
    text = str(report)
    assert not report.ok and "НЕ ПРОЙДЕНА" in text and "виновная операция" in text
    assert english(text) == [], text
    x = mt.tensor([1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = (mt.relu(x - 1.5) * x).sum()
    tape.gradient(y, x)
    texts = [tape.summary(), *(str(s) for s in tape.backward_steps(y, {"x": x}))]
    texts += [str(mt.explain_gradient(lambda x: (mt.relu(x - 1.5) * x).sum(), [x], index=i)) for i in (0, 1)]
    svg = tape.to_svg()
    texts.append(" ".join(part.split(">")[-1] for part in svg.split("</text>")[:-1]))
    tape.release()
    for text in texts:
        assert english(text) == [], text


def test_the_dashboard_page_in_russian(russian: None) -> None:
    from microtape.dashboard.demo import train_rnn
    import asyncio

    dash = mt.Dashboard("демо", monitor=mt.GradientMonitor())
    asyncio.run(train_rnn(dash, 60))  # the unclipped start: the monitor flags exploding steps
    dash.finish()
    page = dash.html(live=True)
    assert 'lang="ru"' in page and "взрывающийся градиент" in page
    assert english_words(page) == [], page[:3000]  # the page as a browser shows it: the book's scanner as it is


def _grade(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "microtape", "grade", *args, "--lang", "ru"], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def _reports(result: subprocess.CompletedProcess[str]) -> list[str]:
    found = json.loads(result.stdout)
    entries = found["files"]
    return [str(entry.get("report_ru", "")) for entry in entries]


@pytest.mark.slow
@pytest.mark.parametrize("notebook", [False, True], ids=["files", "notebooks"])
def test_grading_every_starter_in_russian(tmp_path: Path, notebook: bool) -> None:
    assert cli.exercises(tmp_path, out=io.StringIO(), lang="ru", notebook=notebook) == 0
    result = _grade(".", "--format", "json", "--jobs", "2", cwd=tmp_path)
    reports = _reports(result)
    assert len(reports) == len(list(tmp_path.glob("ex*"))), result.stderr[-2000:]
    for report in reports:
        assert report and english(report) == [], report


def test_grading_what_does_not_load_or_parse_in_russian(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text('EXERCISE = "ex04_softplus_vjp"\nundefined_name\n', encoding="utf-8")
    (tmp_path / "syn.py").write_text('EXERCISE = "ex04_softplus_vjp"\ndef (:\n', encoding="utf-8")
    for name, words in (("bad.py", "при загрузке файла возникло NameError"), ("syn.py", "файл не разбирается")):
        out = _grade(name, cwd=tmp_path).stdout
        assert words in out and "подсказка: " in out, out
        python_says = {"name", "undefined_name", "is", "not", "defined", "invalid", "syntax", "def"}  # Python's own words: a value
        assert [w for w in english(out) if w not in python_says] == [], out


def test_grading_a_wrong_notebook_in_russian(tmp_path: Path) -> None:
    assert cli.exercises(tmp_path, out=io.StringIO(), lang="ru", notebook=True) == 0
    path = tmp_path / "ex04e_wrong_factor.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and "WRONG_OP = " in source:
            cell["source"] = source.replace("WRONG_OP = ", "WRONG_OP = 'mul'  # ", 1).splitlines(True)
    nb["cells"].insert(1, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": ["!ls\n"]})
    path.write_text(json.dumps(nb), encoding="utf-8")
    out = _grade(path.name, cwd=tmp_path).stdout
    assert "ячейка 2, строка 1: !ls" in out, out
    assert "вызванной в ex04e_wrong_factor.ipynb, ячейка" in out and "energy в точке [" in out, out
    assert english(out) == [], out


def _python_s_own_words() -> set[str]:
    """The words of the messages Python itself writes that an error quotes as a value: a JSON parse
    error and the OS's 'No such file or directory' (both English on every system), and JSON's Infinity."""
    try:
        json.loads("{a")
    except json.JSONDecodeError as err:
        quoted = str(err)
    return set(re.findall(r"[A-Za-z]+", quoted + " " + os.strerror(errno.ENOENT))) | {"Infinity"}


def test_the_misuse_table_s_errors_in_russian(russian: None, tmp_path: Path) -> None:
    from ..test_misuse import CASES, KEEP, NAMES

    python_s = _python_s_own_words()
    found: dict[str, list[str]] = {}
    for case in CASES:
        try:
            case.setup(tmp_path)()
        except Exception as err:  # noqa: BLE001 - every error a case raises is scanned
            text = re.sub(r"trainabl\.?$", "", str(err).split("\n")[0]) + "\n" + "\n".join(str(err).split("\n")[1:])  # a repr cut at 60
            words = [w for w in english(text) if w not in python_s]
            if words:
                found[case.name] = words
        finally:
            KEEP.clear()  # the cases' set-ups keep their objects (tapes among them) alive until told not to
            NAMES.clear()
            gc.collect()
    assert not found, found


def _message(fn: Callable[[], object]) -> str:
    try:
        fn()
    except mt.MicrotapeError as err:
        return str(err)
    raise AssertionError("no MicrotapeError raised")


def test_why_a_gradient_is_missing_in_russian(russian: None) -> None:
    """The causes ``grad``, ``grads``, ``variable_grads`` and ``tape.gradient`` give for a missing gradient: each cut,
    a read-out, an unwatched use and an unused input, in sentences whose names decline (genitive) as Russian needs."""
    w = mt.variable(mt.tensor([1.0, 2.0]), name="ru_missing_w")
    texts = [
        _message(lambda: mt.grad(lambda x: mt.stop_gradient(x * 2.0).sum())(mt.tensor([1.0]))),
        _message(lambda: mt.grad(lambda x: mt.tensor(x * 2.0).sum())(mt.tensor([1.0]))),
        _message(lambda: mt.grads(lambda a, b: (a * 2.0).sum())([mt.tensor([1.0]), mt.tensor([2.0])])),
        _message(lambda: mt.grad(lambda x: mt.scalar(1.0))(mt.scalar(2.0))),
        _message(lambda: mt.variable_grads(lambda: mt.tensor(w * 2.0).sum())),
        _message(lambda: mt.variable_grads(lambda: mt.scalar(x_value * 2.0))),
        _message(lambda: mt.grad(3)),  # type: ignore[arg-type]  # the mistake under test
        _message(lambda: mt.explain_gradient(lambda x: x.sum(), [mt.tensor([1.0])], wrt=2)),
    ]
    x = mt.tensor([1.0, 2.0])
    u = mt.tensor([3.0])
    with pytest.warns(mt.GradientWarning) as caught:
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = (x * u).sum() + mt.tensor(x * 2.0).sum()
        tape.gradient(y, [u, x])
    texts += [str(c.message) for c in caught]
    assert "путь от x к цели обрывается на stop_gradient" in texts[0], texts[0]
    assert "вычисленное из переменной 'ru_missing_w'" in texts[4] or "переменной 'ru_missing_w'" in texts[4], texts[4]
    for text in texts:
        assert [w for w in english(text) if w != "wrt"] == [], text  # explain_gradient's argument: a name


x_value = 2.0


def test_what_the_engine_and_the_tape_drawing_print_in_russian(russian: None) -> None:
    """A tape's repr (recording and used), ``memory()``'s line, the drawing of a used tape, a tensor's notebook
    picture, a disposed tensor's error, a shape too large, and a bad ``to_dot`` direction."""
    x = mt.tensor([[1.0, -2.0], [float("nan"), 4.0]])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = (x * x).sum()
    texts = [repr(tape), str(mt.memory())]
    tape.gradient(y, x)
    texts.append(repr(tape))
    svg = tape.to_svg()
    texts.append(" ".join(part.split(">")[-1] for part in svg.split("</text>")[:-1]) + " " + svg.split("<title>")[1].split("<")[0])
    page = x._repr_html_()
    texts.append(re.sub(r"<[^>]*>", " ", re.sub(r'(style|aria-label)="[^"]*"', "", page)))
    gone = mt.tensor([1.0])
    gone.dispose()
    with mt.leak_check(on_leak="ignore"):  # the observer that knows the line that made a tensor
        made = mt.tensor([1.0]) * 2.0
        made.dispose()
        texts.append(_message(lambda: made + 1.0))
    assert "создан операцией 'mul' в " in texts[-1], texts[-1]
    texts += [
        _message(lambda: gone + 1.0),
        _message(lambda: mt.tensor([1.0]) <= mt.tensor([2.0])),  # type: ignore[operator]  # the mistake under test
        _message(lambda: mt.zeros((10**6, 10**7))),
        _message(lambda: tape.to_dot(rankdir="XY")),  # type: ignore[arg-type]  # the mistake under test
    ]
    assert texts[0].startswith("GradientTape(persistent=False, записано операций: 2"), texts[0]
    assert "использована" in texts[2] and "лента" in texts[3], texts[2:4]
    for text in texts:
        assert [w for w in english(text) if w not in ("nan", "rankdir")] == [], text  # a value the picture shows, an argument


def test_the_anomaly_trace_and_error_in_russian(russian: None) -> None:
    x = mt.tensor([1.0, 0.0])
    with mt.detect_anomaly(mode="trace") as trace:
        _ = (mt.log(x) * 2.0).sum()
        _ = mt.grad(lambda t: mt.sqrt(t).sum())(x)
    texts = [str(trace)]
    with mt.detect_anomaly():
        try:
            mt.grad(lambda t: mt.sqrt(t).sum())(x)
        except mt.AnomalyError as err:
            texts.append(str(err))
            assert err.phase == "backward" and "inf" in err.cause  # the facts stay as they are
    def masked(t: mt.Tensor) -> mt.Tensor:
        return mt.where(t.greater(0.0), mt.sqrt(t), mt.zeros_like(t)).sum()

    y = mt.tensor([4.0, -1.0])
    with mt.detect_anomaly(mode="trace") as hidden:
        _ = mt.grad(masked)(y)
    texts.append(str(hidden))
    with mt.detect_anomaly():
        with pytest.raises(mt.AnomalyError) as where_error:
            mt.grad(masked)(y)
    texts.append(str(where_error.value))
    with mt.detect_anomaly(mode="trace") as clean:
        _ = mt.exp(x)
    texts.append(str(clean))
    assert "впервые дала операция log" in texts[0] and "обратный проход" in texts[1], texts
    for text in texts:
        assert [w for w in english(text) if w not in {"nan", "inf"}] == [], text  # a float's value


def test_the_memory_reports_and_the_monitor_in_russian(russian: None) -> None:
    with mt.leak_check(on_leak="ignore") as leaks:
        a = mt.ones((2, 3))
        b = a * 2.0
    info = mt.profile(lambda: (mt.ones((2,)) * 3.0).sum())
    monitor = mt.GradientMonitor(explode_norm=10.0)
    for step in range(4):
        monitor.record({"w": mt.tensor([10.0 ** step])})
    stats = mt.grad_stats({"w": mt.tensor([1.0, 0.0])})["w"]
    html_page = monitor._repr_html_()
    texts = [str(leaks), str(info).split("\n", 1)[1], monitor.report(), str(stats),
             " ".join(part.split(">")[-1] for part in html_page.split("</")[:-1])]
    a.dispose()
    b.dispose()
    assert monitor.exploding and not monitor.vanishing  # from what was recorded, whatever the flags' language
    assert "утечек" not in texts[0] and "подсказка" in texts[0] and "ядро" in texts[1], texts
    names = {"leak_check", "GradientMonitor", "fill", "max", "mean", "g", "nan", "inf"}
    for text in texts:
        assert [w for w in english(text) if w not in names] == [], text


def test_mt_function_s_reports_in_russian(russian: None) -> None:
    import warnings

    k = 2.0
    w = mt.variable(mt.tensor([1.0]), name="w_ru_reports")

    @mt.function
    def scaled(x: mt.Tensor) -> mt.Tensor:
        return (x * k * w).sum()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(7):
            k = float(i)
            scaled(mt.tensor([1.0]))
    texts = [*scaled.retrace_reasons, *scaled.guards, *(str(c.message) for c in caught)]
    w.dispose()
    assert any("при трассировке" in t for t in texts) and caught, texts
    for text in texts:
        assert [word for word in english(text) if word not in {"scaled", "k", "w", "x", "trainable", "True"}] == [], text


def test_train_s_messages_in_russian(russian: None, tmp_path: Path) -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w_ru_train")
    attempts: list[Callable[[], object]] = [
        lambda: mt.train.adam(learning_rate=-1.0),
        lambda: mt.train.sgd(0.1).apply_gradients({w: mt.tensor([1.0])}),
        lambda: mt.load_variables(tmp_path / "nowhere.json"),
        lambda: mt.save_variables(tmp_path / "x.json", []),
    ]
    for name, doc in (("list", "[1, 2]"), ("extra", '{"format": "microtape-checkpoint", "version": 1, "variables": [], "x": 1}'),
                      ("short", '{"format": "microtape-checkpoint", "version": 1, "variables": [{"name": "w", "shape": [2], "trainable": true, "data": [1.0]}]}')):
        (tmp_path / f"{name}.json").write_text(doc, encoding="utf-8")
        attempts.append(functools.partial(mt.load_variables, tmp_path / f"{name}.json"))
    texts = []
    for attempt in attempts:
        with pytest.raises(mt.MicrotapeError) as caught:
            attempt()
        texts.append(str(caught.value))
    w.dispose()
    assert "Скорость обучения" in texts[0] and "контрольную точку" in texts[2] and "JSON — это list" in texts[4], texts
    os_words = {"No", "such", "file", "or", "directory"}  # the operating system's own message: a value
    os_words |= {"list", "format", "extra", "data", "name", "shape", "trainable", "variables", "version", "optimizer"}  # JSON's types and fields
    for text in texts:
        assert [word for word in english(text) if word not in os_words] == [], text


def test_the_notebook_pictures_of_the_reports_in_russian(russian: None) -> None:
    """memory(), profile() and leak_check as Jupyter shows them: the table headers as well as the first line."""
    x = mt.tensor([1.0, 2.0])
    pictures = [mt.memory()._repr_html_(), mt.profile(lambda: (x * x).sum())._repr_html_(), x._repr_html_()]
    for html_text in pictures:
        text = html.unescape(re.sub(r"<[^>]+>", " ", html_text))
        assert "поле" in text or "Tensor" in text, text[:300]
        assert english(text) == [], text[:600]
