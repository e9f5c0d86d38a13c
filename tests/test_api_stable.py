"""The public API does not move when the code does: every exported name and its signature.

``tests/api_signatures.txt`` was written from the flat package, before its modules moved into
subpackages; this test compares the package as it is now with it, line by line:
every name of ``microtape.__all__`` (and the builtin-named ops reached as ``mt.print`` and so
on), of ``microtape.train.__all__`` and of ``microtape.exercise.__all__``, with its kind and
signature, and every public method and property of each public class. A change that is meant
(a new name, a new keyword) is recorded by running this file as a script::

    python tests/test_api_stable.py > tests/api_signatures.txt
"""

from __future__ import annotations

import inspect
from pathlib import Path
from types import ModuleType

import microtape as mt
import microtape.exercise

SNAPSHOT = Path(__file__).with_name("api_signatures.txt")
BUILTIN_NAMED = ("abs", "max", "min", "pow", "print", "round", "slice", "sum")
"""Ops named like Python builtins: public as ``mt.print`` and so on, whether or not ``__all__`` lists them."""


def _signature(obj: object) -> str:
    try:
        return str(inspect.signature(obj))  # type: ignore[arg-type]  # anything callable; the except handles the rest
    except (TypeError, ValueError):
        return "(...)"


def _describe(prefix: str, obj: object) -> list[str]:
    if inspect.isclass(obj):
        lines = [f"{prefix}: class{_signature(obj)}"]
        members: dict[str, object] = {}
        for klass in reversed(obj.__mro__):  # the class's own members and those of the parts it is split into
            exported = hasattr(mt, klass.__name__) or hasattr(mt.train, klass.__name__)
            if klass is obj:
                members.update(vars(klass))
            elif klass.__module__.startswith("microtape.") and not exported:
                members.update({k: v for k, v in vars(klass).items() if not k.startswith("__")})
        for name, member in sorted(members.items()):
            if name.startswith("_") and name not in ("__init__", "__call__", "__getitem__", "__iter__", "__len__"):
                continue
            if isinstance(member, property):
                lines.append(f"{prefix}.{name}: property")
            elif isinstance(member, (staticmethod, classmethod)):
                lines.append(f"{prefix}.{name}: {type(member).__name__}{_signature(member.__func__)}")
            elif inspect.isfunction(member):
                lines.append(f"{prefix}.{name}: method{_signature(member)}")
        return lines
    if isinstance(obj, ModuleType):
        return [f"{prefix}: module"]
    if callable(obj):
        return [f"{prefix}: callable{_signature(obj)}"]
    return [f"{prefix}: {type(obj).__name__}"]


def api_lines() -> list[str]:
    """One line per public name, method and property, sorted."""
    lines: list[str] = []
    names = sorted(set(mt.__all__) | {n for n in BUILTIN_NAMED if hasattr(mt, n)})
    for name in names:
        lines += _describe(f"mt.{name}", getattr(mt, name))
    for name in sorted(mt.train.__all__):
        lines += _describe(f"mt.train.{name}", getattr(mt.train, name))
    for name in sorted(microtape.exercise.__all__):
        lines += _describe(f"microtape.exercise.{name}", getattr(microtape.exercise, name))
    return lines


def test_every_public_name_and_signature_is_unchanged() -> None:
    recorded = SNAPSHOT.read_text(encoding="utf-8").splitlines()
    now = api_lines()
    gone = sorted(set(recorded) - set(now))
    new = sorted(set(now) - set(recorded))
    assert not gone and not new, (
        "the public API changed:\n" + "\n".join([*(f"- {line}" for line in gone), *(f"+ {line}" for line in new)])
        + "\nif that is meant, record it: python tests/test_api_stable.py > tests/api_signatures.txt"
    )


if __name__ == "__main__":
    print("\n".join(api_lines()))
