"""What the grader says, in Russian: the checks' names, hints and failure messages.

A check's messages are f-strings with real values in them. ``translate``
turns one such text into Russian, line by line: a line is first looked up
whole in ``microtape.i18n.exercise_checks_ru.EXACT`` (the names, the hints
and the messages without values, keyed by their English text) and in the
starters' table (a TODO message the grader quotes), then matched against
``PATTERNS`` (a message with values: the values are kept, and a group named
``p...`` is a phrase that is translated again, such as the ``off_by``
wording inside a message). A line that matches nothing stays English, so a
new check is never lost, only untranslated until its text is added here
(``tests/classroom/test_grade_russian.py`` finds such lines).

``add_russian`` puts the Russian beside the English in a graded entry:
``title_ru``, ``message_ru``, and per check ``name_ru``, ``details_ru``,
``hints_ru``; the JSON keeps its English keys and texts.
"""

from __future__ import annotations

import re
from typing import Final

from .exercise_checks_ru import EXACT, PATTERNS_CHECKS
from .starters_ru import STARTERS_RU

__all__ = ["PATTERNS", "add_russian", "translate", "translate_line"]

_HELPERS: Final[tuple[tuple[str, str], ...]] = (
    # check_helpers.off_by and friends: how a value misses, without giving it away
    (r"it is (?P<v>\S+)", "получилось {v}"),
    (r"it should not be finite", "значение должно быть не конечным"),
    (r"it should be 0", "должно быть 0"),
    (r"it is 0 and should not be", "получился 0, а не должен"),
    (r"its sign is wrong", "неверный знак"),
    (r"about (?P<n>\S+) times too large", "примерно в {n} раз(а) больше нужного"),
    (r"about (?P<n>\S+) times too small", "примерно в {n} раз(а) меньше нужного"),
    (r"far too large", "намного больше нужного"),
    (r"far too small", "намного меньше нужного"),
    (r"off by about (?P<n>\S+) %", "ошибка около {n} %"),
    (r"off in the last digits", "расхождение в последних знаках"),
    (r"too many", "слишком много"),
    (r"too few", "слишком мало"),
    (r"nothing", "ничего"),
    # check_helpers' Fail messages
    (r"(?P<what>.+) returned (?P<t>\w+) (?P<v>.*), not a number\.", "{what} вернула {t} {v}, а не число."),
    (r"(?P<what>.+) uses your (?P<n>\w+)\(\), which fails its check above: fix (?P=n)\(\) first\.",
     "{what} использует вашу {n}(), которая не прошла свою проверку выше: сначала исправьте {n}()."),
    (r"the file defines no (?P<n>\w+)\(\); the grader calls it by that name\.", "в файле нет функции {n}(); проверка вызывает её по этому имени."),
    (r"(?P<n>\w+) is a (?P<t>\w+), but the grader calls it as a function\.", "{n} — это {t}, а проверка вызывает его как функцию."),
    (r"(?P<what>.+) returned a subclass of Tensor, not a Tensor\.", "{what} вернула подкласс Tensor, а не Tensor."),
    (r"(?P<what>.+) returned (?P<k>.+), not a Tensor\.", "{what} вернула {k}, а не Tensor."),
    (r"(?P<what>.+) returned a disposed tensor \(made by (?P<op>.+)\): its values are gone\.",
     "{what} вернула освобождённый тензор (его создала {op}): его значений больше нет."),
    (r"(?P<what>.+) returned a tensor of shape (?P<s>.+), expected shape (?P<e>.+)\.", "{what} вернула тензор формы {s}, а нужна форма {e}."),
    (r"(?P<what>.+) returned a Tensor \((?P<v>.*)\), not a Python float; read it with \.item\(\)\.",
     "{what} вернула Tensor ({v}), а не число float; прочитайте его через .item()."),
    (r"(?P<what>.+) returned (?P<t>\w+), a subclass of (?P<b>\w+), not a plain Python number\.",
     "{what} вернула {t}, подкласс {b}, а не обычное число Python."),
    (r"(?P<what>.+) returned (?P<t>\w+), not an int\.", "{what} вернула {t}, а не int."),
    (r"(?P<what>.+) has (?P<n>\d+) entries, expected (?P<e>\d+)\.", "в {what} элементов: {n}, а нужно {e}."),
    (r"(?P<what>.+) holds (?P<t>\w+) at entry (?P<i>\d+), not a Python number\.", "{what} содержит {t} в элементе {i}, а не число Python."),
    (r"(?P<what>.+) is wrong at entry (?P<i>\d+): (?P<p>.+?)(?: \((?P<b>\d+) of (?P<n>\d+) entries are wrong\))?\.",
     "{what} вычислено неверно в элементе {i}: {p}{more}."),
    (r"(?P<what>.+) is wrong: (?P<p>.+?)(?: \((?P<b>\d+) of (?P<n>\d+) entries are wrong\))?\.", "{what} вычислено неверно: {p}{more}."),
    (r"(?P<what>.+): check_grads failed \((?P<f>\d+) of (?P<n>\d+) entries disagree\)\.",
     "{what}: check_grads не прошла (не совпадают {f} из {n} элементов)."),
    (r"d (?P<o>\S+) / d (?P<a>\S+?)(?P<s> \(second derivative\))?: the analytic gradient is (?P<g>\S+), finite differences give (?P<f>\S+)",
     "d {o} / d {a}{second}: аналитический градиент равен {g}, конечные разности дают {f}"),
    (r"culprit: the VJP of (?P<op>.+?)(?: called at (?P<at>\S+))?: for input (?P<i>\S+), with the gradient that reached it, "
     r"it gives (?P<g>\S+), finite differences give (?P<f>\S+)",
     "виновник: VJP операции {op}{called}: для входа {i}, с дошедшим до него градиентом, он даёт {g}, конечные разности дают {f}"),
    (r"culprit: the VJP of (?P<op>.+?)(?: called at (?P<at>\S+))?: along a random direction it gives (?P<g>\S+), finite differences give (?P<f>\S+)",
     "виновник: VJP операции {op}{called}: вдоль случайного направления он даёт {g}, конечные разности дают {f}"),
    # grade_child: what a student's code raised, a TODO, a file that does not load
    (r"your code raised (?P<e>\w+)(?P<w> \(.*\))?:", "ваш код выбросил {e}{w}:"),
    (r"the check raised (?P<e>\w+):", "проверка выбросила {e}:"),
    (r"loading the file raised (?P<e>\w+)(?P<w> \(.*\))?:", "при загрузке файла возникло {e}{w}:"),
    (r"\(the grader limits each file's memory; an allocation this large is a bug\)",
     "(проверка ограничивает память каждого файла; такое большое выделение памяти — ошибка)"),
    (r"\(sys\.exit\(\) or exit\(\) stops a program; an exercise function returns instead\)",
     "(sys.exit() или exit() завершают программу; функция упражнения должна вернуть значение)"),
    (r"not done yet: (?P<ptodo>.*?)(?P<w> \(\S+:\d+ in \S+\))?", "ещё не сделано: {ptodo}{w}"),
    (r"a function still raises NotImplementedError", "функция всё ещё выбрасывает NotImplementedError"),
    (r"the file does not parse: SyntaxError(?P<w> \(.*\))?: (?P<m>.*)", "файл не разбирается: SyntaxError{w}: {m}"),
    (r"fix the line shown \(or the one before it\), then grade again\.", "исправьте показанную строку (или строку перед ней) и проверьте снова."),
    (r"the file must run top to bottom without errors; keep module-level code to definitions and constants\.",
     "файл должен выполняться сверху донизу без ошибок; на уровне модуля оставьте только определения и константы."),
    # the grader's own messages about a file
    (r"stopped after (?P<s>\S+) s \(the check's time limit\): an endless loop, or far too much work\?",
     "остановлено через {s} с (ограничение времени проверки): бесконечный цикл или слишком много работы?"),
    (r"stopped after (?P<s>\S+) s after its checks had finished: an endless loop, or far too much work\?",
     "остановлено через {s} с после окончания проверок: бесконечный цикл или слишком много работы?"),
    (r"stopped after (?P<s>\S+) s while loading the file: an endless loop, or far too much work\?",
     "остановлено через {s} с во время загрузки файла: бесконечный цикл или слишком много работы?"),
    (r"stopped after (?P<s>\S+) s in the check (?P<c>'.*'): an endless loop, or far too much work\?",
     "остановлено через {s} с в проверке {c}: бесконечный цикл или слишком много работы?"),
    (r"stopped after (?P<s>\S+) s between its checks: an endless loop, or far too much work\?",
     "остановлено через {s} с между проверками: бесконечный цикл или слишком много работы?"),
    (r"stopped when the file's (?P<s>\S+) s were up, in this check\.", "остановлено, когда вышли {s} с файла, в этой проверке."),
    # assignments (grader.py)
    (r"not submitted: (?P<p>.+) holds no file of (?P<n>\S+)\.", "не сдано: в {p} нет файла упражнения {n}."),
    (r"not submitted", "не сдано"),
    (r"(?P<f>'.*') is (?P<n>\S+), which this assignment does not ask for; it is not graded\.",
     "{f} — это {n}, которого задание не требует; файл не проверяется."),
    (r"the assignment asks for (?P<n>.+)\.", "задание требует {n}."),
    (r"(?P<pre>.*?)(?P<a>[Aa])nother file of (?P<n>\S+) in this submission \((?P<f>.+)\) scored higher or came first; this one does not count\.",
     "{pre}другой файл упражнения {n} в этой сданной работе ({f}) набрал больше или шёл первым; этот не засчитывается."),
    (r"the grading process ended in this check without finishing \((?P<why>.*)\)", "процесс проверки завершился в этой проверке, не закончив её ({why})"),
    (r"the grading process ended (?P<where>.+?) without finishing \((?P<why>.*)\)\.", "процесс проверки завершился, не закончив работу ({why})."),
    (r"could not load the file: (?P<d>.*)", "файл не загрузился: {d}"),
    (r"(?P<n>\d+) check\(s\) stopped \((?P<c>.*)\), scored 0; the other checks ran\.",
     "остановлено проверок: {n} ({c}), за них 0 баллов; остальные проверки выполнены."),
    (r"(?P<p>.+?) Also, the file left (?P<n>\d+) thread\(s\) running \((?P<t>.*)\); they were stopped when its grading ended\.",
     "{p} Кроме того, файл оставил работающими потоки ({n}: {t}); они остановлены в конце его проверки."),
    (r"The file left (?P<n>\d+) thread\(s\) running \((?P<t>.*)\); they were stopped when its grading ended\.",
     "Файл оставил работающими потоки ({n}: {t}); они остановлены в конце его проверки."),
    (r"(?P<f>'.*'): no such file or folder\.", "{f}: нет такого файла или папки."),
    (r"(?P<f>'.*'): no such file\.", "{f}: нет такого файла."),
    (r"(?P<f>'.*'): is a directory, not a file\.", "{f}: это папка, а не файл."),
    (r"(?P<f>'.*'): a symlink loop \(the link leads back to itself\)\.", "{f}: петля символических ссылок (ссылка ведёт сама на себя)."),
    (r"(?P<f>'.*'): cannot be opened \((?P<e>.*)\)\.", "{f}: не открывается ({e})."),
    (r"replace it with the exercise file itself\.", "замените её самим файлом упражнения."),
    (r"(?P<f>'.*'): not a regular file\.", "{f}: не обычный файл."),
    (r"pass exercise files \(\.py\) or folders of them\.", "передайте файлы упражнений (.py) или папки с ними."),
    (r"(?P<f>'.*'): a symlink to a folder above it \(a loop\); not searched\.", "{f}: символическая ссылка на папку выше (петля); поиск в ней не ведётся."),
    (r"remove the link\.", "удалите ссылку."),
    (r"(?P<f>'.*'): cannot be read \((?P<e>.*)\)\.", "{f}: не читается ({e})."),
    (r"check the folder's permissions\.", "проверьте права доступа к папке."),
    (r"cannot read (?P<f>'.*'): (?P<e>.*)\.", "не удаётся прочитать {f}: {e}."),
    (r"save the exercise as a UTF-8 text file\.", "сохраните упражнение как текстовый файл в UTF-8."),
    (r"(?P<f>'.*') does not say which exercise it is: it has no line EXERCISE = \"\.\.\.\"\.",
     "{f} не говорит, какое это упражнение: в нём нет строки EXERCISE = \"...\"."),
    (r"every starter file sets it, e\.g\. EXERCISE = \"ex04_softplus_vjp\"; known exercises: (?P<k>.*)\.",
     "её задаёт каждая заготовка, например EXERCISE = \"ex04_softplus_vjp\"; известные упражнения: {k}."),
    (r"unknown exercise EXERCISE = (?P<n>.+) in (?P<f>'.*')\.", "неизвестное упражнение EXERCISE = {n} в {f}."),
    (r"did you mean (?P<c>'.*')\? known exercises: (?P<k>.*)\.", "может быть, {c}? Известные упражнения: {k}."),
    (r"known exercises: (?P<k>.*)\.", "известные упражнения: {k}."),
    (r"copy the starters with python -m microtape exercises DIR, then: python -m microtape grade DIR/(?P<s>\S+)",
     "скопируйте заготовки командой python -m microtape exercises DIR, затем: python -m microtape grade DIR/{s}"),
    (r"pass the path of your exercise file \(or a folder of them\), e\.g\. (?P<c>.*)",
     "укажите путь к файлу упражнения (или к папке с ними), например {c}"),
    (r"(?P<f>'.*'): a folder without \.py files \(or \.ipynb notebooks\)\.", "{f}: в папке нет файлов .py (и блокнотов .ipynb)."),
    # notebooks (notebooks.py, grade_child.py, catalog.py)
    (r"the notebook (?P<f>\S+) cannot be read: (?P<pe>.*?)(?P<end>[.?!]?)", "блокнот {f} не читается: {pe}{end}"),
    (r"not valid JSON \(line (?P<l>\d+), column (?P<c>\d+): (?P<m>.*)\); was the notebook saved completely(?P<q>\??)",
     "не корректный JSON (строка {l}, столбец {c}: {m}); сохранён ли блокнот полностью{q}"),
    (r"JSON, but not a Jupyter notebook: it has no list of \"cells\"", "JSON, но не блокнот Jupyter: в нём нет списка \"cells\""),
    (r"nbformat (?P<v>.+): the grader reads nbformat 4 notebooks \(save it again with Jupyter\)",
     "nbformat {v}: проверяющая программа читает блокноты nbformat 4 (сохраните его заново в Jupyter)"),
    (r"cell (?P<n>\d+) is not a notebook cell \(no \"cell_type\"\)", "ячейка {n} — не ячейка блокнота (нет \"cell_type\")"),
    (r"cell (?P<n>\d+): its source is (?P<t>\w+), not text or a list of lines", "ячейка {n}: её исходный текст — {t}, а не текст или список строк"),
    (r"open it in Jupyter and save it again \(File > Save\), or hand out a fresh starter with exercises DIR --notebook\.",
     "откройте его в Jupyter и сохраните заново (File > Save) или раздайте новую заготовку командой exercises DIR --notebook."),
    (r"(?P<f>'.*') is not a notebook the grader can read: (?P<pe>.*?)(?P<end>[.?!]?)", "{f} — не блокнот, который может прочитать проверяющая программа: {pe}{end}"),
    (r"open it in Jupyter and save it again, or start again from exercises DIR --notebook\.",
     "откройте его в Jupyter и сохраните заново или начните снова с exercises DIR --notebook."),
    (r"not run \(IPython magics and shell lines are not Python\): (?P<x>.*)",
     "не выполнено (магические команды IPython и строки оболочки — не Python): {x}"),
    (r"run as IPython runs it, the statement after the magic: (?P<x>.*)",
     "выполнено так, как выполняет IPython, — инструкция после магической команды: {x}"),
    (r"not run \(a help request shows documentation, nothing else\): (?P<x>.*)",
     "не выполнено (запрос справки только показывает документацию): {x}"),
    (r"not started: the file's code is the starter's, as handed out\.", "не начато: код файла — код заготовки в том виде, в каком её выдали."),
)

PATTERNS: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (re.compile(pattern), template) for pattern, template in (*PATTERNS_CHECKS, *_HELPERS)  # the checks' own first
)
"""Messages with values: an English pattern (matching a whole line) and its Russian, in order of trial."""


def _fill(match: re.Match[str], template: str) -> str:
    values = {name: translate_line(value) if name.startswith("p") else value for name, value in match.groupdict(default="").items()}
    values["more"] = f" (неверны {match['b']} из {match['n']} элементов)" if values.get("b") and values.get("n") and "more" in template else ""
    values["second"] = " (вторая производная)" if values.get("s") and "{second}" in template else ""
    values["called"] = f", вызванной в {values['at']}" if values.get("at") else ""
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
    known = EXACT.get(body, STARTERS_RU.get(body))  # a starter's TODO message, as the grader quotes it
    if known is not None:
        return indent + known
    for pattern, template in PATTERNS:
        match = pattern.fullmatch(body)
        if match:
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
    checks = entry.get("checks")
    for check in checks if isinstance(checks, list) else []:
        if isinstance(check, dict):
            check["name_ru"] = translate(str(check.get("name")))
            for key in ("details", "hints"):
                lines = check.get(key)
                check[f"{key}_ru"] = [translate(str(line)) for line in lines] if isinstance(lines, list) else []
