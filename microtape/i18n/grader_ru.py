"""What the grader says, in Russian: the checks' names, hints and failure messages.

A check's messages are f-strings with real values in them. ``translate``
turns one such text into Russian, line by line: a line is first looked up
whole in the package's catalog (the names, the hints, the messages without
values, a starter's TODO message the grader quotes), then matched against
``PATTERNS``, English regular expressions whose msgstr in the catalog is the
Russian template (a message with values: the values are kept, and a group
named ``p...`` is a phrase that is translated again, such as the ``off_by``
wording inside a message). A line that matches nothing stays English, so a
new check is never lost, only untranslated until its text is in the catalog
(``tests/classroom/test_grade_russian.py`` finds such lines).

``add_russian`` puts the Russian beside the English in a graded entry:
``title_ru``, ``message_ru``, and per check ``name_ru``, ``details_ru``,
``hints_ru``; the JSON keeps its English keys and texts.
"""

from __future__ import annotations

import re
from typing import Final

from ..language import tr
from .exercise_checks_ru import PATTERNS_CHECKS

__all__ = ["HELPER_PATTERNS", "PATTERNS", "add_russian", "translate", "translate_line"]

HELPER_PATTERNS: Final[tuple[str, ...]] = (
    # check_helpers.off_by and friends: how a value misses, without giving it away
    r"it is (?P<v>\S+)",
    r"it should not be finite",
    r"it should be 0",
    r"it is 0 and should not be",
    r"its sign is wrong",
    r"about (?P<n>\S+) times too large",
    r"about (?P<n>\S+) times too small",
    r"far too large",
    r"far too small",
    r"off by about (?P<n>\S+) %",
    r"off in the last digits",
    r"too many",
    r"too few",
    r"nothing",
    # check_helpers' Fail messages
    r"(?P<what>.+) returned (?P<t>\w+) (?P<v>.*), not a number\.",
    r"(?P<what>.+) uses your (?P<n>\w+)\(\), which fails its check above: fix (?P=n)\(\) first\.",
    r"the file defines no (?P<n>\w+)\(\); the grader calls it by that name\.",
    r"(?P<n>\w+) is a (?P<t>\w+), but the grader calls it as a function\.",
    r"(?P<what>.+) returned a subclass of Tensor, not a Tensor\.",
    r"(?P<what>.+) returned (?P<k>.+), not a Tensor\.",
    r"(?P<what>.+) returned a disposed tensor \(made by (?P<op>.+)\): its values are gone\.",
    r"(?P<what>.+) returned a tensor of shape (?P<s>.+), expected shape (?P<e>.+)\.",
    r"(?P<what>.+) returned a Tensor \((?P<v>.*)\), not a Python float; read it with \.item\(\)\.",
    r"(?P<what>.+) returned (?P<t>\w+), a subclass of (?P<b>\w+), not a plain Python number\.",
    r"(?P<what>.+) returned (?P<t>\w+), not an int\.",
    r"(?P<what>.+) has (?P<n>\d+) entries, expected (?P<e>\d+)\.",
    r"(?P<what>.+) holds (?P<t>\w+) at entry (?P<i>\d+), not a Python number\.",
    r"(?P<what>.+) is wrong at entry (?P<i>\d+): (?P<p>.+?)(?: \((?P<b>\d+) of (?P<n>\d+) entries are wrong\))?\.",
    r"(?P<what>.+) is wrong: (?P<p>.+?)(?: \((?P<b>\d+) of (?P<n>\d+) entries are wrong\))?\.",
    r"(?P<what>.+): check_grads failed \((?P<f>\d+) of (?P<n>\d+) entries disagree\)\.",
    r"d (?P<o>\S+) / d (?P<a>\S+?)(?P<s> \(second derivative\))?: the analytic gradient is (?P<g>\S+), finite differences give (?P<f>\S+)",
    r"culprit: the VJP of (?P<op>.+?)(?: called at (?P<at>\S+(?:, cell \d+, line \d+)?))?: for input (?P<i>\S+), with the gradient that reached it, "
     r"it gives (?P<g>\S+), finite differences give (?P<f>\S+)",
    r"culprit: the VJP of (?P<op>.+?)(?: called at (?P<at>\S+(?:, cell \d+, line \d+)?))?: along a random direction it gives (?P<g>\S+), finite differences give (?P<f>\S+)",
    # grade_child: what a student's code raised, a TODO, a file that does not load
    r"your code raised (?P<e>\w+)(?P<w> \(.*\))?:",
    r"the check raised (?P<e>\w+):",
    r"loading the file raised (?P<e>\w+)(?P<w> \(.*\))?:",
    r"\(the grader limits each file's memory; an allocation this large is a bug\)",
    r"\(sys\.exit\(\) or exit\(\) stops a program; an exercise function returns instead\)",
    r"not done yet: (?P<ptodo>.*?)(?P<w> \(\S+:\d+ in \S+\))?",
    r"a function still raises NotImplementedError",
    r"the file does not parse: SyntaxError(?P<w> \(.*\))?: (?P<m>.*)",
    r"fix the line shown \(or the one before it\), then grade again\.",
    r"the file must run top to bottom without errors; keep module-level code to definitions and constants\.",
    # the grader's own messages about a file
    r"stopped after (?P<s>\S+) s \(the check's time limit\): an endless loop, or far too much work\?",
    r"stopped after (?P<s>\S+) s after its checks had finished: an endless loop, or far too much work\?",
    r"stopped after (?P<s>\S+) s while loading the file: an endless loop, or far too much work\?",
    r"stopped after (?P<s>\S+) s in the check (?P<c>'.*'): an endless loop, or far too much work\?",
    r"stopped after (?P<s>\S+) s between its checks: an endless loop, or far too much work\?",
    r"stopped when the file's (?P<s>\S+) s were up, in this check\.",
    # assignments (grader.py)
    r"not submitted: (?P<p>.+) holds no file of (?P<n>\S+)\.",
    r"not submitted",
    r"(?P<f>'.*') is (?P<n>\S+), which this assignment does not ask for; it is not graded\.",
    r"the assignment asks for (?P<n>.+)\.",
    r"(?P<pre>.*?)(?P<a>[Aa])nother file of (?P<n>\S+) in this submission \((?P<f>.+)\) scored higher or came first; this one does not count\.",
    r"the grading process ended in this check without finishing \((?P<why>.*)\)",
    r"the grading process ended (?P<where>.+?) without finishing \((?P<why>.*)\)\.",
    r"could not load the file: (?P<d>.*)",
    r"(?P<n>\d+) check\(s\) stopped \((?P<c>.*)\), scored 0; the other checks ran\.",
    r"(?P<p>.+?) Also, the file left (?P<n>\d+) thread\(s\) running \((?P<t>.*)\); they were stopped when its grading ended\.",
    r"The file left (?P<n>\d+) thread\(s\) running \((?P<t>.*)\); they were stopped when its grading ended\.",
    r"(?P<f>'.*'): no such file or folder\.",
    r"(?P<f>'.*'): no such file\.",
    r"(?P<f>'.*'): is a directory, not a file\.",
    r"(?P<f>'.*'): a symlink loop \(the link leads back to itself\)\.",
    r"(?P<f>'.*'): cannot be opened \((?P<e>.*)\)\.",
    r"replace it with the exercise file itself\.",
    r"(?P<f>'.*'): not a regular file\.",
    r"pass exercise files \(\.py\) or folders of them\.",
    r"(?P<f>'.*'): a symlink to a folder above it \(a loop\); not searched\.",
    r"remove the link\.",
    r"(?P<f>'.*'): cannot be read \((?P<e>.*)\)\.",
    r"check the folder's permissions\.",
    r"cannot read (?P<f>'.*'): (?P<e>.*)\.",
    r"save the exercise as a UTF-8 text file\.",
    r"(?P<f>'.*') does not say which exercise it is: it has no line EXERCISE = \"\.\.\.\"\.",
    r"every starter file sets it, e\.g\. EXERCISE = \"ex04_softplus_vjp\"; known exercises: (?P<k>.*)\.",
    r"unknown exercise EXERCISE = (?P<n>.+) in (?P<f>'.*')\.",
    r"did you mean (?P<c>'.*')\? known exercises: (?P<k>.*)\.",
    r"known exercises: (?P<k>.*)\.",
    r"copy the starters with python -m microtape exercises DIR, then: python -m microtape grade DIR/(?P<s>\S+)",
    r"pass the path of your exercise file \(or a folder of them\), e\.g\. (?P<c>.*)",
    r"(?P<f>'.*'): a folder without \.py files \(or \.ipynb notebooks\)\.",
    # notebooks (notebooks.py, grade_child.py, catalog.py)
    r"the notebook (?P<f>\S+) cannot be read: (?P<pe>.*?)(?P<end>[.?!]?)",
    r"not valid JSON \(line (?P<l>\d+), column (?P<c>\d+): (?P<m>.*)\); was the notebook saved completely(?P<q>\??)",
    r"JSON, but not a Jupyter notebook: it has no list of \"cells\"",
    r"nbformat (?P<v>.+): the grader reads nbformat 4 notebooks \(save it again with Jupyter\)",
    r"cell (?P<n>\d+) is not a notebook cell \(no \"cell_type\"\)",
    r"cell (?P<n>\d+): its source is (?P<t>\w+), not text or a list of lines",
    r"open it in Jupyter and save it again \(File > Save\), or hand out a fresh starter with exercises DIR --notebook\.",
    r"(?P<f>'.*') is not a notebook the grader can read: (?P<pe>.*?)(?P<end>[.?!]?)",
    r"open it in Jupyter and save it again, or start again from exercises DIR --notebook\.",
    r"not run \(IPython magics and shell lines are not Python\): (?P<x>.*)",
    r"run as IPython runs it, the statement after the magic: (?P<x>.*)",
    r"not run \(a help request shows documentation, nothing else\): (?P<x>.*)",
    r"not started: the file's code is the starter's, as handed out\.",
)
"""The grader's own messages with values and the check helpers' phrases, as English patterns (msgids)."""

PATTERNS: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (re.compile(pattern), pattern) for pattern in (*PATTERNS_CHECKS, *HELPER_PATTERNS)  # the checks' own first
)
"""Messages with values: an English pattern (matching a whole line) and its msgid, in order of trial."""


def _cells(text: str) -> str:
    """Each "cell N, line M" of a notebook's place in ``text``, in Russian."""
    return re.sub(r"\bcell (\d+), line (\d+)", lambda m: tr("cell {cell}, line {line}", "ru").format(cell=m[1], line=m[2]), text)


def _fill(match: re.Match[str], template: str) -> str:
    values = {name: translate_line(value) if name.startswith("p") else _cells(value) for name, value in match.groupdict(default="").items()}
    values["more"] = f" (неверны {match['b']} из {match['n']} элементов)" if values.get("b") and values.get("n") and "more" in template else ""
    values["second"] = " (вторая производная)" if values.get("s") and "{second}" in template else ""
    point = re.fullmatch(r"(\w+) at (\[.*\]|\S+)(, order=2)?", values.get("what", ""))  # a check's input: "energy at [0.5, 1.5]"
    if point:
        values["what"] = tr("{name} at {point}", "ru").format(name=point[1], point=point[2]) + (point[3] or "")
    cell = re.fullmatch(r"(.+), cell (\d+), line (\d+)", values.get("at", ""))  # a notebook's line
    at = tr("{name}, cell {cell}, line {line}", "ru").format(name=cell[1], cell=cell[2], line=cell[3]) if cell else values.get("at", "")
    values["called"] = f", вызванной в {at}" if at else ""
    if values.get("w"):  # where in the student's file: " (ex.py:3 in f)"
        values["w"] = re.sub(r"\((\S+:\d+) in (\S+)\)", r"(\1, в \2)", values["w"])
    return template.format(**values)


def translate_line(line: str) -> str:
    """One line of a check's or the grader's English, in Russian (unchanged when it is not known).

    Leading spaces and a ``hint:`` prefix are kept.

    Examples:
        >>> from microtape.i18n.grader_ru import translate_line
        >>> translate_line("  df_by_hand(2.0) is wrong: off by about 10 % from the finite differences of f.")
        '  df_by_hand(2.0) вычислено неверно: ошибка около 10 % по сравнению с конечными разностями f.'
        >>> translate_line("hint: subtract, do not add")
        'подсказка: вычитайте, а не прибавляйте'
        >>> translate_line("a line nobody wrote a translation for")
        'a line nobody wrote a translation for'
    """
    body = line.lstrip(" ")
    indent = line[: len(line) - len(body)]
    if body.startswith("hint: "):
        return f"{indent}подсказка: {translate_line(body[6:])}"
    known = tr(body, "ru")  # a name, a hint, a starter's TODO message as the grader quotes it
    if known is not body:  # gettext hands back the very string it was given when it has no entry
        return indent + known
    for pattern, msgid in PATTERNS:
        match = pattern.fullmatch(body)
        if match:
            template = tr(msgid, "ru")
            if template is not msgid:
                return indent + _fill(match, template)
    return line


def translate(text: str) -> str:
    """A text of several lines, each translated by ``translate_line``.

    Examples:
        >>> from microtape.i18n.grader_ru import translate
        >>> print(translate("your code raised ValueError (ex.py:3 in f):\\n  bad value"))
        ваш код выбросил ValueError (ex.py:3, в f):
          bad value
    """
    return "\n".join(translate_line(line) for line in text.split("\n"))


def add_russian(entry: dict[str, object]) -> None:
    """Put the Russian beside the English in a graded entry (``*_ru`` fields), in place.

    Examples:
        >>> from microtape.i18n.grader_ru import add_russian
        >>> entry = {"title": None, "message": None, "checks": [{"name": "x", "details": ["it is nan"], "hints": []}]}
        >>> add_russian(entry)
        >>> entry["message_ru"], entry["checks"][0]["details_ru"]
        (None, ['получилось nan'])
    """
    for key in ("title", "message"):
        value = entry.get(key)
        entry[f"{key}_ru"] = translate(value) if isinstance(value, str) else value
    for key in ("details", "hints"):  # a file that did not load: its own details and hints
        found = entry.get(key)
        if isinstance(found, list):
            entry[f"{key}_ru"] = [translate(str(line)) for line in found]
    checks = entry.get("checks")
    for check in checks if isinstance(checks, list) else []:
        if isinstance(check, dict):
            check["name_ru"] = translate(str(check.get("name")))
            for key in ("details", "hints"):
                lines = check.get(key)
                check[f"{key}_ru"] = [translate(str(line)) for line in lines] if isinstance(lines, list) else []
