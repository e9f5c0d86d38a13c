"""Optimizers: ``mt.train.sgd``, ``momentum``, ``adagrad``, ``adadelta``, ``adam``, ``adamax``, ``rmsprop``.

The namespace users type (``mt.train.adam(...)``, as ``tf.train.*`` in
TensorFlow.js). It holds no code of its own: the machinery every optimizer
shares (slots, ``apply_gradients``, ``minimize``, saving and restoring) is in
``optimizer.py``, and the seven update rules are in ``optimizers.py``.

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
