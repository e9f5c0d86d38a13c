"""Training: the optimizers (``mt.train.sgd`` ... ``rmsprop``) and checkpoints.

The namespace users type (``mt.train.adam(...)``, as ``tf.train.*`` in
TensorFlow.js). Files, in reading order: ``atomic_write.py`` (a file written
whole or not at all), ``checkpoint_format.py`` (the JSON document and its
limits), ``validate.py`` (what optimizers are given, checked first),
``slots.py`` (an optimizer's state as plain data), ``optimizer.py`` (what
every optimizer shares: ``apply_gradients``, ``minimize``),
``checkpoint.py`` (``save_variables``, ``load_variables``) and
``optimizers.py`` (the seven TF.js update rules).

Examples:
    >>> x = mt.variable(mt.scalar(4.0))
    >>> mt.train.sgd(0.1).minimize(lambda: x * x)
    >>> round(x.item(), 10)
    3.2
"""

from __future__ import annotations

from .optimizer import Optimizer
from .optimizers import AdadeltaOptimizer, AdagradOptimizer, AdamaxOptimizer, AdamOptimizer, MomentumOptimizer, RMSPropOptimizer, SGDOptimizer, adadelta, adagrad, adam, adamax, momentum, rmsprop, sgd

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
