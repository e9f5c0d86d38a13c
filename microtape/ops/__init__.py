"""Every primitive op: a maths header, the forward and its one VJP, side by side.

The ops stand on the engine's table (``engine/primitive.py``). Files, in
reading order, each building only on the ones before it:
``floats.py`` (IEEE-754 scalar functions: ``1/0`` is ``inf``),
``index_maps.py`` (broadcasting, axes and the index maps on plain ints),
``kernels.py`` (the only loops over flat lists), ``creation.py`` (``tensor``,
``zeros``, ``random_normal`` ...), ``shape_ops.py`` (shape ops, sums, and
``unbroadcast``/``unreduce``, the adjoints of broadcasting and reducing),
``compare.py`` (comparisons, ``sign``, ``zeros_like``), ``arithmetic.py``
(``add`` to ``sqrt``), ``piecewise.py`` (``abs``, ``relu``, ``maximum``,
``where`` and the others whose VJPs are masks), ``transcendental.py``
(``exp``, ``log``, ``pow``, the trigonometric functions, ``tanh``,
``sigmoid``), ``reduce.py`` (``reduce_max``, ``logsumexp``, ``norm``, ``matmul``),
``logits.py`` (``softplus``, ``log_sigmoid`` and the cross-entropies on
logits), ``indexing.py`` (``gather``);
this module gathers the primitives, so ``microtape.ops.<name>`` names every
one, and ``composite.py`` builds ops from them (``mean``, ``softmax``,
``stack``), with no VJP of their own.

The forward of each entry is one kernel call on flat lists; the VJP
``(dout, out, *inputs, **params) -> Grads`` is written with public ops, so
an outer tape records it and higher-order gradients come for free. It is
the only rule of its op: every backward pass, of every order, watched or
not, calls it. A VJP repeats its forward's keyword defaults.

A binary VJP may take ``needs=(bool, bool)``: the tape says which inputs
need a gradient, and the VJP skips the others (the gradient of a constant
operand such as the 2.0 in ``x * 2.0`` is never computed). Without it, a
VJP returns every input's gradient.
"""

from __future__ import annotations

from .shape_ops import broadcast_to, concat, pad, reduce_sum, reshape, slice, transpose, unbroadcast, unreduce
from .compare import argmax, argmin, equal, greater, greater_equal, is_finite, is_inf, is_nan, less, less_equal, one_hot, sign, zeros_like
from .arithmetic import add, clone, div, mul, neg, sqrt, square, stop_gradient, sub
from .piecewise import abs, clip_by_value, maximum, minimum, relu, where
from .transcendental import atan, atan2, cos, exp, expm1, log, log1p, log2, pow, sigmoid, sin, tanh
from .reduce import logsumexp, matmul, norm, reduce_max
from .logits import log_sigmoid, sigmoid_cross_entropy, softmax_cross_entropy, softplus
from .indexing import gather

__all__ = [
    "abs",
    "add",
    "argmax",
    "argmin",
    "atan",
    "atan2",
    "broadcast_to",
    "clip_by_value",
    "clone",
    "concat",
    "cos",
    "div",
    "equal",
    "exp",
    "expm1",
    "gather",
    "greater",
    "greater_equal",
    "is_finite",
    "is_inf",
    "is_nan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log_sigmoid",
    "logsumexp",
    "matmul",
    "maximum",
    "minimum",
    "mul",
    "neg",
    "norm",
    "one_hot",
    "pad",
    "pow",
    "reduce_max",
    "reduce_sum",
    "relu",
    "reshape",
    "sigmoid",
    "sigmoid_cross_entropy",
    "sign",
    "sin",
    "slice",
    "softmax_cross_entropy",
    "softplus",
    "sqrt",
    "square",
    "stop_gradient",
    "sub",
    "tanh",
    "transpose",
    "unbroadcast",
    "unreduce",
    "where",
    "zeros_like",
]
