"""
Gradient debugging (Отладка градиентов)
=======================================

Training a model means nudging its parameters so that a loss goes down, and
the gradient of the loss says which way to nudge. The Russian text opens
with this in its first section, *Отладка градиентов*:
:term:`automatic differentiation` computes those gradients, and optimizers
such as :term:`stochastic gradient descent` (SGD) use them.

By the end of this chapter you will have computed a first gradient with
:func:`microtape.grad`, checked it three ways by hand (with a formula, with
finite differences and with the chain rule), and used it to take gradient
descent steps that walk a parameter to the bottom of a loss.
"""

# %%
# A loss with one parameter
# -------------------------
#
# We start as small as possible: one parameter ``w`` and the loss
# :math:`L(w) = (3w - 6)^2`. It is smallest (zero) at :math:`w = 2`. At
# :math:`w = 0.5` we expect :math:`(1.5 - 6)^2 = 20.25`.
import microtape as mt


def loss_fn(w: mt.Tensor) -> mt.Tensor:
    return (w * 3.0 - 6.0) ** 2


w = mt.scalar(0.5)
loss_fn(w)

# %%
# The value is right, and it is a :class:`~microtape.Tensor` of shape ``()``:
# a scalar. Tensors print 4 significant digits and their shape.
#
# What we want to know is how the loss changes when ``w`` changes a
# little: the derivative :math:`dL/dw`. Calculus gives it by hand,
# :math:`dL/dw = 2(3w - 6) \cdot 3 = 18w - 36`, so at :math:`w = 0.5` we
# expect :math:`-27`.
18 * 0.5 - 36

# %%
# A first gradient
# ----------------
#
# :func:`microtape.grad` turns a function into a function that returns its
# gradient (TF.js calls it ``tf.grad``). We never write the derivative
# ourselves:
dloss_dw = mt.grad(loss_fn)
dloss_dw(w)

# %%
# :math:`-27`, as calculus said. The sign is negative: increasing ``w``
# decreases the loss. The size says how steep the loss is here.
#
# A second check needs no calculus at all: move ``w`` a tiny step ``h`` to
# each side and measure the slope with plain Python floats. This is a
# *central finite difference*. It should agree with the gradient to many digits.
h = 1e-6
w0 = 0.5
slope = ((3 * (w0 + h) - 6) ** 2 - (3 * (w0 - h) - 6) ** 2) / (2 * h)
print(f"finite difference: {slope:.6f}")

# %%
# Both checks agree. Gradient debugging is mostly this: a gradient you
# trust compared with a number you can compute another way. :chapter:`Chapter 4 <4>` turns
# the finite-difference check into a tool.
#
# What automatic differentiation computes
# ---------------------------------------
#
# ``mt.grad`` uses neither the formula we wrote nor finite differences. It
# runs the function, records each operation (``mul``, ``sub``, ``pow``),
# and then applies the :term:`chain rule` to those operations in reverse order,
# from the loss back to ``w``. Here is that backward pass done by hand,
# with the local derivative of each step:
u = 3 * w0  # u = 3w          du/dw = 3
v = u - 6  # v = u - 6       dv/du = 1
loss_value = v**2  # L = v²     dL/dv = 2v
dL_dv = 2 * v
dL_du = dL_dv * 1
dL_dw = dL_du * 3
print(f"L = {loss_value}, dL/dv = {dL_dv}, dL/du = {dL_du}, dL/dw = {dL_dw}")

# %%
# The last number is the gradient again. This is *reverse-mode* automatic
# differentiation: it is exact (no step size ``h``), and one backward pass
# costs a small constant multiple of running the function (a few times its
# cost, plus the memory the tape keeps), however many parameters there are.
#
# Many parameters at once
# -----------------------
#
# Real models have thousands of parameters. Finite differences need two
# evaluations of the loss *per parameter*. One backward pass gives every
# entry of the gradient at once. For :math:`f(x) = \sum_i x_i^2` the gradient
# is :math:`2x`, so for ``x = [1, -2, 3, 0.5]`` we expect ``[2, -4, 6, 1]``:
x = mt.tensor([1.0, -2.0, 3.0, 0.5])
mt.grad(lambda t: (t * t).sum())(x)

# %%
# The gradient has the shape of ``x``: one partial derivative per entry.
#
# Why SGD needs the gradient
# --------------------------
#
# Gradient descent repeats one update: :math:`w \leftarrow w - \eta \, dL/dw`,
# with a *learning rate* :math:`\eta`. The gradient points uphill, so the step
# goes against it. For our loss, :math:`\eta = 0.02` should take ``w`` from
# 0.5 towards 2, a little closer with every step:
learning_rate = 0.02
path = [0.5]
for step in range(8):
    current = mt.scalar(path[-1])
    loss_now = loss_fn(current).item()
    g = dloss_dw(current).item()
    print(f"step {step}: w = {path[-1]:.4f}  L = {loss_now:<8.4g}  dL/dw = {g:.4g}")
    path.append(path[-1] - learning_rate * g)

# %%
# Each step multiplies the distance to 2 by :math:`1 - 18\eta = 0.64`, and the
# gradient shrinks with it, so the steps get shorter as the slope flattens.
# The picture shows the same path on the loss curve.
import matplotlib.pyplot as plt

from microtape.book.figures import figure_words

words = figure_words()
grid = [i / 20 for i in range(-10, 71)]
fig, ax = plt.subplots(figsize=(6.4, 3.4))
ax.plot(grid, [(3 * v - 6) ** 2 for v in grid], color="0.6", label="L(w)")
ax.plot(path, [(3 * v - 6) ** 2 for v in path], "o-", color="tab:red", label="SGD, η = 0.02")
ax.set(xlabel="w", ylabel=words["loss"], title=words["ch0_title"])
ax.legend()
fig.tight_layout()

# %%
# .. note:: In TensorFlow.js the same first gradient reads
#    ``tf.grad(w => w.mul(3).sub(6).square())(tf.scalar(0.5))``. microtape
#    keeps TF.js's names in ``snake_case``, and tensors also support Python's
#    operators (``*``, ``-``, ``**``).
#
# What we built
# -------------
#
# A gradient is the slope of the loss with respect to each parameter.
# ``mt.grad`` computes it exactly, by running the function and applying the
# chain rule backwards over what ran. We checked it against a formula and
# against finite differences, and then let gradient descent use it.
#
# The engine behind ``mt.grad`` is small enough to read in a sitting:
# :doc:`How the engine works <../engine>` follows one product from Python's
# ``*`` to its gradient, through the real code.
#
# Next: :chapter:`1` makes ``w`` a *variable*, a tensor that can be updated in place.
