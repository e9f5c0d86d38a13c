"""Optimizers: ``mt.train.sgd``, ``momentum``, ``adagrad``, ``adadelta``, ``adam``, ``adamax``, ``rmsprop``.

The namespace users type (``mt.train.adam(...)``, as ``tf.train.*`` in
TensorFlow.js). It holds no code of its own: the machinery every optimizer
shares (``apply_gradients``, ``minimize``) is in ``optimizer.py``, its slots and
state in ``state.py``, and the seven update rules in ``optimizers.py``. This
folder also holds checkpoints (``checkpoint_format.py``, ``atomic_write.py``,
``checkpoint.py``) and ``frames.py`` (``next_frame``); read it after
``debug/``, in the order ``checks.py``, ``state.py``, ``optimizer.py``,
``optimizers.py``, this file, then the checkpoint files and ``frames.py``.

Examples:
    >>> x = mt.variable(mt.scalar(4.0))
    >>> mt.train.sgd(0.1).minimize(lambda: x * x)
    >>> round(x.item(), 10)
    3.2
"""

from __future__ import annotations

from .optimizer import Optimizer
from .optimizers import (
    AdadeltaOptimizer,
    AdagradOptimizer,
    AdamaxOptimizer,
    AdamOptimizer,
    MomentumOptimizer,
    RMSPropOptimizer,
    SGDOptimizer,
    adadelta,
    adagrad,
    adam,
    adamax,
    momentum,
    rmsprop,
    sgd,
)

__all__ = [
    "AdadeltaOptimizer",
    "AdagradOptimizer",
    "AdamOptimizer",
    "AdamaxOptimizer",
    "MomentumOptimizer",
    "Optimizer",
    "RMSPropOptimizer",
    "SGDOptimizer",
    "adadelta",
    "adagrad",
    "adam",
    "adamax",
    "momentum",
    "rmsprop",
    "sgd",
]
