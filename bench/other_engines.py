"""micrograd and PyTorch running the scalar chain: the one place that touches them.

Both are optional (``pip install micrograd==0.1.0``, the ``bench`` extra;
``pip install torch``, never in an extra: it is large). Neither ships type
information, so they are imported with ``importlib.import_module`` and
handled as ``Any`` here, and only here: the rest of the benchmarks see
typed functions ``chain(prog) -> (value, d value / d x)`` or ``None`` when
the package is not importable.

Each side runs the chain as its users write it: micrograd with ``Value``
and its operators, then ``backward()``; PyTorch with a 0-d float64 tensor
that requires grad, ``*``, ``+``, ``torch.tanh`` and ``backward()``.
Two adjustments, both needed for the chain to run at all, neither making
it cheaper:

* micrograd 0.1.0 (the release on PyPI) has no ``tanh``; when ``Value``
  lacks one, ``_micrograd_tanh`` adds it exactly as micrograd writes its
  ``relu`` (a new ``Value`` with one child and a ``_backward`` closure);
* micrograd's ``backward`` sorts the graph with a recursive function, one
  Python frame per op of the chain, so the recursion limit is raised to the
  chain's length (plus a margin) for the call and restored after it
  (from Python 3.11 on, Python-to-Python calls do not use the C stack, so
  20,000 frames are safe; on 3.10 they might not be).

PyTorch is limited to one thread (``torch.set_num_threads(1)``): the chain
is 0-d tensors, so threads could only add CPU time that
``time.process_time`` counts; the other engines use one core too.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

Program = Sequence[tuple[str, float]]
Chain = Callable[[Program, float], tuple[float, float]]

MICROGRAD_HINT = "skipped: pip install micrograd==0.1.0"
TORCH_HINT = "skipped: pip install torch"


ENGINES: dict[str, tuple[str, str, str]] = {
    "micrograd": ("micrograd (Value)", "micrograd.engine", MICROGRAD_HINT),
    "torch": ("PyTorch (0-d float64 tensors)", "torch", TORCH_HINT),
}
"""name -> (label for the table, module to import, what a skipped row says)."""


def available(name: str) -> bool:
    """Whether engine ``name``'s module can be found, without importing it (PyTorch takes seconds)."""
    module = ENGINES[name][1]
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package missing or broken
        return False


def make(name: str) -> Chain | None:
    """Engine ``name``'s chain function, or ``None`` if it does not import."""
    return micrograd_chain() if name == "micrograd" else torch_chain()


def load(name: str) -> Any | None:
    """The module ``name`` if it imports, else ``None`` (any import-time failure counts as absent)."""
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a broken optional install means "skipped", not a crash
        return None


# -- micrograd -------------------------------------------------------------------


def micrograd_chain() -> Chain | None:
    """A function running the chain on micrograd, or ``None`` if micrograd is not installed."""
    engine = load("micrograd.engine")
    if engine is None:
        return None
    value_type: Any = engine.Value

    def _micrograd_tanh(v: Any) -> Any:
        # micrograd's own pattern (see Value.relu): forward value, children, and a closure for backward
        out = value_type(math.tanh(v.data), (v,), "tanh")

        def _backward() -> None:
            v.grad += (1 - out.data**2) * out.grad

        out._backward = _backward
        return out

    def _method_tanh(v: Any) -> Any:
        return v.tanh()

    tanh: Callable[[Any], Any] = _method_tanh if hasattr(value_type, "tanh") else _micrograd_tanh

    def run(prog: Program, x0: float) -> tuple[float, float]:
        x = value_type(x0)
        y = x
        for name, c in prog:
            if name == "mul":
                y = y * c
            elif name == "add":
                y = y + c
            else:
                y = tanh(y)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, len(prog) + 1_000))  # backward recurses once per op
        try:
            y.backward()
        finally:
            sys.setrecursionlimit(limit)
        return float(y.data), float(x.grad)

    return run


# -- PyTorch ---------------------------------------------------------------------


def torch_chain() -> Chain | None:
    """A function running the chain on PyTorch 0-d float64 tensors, or ``None`` if torch is not installed."""
    torch = load("torch")
    if torch is None:
        return None
    torch.set_num_threads(1)
    float64 = torch.float64
    tensor = torch.tensor
    tanh = torch.tanh

    def run(prog: Program, x0: float) -> tuple[float, float]:
        x = tensor(x0, requires_grad=True, dtype=float64)
        y = x
        for name, c in prog:
            if name == "mul":
                y = y * c
            elif name == "add":
                y = y + c
            else:
                y = tanh(y)
        y.backward()
        return float(y.item()), float(x.grad.item())

    return run


def version(name: str) -> str:
    """The installed version of a distribution, or ``"?"``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"
