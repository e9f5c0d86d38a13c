"""The languages microtape speaks: the English tables, the grader's patterns, the catalog's upkeep.

English is the source language, written in the code; every other language
lives in a gettext catalog, ``microtape/locale/<lang>/LC_MESSAGES/microtape.po``,
read at run time by ``microtape/language.py`` (the bottom module every layer
can use, the engine through ``errors``) with the standard library's
``gettext`` from the compiled ``.mo``.

Files, in reading order: ``messages.py`` (the terminal's own words, by key;
the language of a command; ``set_language``, which is ``mt.set_language``),
``command_line.py`` (the parser, its ``--help`` and argparse's words),
``exercise_checks_ru.py`` (the shipped checks' messages with values, as
English patterns), ``grader_ru.py`` (the grader's patterns, and turning a
graded entry's English into Russian line by line), ``starters_ru.py`` (the
starters' texts a student reads) and ``extract.py`` (keeps the catalog in
step with the code: ``python -m microtape.i18n.extract [--check]``).

How to add a message:

1. Write it in English where it is printed, through the catalog:
   ``tr("{name}: the loss is {loss}.").format(name=name, loss=loss)``
   (``from ..language import tr``; a template with named fields, never an
   f-string inside ``tr``, so one msgid serves every value). An error's
   parts go through ``errors.explain(what, rule, hint)``, which looks each
   part up; a part with values is written ``tr("... {x} ...").format(x=x)``.
   A message of the command line goes in ``messages.MESSAGES`` (or
   ``command_line.HELP``) under a key, printed with ``say(lang, key, ...)``;
   a check's message with values needs its English pattern in
   ``exercise_checks_ru.PATTERNS_CHECKS``.
2. Run ``python -m microtape.i18n.extract``: the new msgid appears in the
   ``.po`` with an empty msgstr.
3. Write its Russian as the msgstr (keep every ``{field}``; use the
   glossary's terms, ``tests/test_vocabulary.py``), and drop any
   ``#, fuzzy`` line once it is checked.

``tests/i18n/test_catalog.py`` runs ``extract --check``: a message without
Russian, a fuzzy one or an obsolete one fails the suite.
"""
