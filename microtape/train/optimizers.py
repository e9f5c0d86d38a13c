"""The seven optimizers of ``mt.train``: SGD, Momentum, Adagrad, Adadelta, Adam, Adamax, RMSProp.

Each optimizer here is only its hyperparameters, its slot names and
``_step``: the update of one variable on flat lists of floats, with its
formula above it. ``get_config`` comes from the base class, which reads the
names listed in ``config_fields``.
"""

from __future__ import annotations

from typing import ClassVar

from ..errors import N_
from .validate import EPSILON, check_epsilon, check_flag, check_non_negative, check_unit, nan_maximum
from ..ops.floats import safe_div as _div
from ..ops.floats import safe_sqrt as _sqrt
from .optimizer import Optimizer, OptimizerName

__all__ = [
    "AdadeltaOptimizer",
    "AdagradOptimizer",
    "AdamOptimizer",
    "AdamaxOptimizer",
    "MomentumOptimizer",
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


# ── the optimizers ─────────────────────────────────────────────────────────────


class SGDOptimizer(Optimizer):
    """Plain gradient descent (``tf.train.sgd`` / ``SGDOptimizer`` in TF.js).

    The update, for every entry of every variable, with learning rate lr::

        w <- w - lr * g

    It keeps no slots.

    Examples:
        >>> x = mt.variable(mt.scalar(4.0))
        >>> opt = mt.train.sgd(0.1)
        >>> opt.minimize(lambda: x * x)           # g = 2x = 8, x <- 4 - 0.1 * 8
        >>> round(x.item(), 10)
        3.2
    """

    class_name: ClassVar[OptimizerName] = "SGD"

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr = self._learning_rate
        return [wi - lr * gi for wi, gi in zip(w, g)]



class MomentumOptimizer(Optimizer):
    """Gradient descent with momentum (``tf.train.momentum`` / ``MomentumOptimizer`` in TF.js).

    With learning rate lr, momentum mu and the slot ``a`` (named
    ``"<var>/momentum"``, starting at 0)::

        a <- mu * a + g
        w <- w - lr * a                   (use_nesterov=False)
        w <- w - lr * (g + mu * a)        (use_nesterov=True, with the new a)

    Examples:
        >>> x = mt.variable(mt.tensor([1.0, 2.0]))
        >>> opt = mt.train.momentum(0.1, 0.5)
        >>> opt.minimize(lambda: (x * x).sum())     # a = g = [2, 4]
        >>> opt.minimize(lambda: (x * x).sum())     # a = 0.5 * [2, 4] + [1.6, 3.2]
        >>> [round(v, 10) for v in x.data_sync()]
        [0.54, 1.08]
    """

    class_name: ClassVar[OptimizerName] = "Momentum"
    config_fields: ClassVar[tuple[str, ...]] = ("learning_rate", "momentum", "use_nesterov")

    def __init__(self, learning_rate: float, momentum: float, use_nesterov: bool = False) -> None:
        super().__init__(learning_rate)
        self._momentum = check_non_negative(self._api, "momentum", momentum, N_("the usual value is {0}.").format("0.9"))
        self._use_nesterov = check_flag(self._api, "use_nesterov", use_nesterov)

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("momentum",)

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr, mu = self._learning_rate, self._momentum
        a = [mu * ai + gi for ai, gi in zip(s["momentum"], g)]
        s["momentum"] = a
        if self._use_nesterov:
            return [wi - lr * (gi + mu * ai) for wi, gi, ai in zip(w, g, a)]
        return [wi - lr * ai for wi, ai in zip(w, a)]



class AdagradOptimizer(Optimizer):
    """Adagrad: a step size per entry that shrinks with the gradients seen (``tf.train.adagrad``).

    With learning rate lr, the slot ``acc`` (``"<var>/accumulator"``,
    starting at ``initial_accumulator_value``) and eps = 1e-7 (fixed, as in
    TF.js's ``AdagradOptimizer``)::

        acc <- acc + g^2
        w   <- w - lr * g / sqrt(acc + eps)

    Examples:
        >>> x = mt.variable(mt.tensor([1.0, 2.0]))
        >>> opt = mt.train.adagrad(0.1)
        >>> opt.minimize(lambda: (x * x).sum())     # acc = 0.1 + [4, 16]
        >>> [round(v, 6) for v in x.data_sync()]
        [0.901227, 1.900311]
    """

    class_name: ClassVar[OptimizerName] = "Adagrad"
    config_fields: ClassVar[tuple[str, ...]] = ("learning_rate", "initial_accumulator_value")

    def __init__(self, learning_rate: float, initial_accumulator_value: float = 0.1) -> None:
        super().__init__(learning_rate)
        self._initial_accumulator_value = check_non_negative(
            self._api, "initial_accumulator_value", initial_accumulator_value, N_("the usual value is {0}.").format("0.1")
        )

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("accumulator",)

    def _slot_initial(self, slot: str) -> float:
        return self._initial_accumulator_value

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr = self._learning_rate
        acc = [ai + gi * gi for ai, gi in zip(s["accumulator"], g)]
        s["accumulator"] = acc
        return [wi - lr * _div(gi, _sqrt(ai + EPSILON)) for wi, gi, ai in zip(w, g, acc)]



class AdadeltaOptimizer(Optimizer):
    """Adadelta (``tf.train.adadelta`` / ``AdadeltaOptimizer`` in TF.js).

    With learning rate lr, decay rho and the slots ``ag``
    (``"<var>/accum_grad"``) and ``au`` (``"<var>/accum_var"``), both
    starting at 0::

        u  <- g * sqrt(au + eps) / sqrt(ag + eps)      (ag from before this step)
        ag <- rho * ag + (1 - rho) * g^2
        au <- rho * au + (1 - rho) * u^2
        w  <- w - lr * u

    As in TF.js, ``u`` divides by the *previous* ``ag``; Keras and
    TensorFlow for Python use the updated one. So the first step is
    ``w - lr * g`` here.

    Examples:
        >>> x = mt.variable(mt.tensor([1.0, 2.0]))
        >>> opt = mt.train.adadelta(0.1, rho=0.95)
        >>> opt.minimize(lambda: (x * x).sum())     # u = g = [2, 4]
        >>> [round(v, 6) for v in x.data_sync()]
        [0.8, 1.6]
    """

    class_name: ClassVar[OptimizerName] = "Adadelta"
    config_fields: ClassVar[tuple[str, ...]] = ("learning_rate", "rho", "epsilon")

    def __init__(self, learning_rate: float = 0.001, rho: float = 0.95, epsilon: float | None = None) -> None:
        super().__init__(learning_rate)
        self._rho = check_unit(self._api, "rho", rho, "0.95", closed=True)
        self._epsilon = check_epsilon(self._api, epsilon)

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("accum_grad", "accum_var")

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr, rho, eps = self._learning_rate, self._rho, self._epsilon
        ag, au = s["accum_grad"], s["accum_var"]
        u = [gi * _div(_sqrt(aui + eps), _sqrt(agi + eps)) for gi, agi, aui in zip(g, ag, au)]
        s["accum_grad"] = [rho * agi + (1.0 - rho) * gi * gi for agi, gi in zip(ag, g)]
        s["accum_var"] = [rho * aui + (1.0 - rho) * ui * ui for aui, ui in zip(au, u)]
        return [wi - lr * ui for wi, ui in zip(w, u)]



class AdamOptimizer(Optimizer):
    """Adam (``tf.train.adam`` / ``AdamOptimizer`` in TF.js).

    With learning rate lr, decay rates b1 and b2, step number t (1, 2, ...)
    and the slots ``m`` (``"<var>/m"``) and ``v`` (``"<var>/v"``), both
    starting at 0::

        m <- b1 * m + (1 - b1) * g
        v <- b2 * v + (1 - b2) * g^2
        w <- w - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)

    Dividing by ``1 - b^t`` (the bias correction) undoes the pull of the
    zero start, so the first step moves each entry by about lr.

    Examples:
        >>> x = mt.variable(mt.tensor([2.0, 4.0]))
        >>> opt = mt.train.adam(0.1, beta1=0.8, beta2=0.9)
        >>> opt.minimize(lambda: (x * x).sum())
        >>> [round(v, 6) for v in x.data_sync()]     # each entry moved by lr
        [1.9, 3.9]
    """

    class_name: ClassVar[OptimizerName] = "Adam"
    config_fields: ClassVar[tuple[str, ...]] = ("learning_rate", "beta1", "beta2", "epsilon")

    def __init__(
        self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, epsilon: float | None = None
    ) -> None:
        super().__init__(learning_rate)
        self._beta1 = check_unit(self._api, "beta1", beta1, "0.9")
        self._beta2 = check_unit(self._api, "beta2", beta2, "0.999")
        self._epsilon = check_epsilon(self._api, epsilon)

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("m", "v")

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr, b1, b2, eps = self._learning_rate, self._beta1, self._beta2, self._epsilon
        m = [b1 * mi + (1.0 - b1) * gi for mi, gi in zip(s["m"], g)]
        v = [b2 * vi + (1.0 - b2) * gi * gi for vi, gi in zip(s["v"], g)]
        s["m"], s["v"] = m, v
        c1, c2 = 1.0 - b1**t, 1.0 - b2**t
        return [wi - lr * _div(mi / c1, _sqrt(vi / c2) + eps) for wi, mi, vi in zip(w, m, v)]



class AdamaxOptimizer(Optimizer):
    """Adamax, Adam with an infinity norm (``tf.train.adamax`` / ``AdamaxOptimizer`` in TF.js).

    With learning rate lr, decay rates b1 and b2, step number t (1, 2, ...),
    ``decay`` and the slots ``m`` (``"<var>/m"``) and ``u`` (named
    ``"<var>/v"`` as in TF.js), both starting at 0::

        lr_t = lr / (1 + decay * (t - 1))
        m <- b1 * m + (1 - b1) * g
        u <- max(b2 * u, |g|)
        w <- w - lr_t / (1 - b1^t) * m / (u + eps)

    TF.js has no ``getWeights``/``setWeights`` for Adamax; microtape does.

    Examples:
        >>> x = mt.variable(mt.tensor([2.0, 4.0]))
        >>> opt = mt.train.adamax(0.1, beta1=0.8, beta2=0.9, decay=0.1)
        >>> opt.minimize(lambda: (x * x).sum())
        >>> [round(v, 6) for v in x.data_sync()]
        [1.9, 3.9]
    """

    class_name: ClassVar[OptimizerName] = "Adamax"
    config_fields: ClassVar[tuple[str, ...]] = ("learning_rate", "beta1", "beta2", "epsilon", "decay")

    def __init__(
        self,
        learning_rate: float = 0.002,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float | None = None,
        decay: float = 0.0,
    ) -> None:
        super().__init__(learning_rate)
        self._beta1 = check_unit(self._api, "beta1", beta1, "0.9")
        self._beta2 = check_unit(self._api, "beta2", beta2, "0.999", closed=True)
        self._epsilon = check_epsilon(self._api, epsilon)
        self._decay = check_non_negative(self._api, "decay", decay, N_("leave it at 0.0, or try 1e-4 to slow down over time."))

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("m", "v")

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        b1, b2, eps = self._beta1, self._beta2, self._epsilon
        lr_t = self._learning_rate / (1.0 + self._decay * (t - 1))
        m = [b1 * mi + (1.0 - b1) * gi for mi, gi in zip(s["m"], g)]
        u = [nan_maximum(b2 * ui, abs(gi)) for ui, gi in zip(s["v"], g)]
        s["m"], s["v"] = m, u
        scale = lr_t / (1.0 - b1**t)
        return [wi - scale * _div(mi, ui + eps) for wi, mi, ui in zip(w, m, u)]



class RMSPropOptimizer(Optimizer):
    """RMSProp (``tf.train.rmsprop`` / ``RMSPropOptimizer`` in TF.js).

    With learning rate lr, ``decay`` d, ``momentum`` mu and the slots ``ms``
    (``"<var>/rms"``), ``mom`` (``"<var>/momentum"``) and, when
    ``centered``, ``mg`` (``"<var>/mg"``), all starting at 0::

        ms  <- d * ms + (1 - d) * g^2
        mg  <- d * mg + (1 - d) * g                          (centered only)
        mom <- mu * mom + lr * g / sqrt(ms + eps)            (plain)
        mom <- mu * mom + lr * g / sqrt(ms - mg^2 + eps)     (centered)
        w   <- w - mom

    Centered RMSProp divides by an estimate of the gradient's variance
    instead of its second moment. TF.js's code computes
    ``sqrt(ms - (mg^2 + eps))``, which its own tests describe as
    ``+ eps`` and which turns a gradient that is exactly 0 into NaN;
    microtape adds eps as TensorFlow for Python and Keras do.

    Examples:
        >>> x = mt.variable(mt.tensor([1.0, 2.0]))
        >>> opt = mt.train.rmsprop(0.1, decay=0.95, momentum=0.1)
        >>> opt.minimize(lambda: (x * x).sum())     # ms = 0.05 * [4, 16]
        >>> [round(v, 5) for v in x.data_sync()]
        [0.55279, 1.55279]
    """

    class_name: ClassVar[OptimizerName] = "RMSProp"
    config_fields: ClassVar[tuple[str, ...]] = ("learning_rate", "decay", "momentum", "epsilon", "centered")

    def __init__(
        self,
        learning_rate: float,
        decay: float = 0.9,
        momentum: float = 0.0,
        epsilon: float | None = None,
        centered: bool = False,
    ) -> None:
        super().__init__(learning_rate)
        self._decay = check_unit(self._api, "decay", decay, "0.9", closed=True)
        self._momentum = check_non_negative(self._api, "momentum", momentum, N_("leave it at 0.0, or try 0.9."))
        self._epsilon = check_epsilon(self._api, epsilon)
        self._centered = check_flag(self._api, "centered", centered)

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("rms", "momentum", "mg") if self._centered else ("rms", "momentum")

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr, d, mu, eps = self._learning_rate, self._decay, self._momentum, self._epsilon
        ms = [d * msi + (1.0 - d) * gi * gi for msi, gi in zip(s["rms"], g)]
        s["rms"] = ms
        if self._centered:
            mg = [d * mgi + (1.0 - d) * gi for mgi, gi in zip(s["mg"], g)]
            s["mg"] = mg
            denominators = [msi - mgi * mgi + eps for msi, mgi in zip(ms, mg)]
        else:
            denominators = [msi + eps for msi in ms]
        mom = [mu * mi + lr * _div(gi, _sqrt(di)) for mi, gi, di in zip(s["momentum"], g, denominators)]
        s["momentum"] = mom
        return [wi - mi for wi, mi in zip(w, mom)]



# ── factories: the names users type, as in tf.train.* ─────────────────────────


def sgd(learning_rate: float) -> SGDOptimizer:
    """Make a gradient-descent optimizer (``tf.train.sgd``): ``w <- w - lr * g``.

    Examples:
        >>> mt.train.sgd(0.1)
        SGDOptimizer(learning_rate=0.1, iterations=0)
    """
    return SGDOptimizer(learning_rate)


def momentum(learning_rate: float, momentum: float, use_nesterov: bool = False) -> MomentumOptimizer:
    """Make a momentum optimizer (``tf.train.momentum``); see :class:`MomentumOptimizer`.

    Examples:
        >>> mt.train.momentum(0.1, 0.9)
        MomentumOptimizer(learning_rate=0.1, momentum=0.9, use_nesterov=False, iterations=0)
    """
    return MomentumOptimizer(learning_rate, momentum, use_nesterov)


def adagrad(learning_rate: float, initial_accumulator_value: float = 0.1) -> AdagradOptimizer:
    """Make an Adagrad optimizer (``tf.train.adagrad``); see :class:`AdagradOptimizer`.

    Examples:
        >>> mt.train.adagrad(0.5)
        AdagradOptimizer(learning_rate=0.5, initial_accumulator_value=0.1, iterations=0)
    """
    return AdagradOptimizer(learning_rate, initial_accumulator_value)


def adadelta(learning_rate: float = 0.001, rho: float = 0.95, epsilon: float | None = None) -> AdadeltaOptimizer:
    """Make an Adadelta optimizer (``tf.train.adadelta``); see :class:`AdadeltaOptimizer`.

    Examples:
        >>> mt.train.adadelta()
        AdadeltaOptimizer(learning_rate=0.001, rho=0.95, epsilon=1e-07, iterations=0)
    """
    return AdadeltaOptimizer(learning_rate, rho, epsilon)


def adam(
    learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, epsilon: float | None = None
) -> AdamOptimizer:
    """Make an Adam optimizer (``tf.train.adam``); see :class:`AdamOptimizer`.

    Examples:
        >>> mt.train.adam()
        AdamOptimizer(learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-07, iterations=0)
        >>> try:
        ...     mt.train.adam(beta1=1.5)
        ... except mt.InvalidArgumentError as err:
        ...     print(err)
        AdamOptimizer: beta1=1.5 is out of range.
          beta1 is the weight of the past in a running average: a number in [0, 1).
          hint: the usual value is 0.9.
    """
    return AdamOptimizer(learning_rate, beta1, beta2, epsilon)


def adamax(
    learning_rate: float = 0.002,
    beta1: float = 0.9,
    beta2: float = 0.999,
    epsilon: float | None = None,
    decay: float = 0.0,
) -> AdamaxOptimizer:
    """Make an Adamax optimizer (``tf.train.adamax``); see :class:`AdamaxOptimizer`.

    Examples:
        >>> mt.train.adamax(decay=0.01)
        AdamaxOptimizer(learning_rate=0.002, beta1=0.9, beta2=0.999, epsilon=1e-07, decay=0.01, iterations=0)
    """
    return AdamaxOptimizer(learning_rate, beta1, beta2, epsilon, decay)


def rmsprop(
    learning_rate: float,
    decay: float = 0.9,
    momentum: float = 0.0,
    epsilon: float | None = None,
    centered: bool = False,
) -> RMSPropOptimizer:
    """Make an RMSProp optimizer (``tf.train.rmsprop``); see :class:`RMSPropOptimizer`.

    Examples:
        >>> mt.train.rmsprop(0.01, centered=True)
        RMSPropOptimizer(learning_rate=0.01, decay=0.9, momentum=0.0, epsilon=1e-07, centered=True, iterations=0)
    """
    return RMSPropOptimizer(learning_rate, decay, momentum, epsilon, centered)
