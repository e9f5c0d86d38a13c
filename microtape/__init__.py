"""microtape: a small, fully typed, pure-Python autodiff framework for learning gradient debugging.

The public API, re-exported from the modules that define it. To read the
code, start with the engine: ``microtape/engine/__init__.py`` gives its
reading order, and every other folder's ``__init__`` lists its own files.
"""

from __future__ import annotations

from . import views as _views  # noqa: F401 - installs the presentation (HTML, habits) on the engine's classes
from . import train as train
from .train.checkpoint import load_variables as load_variables
from .train.checkpoint import save_variables as save_variables
from .debug.clipping import clip_by_global_norm as clip_by_global_norm
from .debug.clipping import clip_by_norm as clip_by_norm
from .ops.composite import log_softmax as log_softmax
from .ops.composite import mean as mean
from .ops.composite import reduce_min as min  # noqa: A004 - TF.js's name; the package never uses the builtin via mt
from .ops.composite import softmax as softmax
from .ops.composite import stack as stack
from .dashboard.page import Dashboard as Dashboard
from .dashboard.page import DashboardError as DashboardError
from .debug.stats import GradientMonitor as GradientMonitor
from .debug.stats import GradStats as GradStats
from .debug.anomaly import check_numerics as check_numerics
from .debug.anomaly import detect_anomaly as detect_anomaly
from .debug.anomaly_report import AnomalyEvent as AnomalyEvent
from .debug.anomaly_report import AnomalyTrace as AnomalyTrace
from .debug.stats import grad_stats as grad_stats
from .debug.plots import histogram as histogram
from .debug.printing import print_tensor as print  # noqa: A004 - mt.print mirrors tf.print
from .debug.plots import sparkline as sparkline
from .i18n.messages import set_language as set_language
from .errors import AnomalyError as AnomalyError
from .errors import CheckpointError as CheckpointError
from .errors import DisposedTensorError as DisposedTensorError
from .errors import GradientCheckError as GradientCheckError
from .errors import GradientError as GradientError
from .errors import GradientKeyError as GradientKeyError
from .errors import GradientWarning as GradientWarning
from .errors import InvalidArgumentError as InvalidArgumentError
from .errors import LeakError as LeakError
from .errors import MicrotapeError as MicrotapeError
from .errors import NumericsError as NumericsError
from .errors import ShapeError as ShapeError
from .errors import TapeError as TapeError
from .errors import TidyError as TidyError
from .errors import UnsupportedAttributeError as UnsupportedAttributeError
from .errors import UnsupportedOperationError as UnsupportedOperationError
from .errors import VariableError as VariableError
from .dashboard.next_frame import next_frame as next_frame
from .replay.function import Function as Function
from .replay.function import RetraceWarning as RetraceWarning
from .replay.function import function as function
from .autodiff.functional import GradMap as GradMap
from .autodiff.functional import VariableGrads as VariableGrads
from .autodiff.custom import custom_grad as custom_grad
from .explain.report import BlockedOp as BlockedOp
from .explain.report import GradientExplanation as GradientExplanation
from .explain.report import GradientPath as GradientPath
from .explain.report import GradientStep as GradientStep
from .autodiff.functional import explain_gradient as explain_gradient
from .autodiff.functional import grad as grad
from .autodiff.functional import grads as grads
from .autodiff.functional import value_and_grad as value_and_grad
from .autodiff.functional import value_and_grads as value_and_grads
from .autodiff.functional import variable_grads as variable_grads
from .autodiff.forward import hvp as hvp
from .autodiff.forward import jvp as jvp
from .autodiff.forward import linearize as linearize
from .checking.gradcheck import GradCheckReport as GradCheckReport
from .checking.gradcheck import check_grads as check_grads
from .checking.gradcheck import numerical_grad as numerical_grad
from .engine.memory import MemoryInfo as MemoryInfo
from .debug.profiling import ProfileInfo as ProfileInfo
from .engine.memory import dispose as dispose
from .engine.memory import keep as keep
from .debug.leaks import leak_check as leak_check
from .engine.memory import memory as memory
from .debug.profiling import profile as profile
from .engine.memory import tidy as tidy
from .ops import abs as abs  # noqa: A004 - tf.abs
from .ops import add as add
from .ops import broadcast_to as broadcast_to
from .ops import clip_by_value as clip_by_value
from .ops import clone as clone
from .ops import concat as concat
from .ops import cos as cos
from .ops import div as div
from .ops import equal as equal
from .ops import exp as exp
from .ops import greater as greater
from .ops import greater_equal as greater_equal
from .ops import less as less
from .ops import less_equal as less_equal
from .ops import log as log
from .ops import logsumexp as logsumexp
from .ops import matmul as matmul
from .ops import maximum as maximum
from .ops import minimum as minimum
from .ops import mul as mul
from .ops import neg as neg
from .ops import pad as pad
from .ops import pow as pow  # noqa: A004 - tf.pow
from .ops import reduce_max as max  # noqa: A004 - tf.max
from .ops import reduce_sum as sum  # noqa: A004 - tf.sum
from .ops import relu as relu
from .ops import reshape as reshape
from .ops import sigmoid as sigmoid
from .ops import sign as sign
from .ops import sin as sin
from .ops import slice as slice  # noqa: A004 - tf.slice
from .ops import sqrt as sqrt
from .ops import square as square
from .ops import sub as sub
from .ops import tanh as tanh
from .ops import transpose as transpose
from .ops import where as where
from .ops import zeros_like as zeros_like
from .ops import argmax as argmax
from .ops import argmin as argmin
from .ops import atan as atan
from .ops import atan2 as atan2
from .ops import expm1 as expm1
from .ops import gather as gather
from .ops import is_finite as is_finite
from .ops import is_inf as is_inf
from .ops import is_nan as is_nan
from .ops import log1p as log1p
from .ops import log2 as log2
from .ops import log_sigmoid as log_sigmoid
from .ops import norm as norm
from .ops import one_hot as one_hot
from .ops import sigmoid_cross_entropy as sigmoid_cross_entropy
from .ops import softmax_cross_entropy as softmax_cross_entropy
from .ops import softplus as softplus
from .ops import stop_gradient as stop_gradient
from .autodiff.gradient_tape import GradientTape as GradientTape
from .explain.steps import BackwardStep as BackwardStep
from .engine.tensor import Tensor as Tensor
# The creation functions come after the tensor module, so that ``mt.tensor`` names
# the function to type checkers too, not the submodule of the same name.
from .ops.creation import fill as fill
from .ops.creation import ones as ones
from .ops.creation import ones_like as ones_like
from .ops.creation import random_normal as random_normal
from .ops.creation import random_uniform as random_uniform
from .ops.creation import scalar as scalar
from .ops.creation import tensor as tensor
from .ops.creation import tensor1d as tensor1d
from .ops.creation import tensor2d as tensor2d
from .ops.creation import zeros as zeros
from .engine.variable import Variable as Variable
from .engine.variable import variable as variable

from ._version import __version__ as __version__
from .views import habits
from typing import TYPE_CHECKING, Final

__all__ = [
    "AnomalyError",
    "AnomalyEvent",
    "AnomalyTrace",
    "BackwardStep",
    "BlockedOp",
    "CheckpointError",
    "Dashboard",
    "DashboardError",
    "DisposedTensorError",
    "Function",
    "GradCheckReport",
    "GradMap",
    "GradStats",
    "GradientCheckError",
    "GradientError",
    "GradientExplanation",
    "GradientKeyError",
    "GradientMonitor",
    "GradientPath",
    "GradientStep",
    "GradientTape",
    "GradientWarning",
    "InvalidArgumentError",
    "LeakError",
    "MemoryInfo",
    "MicrotapeError",
    "NumericsError",
    "ProfileInfo",
    "RetraceWarning",
    "ShapeError",
    "TapeError",
    "Tensor",
    "TidyError",
    "UnsupportedAttributeError",
    "UnsupportedOperationError",
    "Variable",
    "VariableError",
    "VariableGrads",
    "add",
    "argmax",
    "argmin",
    "atan",
    "atan2",
    "broadcast_to",
    "check_grads",
    "check_numerics",
    "clip_by_global_norm",
    "clip_by_norm",
    "clip_by_value",
    "clone",
    "concat",
    "cos",
    "custom_grad",
    "detect_anomaly",
    "dispose",
    "div",
    "equal",
    "exp",
    "explain_gradient",
    "expm1",
    "fill",
    "function",
    "gather",
    "grad",
    "grad_stats",
    "grads",
    "greater",
    "greater_equal",
    "histogram",
    "hvp",
    "is_finite",
    "is_inf",
    "is_nan",
    "jvp",
    "keep",
    "leak_check",
    "less",
    "less_equal",
    "linearize",
    "load_variables",
    "log",
    "log1p",
    "log2",
    "log_sigmoid",
    "log_softmax",
    "logsumexp",
    "matmul",
    "maximum",
    "mean",
    "memory",
    "minimum",
    "mul",
    "neg",
    "next_frame",
    "norm",
    "numerical_grad",
    "one_hot",
    "ones",
    "ones_like",
    "pad",
    "profile",
    "random_normal",
    "random_uniform",
    "relu",
    "reshape",
    "save_variables",
    "scalar",
    "set_language",
    "sigmoid",
    "sigmoid_cross_entropy",
    "sign",
    "sin",
    "softmax",
    "softmax_cross_entropy",
    "softplus",
    "sparkline",
    "sqrt",
    "square",
    "stack",
    "stop_gradient",
    "sub",
    "tanh",
    "tensor",
    "tensor1d",
    "tensor2d",
    "tidy",
    "train",
    "transpose",
    "value_and_grad",
    "value_and_grads",
    "variable",
    "variable_grads",
    "where",
    "zeros",
    "zeros_like",
]

__builtin_named__: Final = ("abs", "max", "min", "pow", "print", "slice", "sum")
"""Public names that are also Python builtins: ``mt.sum``, ``mt.print``, ...

They are TF.js's names, public and typed like every other, but left out of
``__all__`` at run time, so ``from microtape import *`` does not shadow
Python's ``print`` or ``sum``. The API page and the tests read ``__all__`` and
this list together. Type checkers, which take the public names from
``__all__``, see them added to it.
"""

if TYPE_CHECKING:  # for type checkers they are exported like every other public name (mypy and pyright read __all__)
    __all__ += ["abs", "max", "min", "pow", "print", "slice", "sum"]

if not TYPE_CHECKING:  # hidden from type checkers: a typo such as mt.variabel_grads stays a type error

    def __getattr__(name: str) -> object:
        """``mt.variableGrads`` and other TF.js spellings: an error with the snake_case name."""
        raise habits.module_attribute_error(name, [*__all__, *__builtin_named__])
