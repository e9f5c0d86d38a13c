"""
Variables (Функция tf.variable и обновление параметров)
=======================================================

In :chapter:`0` the parameter ``w`` was a plain tensor, and each gradient step
made a new one. A model's parameters are better kept in *variables*: named
tensors whose values can be replaced in place, and which gradient tapes
follow without being asked. The Russian section *Функция tf.variable и
обновление параметров* declares its parameters this way.

By the end of this chapter you will be able to create parameters with
:func:`microtape.variable`, update them with
:meth:`~microtape.Variable.assign`, choose which of them are trainable,
and explain why a gradient with respect to a plain tensor comes back as
``None`` unless a tape is told to :meth:`~microtape.GradientTape.watch` it.
"""

# %%
# Tensors never change
# --------------------
#
# Every op returns a *new* tensor, and the old one keeps its values.
# Each tensor has an ``id``, so we expect two different ids and an
# unchanged ``x``:
import random

import microtape as mt

x = mt.tensor([1.0, 2.0])
y = x + 1.0
print(x.id, y.id, x)

# %%
# A plain tensor has no method that could change it in place:
hasattr(x, "assign")

# %%
# Declaring parameters
# --------------------
#
# The text declares its two parameters in TF.js like this:
#
# .. code-block:: javascript
#
#    const w = tf.variable(tf.scalar(Math.random()));
#    const b = tf.variable(tf.scalar(0));
#
# The microtape version uses a seeded generator instead of ``Math.random()``,
# so the book prints the same numbers on every run. ``random.Random(0)``
# first returns 0.8444, which is the value we expect to see:
rng = random.Random(0)
weight = mt.variable(mt.scalar(rng.random()), name="weight")
bias = mt.variable(mt.scalar(0.0), name="bias")
print(weight)
print(bias)

# %%
# A :class:`~microtape.Variable` is a :class:`~microtape.Tensor` (every op
# accepts it), with a ``name`` and a ``trainable`` flag. Names are unique
# among the variables that are alive. A second ``"weight"`` is refused:
try:
    mt.variable(mt.scalar(1.0), name="weight")
except mt.VariableError as err:
    print(err)

# %%
# Updating in place
# -----------------
#
# :meth:`~microtape.Variable.assign` replaces the values. It returns the same
# object, so the ``id`` stays the same while the value changes:
before = weight.id
weight.assign(mt.scalar(1.5))
print(weight.id == before, weight)

# %%
# A variable keeps its shape. Assigning a vector to our scalar is a mistake,
# and it is refused *before* anything changes, so ``weight`` still holds 1.5
# afterwards:
try:
    weight.assign(mt.tensor([1.0, 2.0]))
except mt.ShapeError as err:
    print(err)
print(weight)

# %%
# One parameter update
# --------------------
#
# Now the "parameter update" of the section title: one gradient descent step
# on the loss of :chapter:`0`, :math:`L(w) = (3w - 6)^2`. A
# :class:`~microtape.GradientTape` records the ops run inside its ``with``
# block. Variables read there are *watched automatically*, so the tape can
# give the gradient with respect to ``weight``. At :math:`w = 1.5` we expect
# :math:`dL/dw = 18 \cdot 1.5 - 36 = -9`.
#
# ``GradientTape`` is an API of TensorFlow for Python, not of TF.js: TF.js
# has no tape object you can hold, and computes gradients with ``tf.grad``
# and ``tf.variableGrads`` instead (:chapter:`2`). microtape has both kinds;
# :chapter:`3` looks inside the tape.
with mt.GradientTape() as tape:
    loss = (weight * 3.0 - 6.0) ** 2
dw = tape.gradient(loss, weight)
dw

# %%
# The update :math:`w \leftarrow w - 0.05 \cdot dL/dw` is
# :meth:`~microtape.Variable.assign_sub`, so we expect
# :math:`1.5 + 0.45 = 1.95`:
assert dw is not None  # the tape saw weight, so there is a gradient
weight.assign_sub(dw * 0.05)
weight

# %%
# On the curve of the loss, the gradient is the slope of the tangent at the
# old ``w``, and the update moves ``w`` downhill, against the slope:
w_old, w_new, slope = weight.item() + 0.05 * dw.item(), weight.item(), dw.item()


def loss_at(v: float) -> float:
    return (3 * v - 6) ** 2


# %%
import matplotlib.pyplot as plt

from microtape.book.figures import figure_words

words = figure_words()
grid = [0.75 + i / 50 for i in range(101)]
fig, ax = plt.subplots(figsize=(6.4, 3.4))
ax.plot(grid, [loss_at(v) for v in grid], label="L(w) = (3w − 6)²")
ax.plot([w_old - 0.4, w_old + 0.4], [loss_at(w_old) - 0.4 * slope, loss_at(w_old) + 0.4 * slope], "--",
        label=words["ch1_tangent"].format(w=w_old, slope=slope))
ax.annotate("", xy=(w_new, loss_at(w_new)), xytext=(w_old, loss_at(w_old)),
            arrowprops={"arrowstyle": "->", "color": "C3", "lw": 2})
ax.plot([w_old, w_new], [loss_at(w_old), loss_at(w_new)], "o", color="C3", label=words["ch1_step"].format(w=w_new))
ax.set_xlabel("w")
ax.set_ylabel(words["loss"])
ax.set_title(words["ch1_title"])
ax.set_ylim(-1, 20)
ax.legend()
fig.tight_layout()

# %%
# .. note:: TF.js variables have only ``assign``; ``assign_add`` and
#    ``assign_sub`` come from TensorFlow for Python. ``w.assign(w - dw * 0.05)``
#    works the same way, and it is what the text writes.
#
# Trainable or not
# ----------------
#
# Some state belongs to a model but is not learned: a fixed scale, a running
# mean, a step counter. Create such variables with ``trainable=False``.
# A tape does not watch them, so they get no gradient, while ``weight`` does:
scale = mt.variable(mt.scalar(3.0), trainable=False, name="scale")
with mt.GradientTape() as tape:
    loss = (weight * scale - 6.0) ** 2
print(weight.trainable, scale.trainable)
tape.gradient(loss, [weight, scale])

# %%
# ``None`` means the tape has no path from ``scale`` to the loss, because it
# never recorded one. :chapter:`Chapter 2 <2>`'s ``variable_grads`` and the optimizers of
# :chapter:`6` use the same rule: only trainable variables are updated.
#
# Why constants need ``watch``
# ----------------------------
#
# Plain tensors are treated as constants. A tape records an op only if one of
# its inputs is being watched, so for a plain tensor ``c`` we get ``None``:
c = mt.scalar(2.0)
with mt.GradientTape() as tape:
    y = c * c
print(tape.gradient(y, c))

# %%
# To differentiate with respect to a plain tensor, say so with
# :meth:`~microtape.GradientTape.watch` *before* using it. Now the tape
# records ``c * c``, and we expect :math:`d(c^2)/dc = 2c = 4`:
with mt.GradientTape() as tape:
    tape.watch(c)
    y = c * c
tape.gradient(y, c)

# %%
# This is also why :chapter:`0` needed no ``watch``: ``mt.grad(f)(x)`` watches
# ``x`` for us. In TensorFlow.js the text's point is the same: declaring
# parameters with ``tf.variable`` is what lets the gradient functions find them.
#
# What we built
# -------------
#
# Parameters are variables: named, assignable, and watched by tapes when
# they are trainable. One step of learning is "gradient from a tape, then
# ``assign_sub``". Plain tensors are constants unless watched.
#
# Next: :chapter:`2` computes gradients for all of a model's variables in one call.
