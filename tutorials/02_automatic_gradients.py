"""
Automatic gradients (Автоматическое вычисление градиентов)
==========================================================

The Russian section *Автоматическое вычисление градиентов* fits a line to
four points with TF.js's ``tf.variableGrads`` inside ``tf.tidy``. This chapter
runs the same model in microtape and compares the gradient functions along
the way: :func:`~microtape.grad`, :func:`~microtape.grads`,
:func:`~microtape.value_and_grads` and :func:`~microtape.variable_grads`.

By the end of this chapter you will have the text's gradients (and checked
them by hand), you will know why its ``grads[w]`` would fail in JavaScript
but works here, you will have used :func:`~microtape.memory` to see what
:func:`~microtape.tidy` cleans up, and you will have trained the line.
"""

# %%
# The model
# ---------
#
# Four points that lie exactly on the line :math:`y = 2x - 1`, and a model
# :math:`\hat y = x w + b` with the mean squared error as its loss. The text
# writes the loss in TF.js as follows:
#
# .. code-block:: javascript
#
#    const f = (w, b) => tf.tidy(() => {
#      const x = tf.tensor1d([1, 2, 3, 4]);
#      const y = tf.tensor1d([1, 3, 5, 7]);
#      const yPred = x.mul(w).add(b);
#      return yPred.sub(y).square().mean();
#    });
#
# The microtape version is the same, with the TF.js method names in
# ``snake_case``:
import microtape as mt


def loss_fn(w: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
    def body() -> mt.Tensor:
        x = mt.tensor1d([1, 2, 3, 4])
        y = mt.tensor1d([1, 3, 5, 7])
        y_pred = x.mul(w).add(b)
        return y_pred.sub(y).square().mean()

    return mt.tidy(body)


# %%
# The text starts ``w`` at a random number. We start it at 0.5 and ``b`` at 0,
# so that every number below can be checked by hand. The residuals
# :math:`\hat y - y` are then :math:`[-0.5, -2, -3.5, -5]`, and the loss is
# their mean square, :math:`41.5 / 4 = 10.375`:
w = mt.variable(mt.scalar(0.5), name="w")
b = mt.variable(mt.scalar(0.0), name="b")
loss_fn(w, b)

# %%
# The printed value is rounded to 4 significant digits; ``item()`` gives the
# full Python float:
loss_fn(w, b).item()

# %%
# The gradients by hand
# ---------------------
#
# For :math:`L = \frac1n \sum_i (x_i w + b - y_i)^2` the chain rule gives
# :math:`\partial L/\partial w = \frac2n \sum_i r_i x_i` and
# :math:`\partial L/\partial b = \frac2n \sum_i r_i`, with residuals
# :math:`r_i`. In plain Python:
xs, ys = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 5.0, 7.0]
residuals = [xi * 0.5 + 0.0 - yi for xi, yi in zip(xs, ys)]
dw_by_hand = 2 / 4 * sum(r * xi for r, xi in zip(residuals, xs))
db_by_hand = 2 / 4 * sum(residuals)
print(residuals, dw_by_hand, db_by_hand)

# %%
# So we expect :math:`-17.5` for ``w`` and :math:`-5.5` for ``b``. Both are
# negative: raising ``w`` or ``b`` brings the line up towards the points.
#
# ``grad`` and ``grads``
# ----------------------
#
# :func:`~microtape.grad` differentiates a function of one tensor. To get
# :math:`\partial L/\partial w` we hold ``b`` fixed:
mt.grad(lambda w_: loss_fn(w_, b))(w)

# %%
# :func:`~microtape.grads` (TF.js: ``tf.grads``) takes a list of inputs,
# calls ``f(*inputs)`` and returns one gradient per input, in order:
mt.grads(loss_fn)([w, b])

# %%
# A gradient needs an unbroken chain of microtape ops from the input to the
# output. Converting to a Python number breaks the chain: ``mt.scalar(w_.item())``
# is a new constant that knows nothing about ``w_``. ``grad`` checks this before
# any backward work and says so, starting with TF.js's own sentence:
try:
    mt.grad(lambda w_: loss_fn(mt.scalar(w_.item()), b))(w)
except mt.GradientError as err:
    print(err)

# %%
# :func:`~microtape.value_and_grads` returns the loss as well, so one call
# gives what a training loop needs. TF.js returns an object ``{value, grads}``,
# and microtape returns a tuple:
value, (dw, db) = mt.value_and_grads(loss_fn)([w, b])
print(value, dw, db)

# %%
# ``variable_grads``: every variable at once
# ------------------------------------------
#
# The functions above need the inputs listed. :func:`~microtape.variable_grads`
# (``tf.variableGrads``) instead takes a function of *no* arguments, runs it,
# and differentiates with respect to every trainable variable it read. The
# text then prints the results:
#
# .. code-block:: javascript
#
#    const {value, grads} = tf.variableGrads(() => f(w, b));
#    console.log(value.dataSync());
#    console.log(grads[w].dataSync());
#    console.log(grads[b].dataSync());
#
# In microtape, ``data_sync()`` returns a Python list:
value, grads = mt.variable_grads(lambda: loss_fn(w, b))
print(value.data_sync())
print(grads[w].data_sync())
print(grads[b].data_sync())

# %%
# Those are the values we computed by hand.
#
# ``grads[w]`` or ``grads["w"]``?
# -------------------------------
#
# In TF.js, ``variableGrads`` returns a plain object whose keys are the
# variables' *names*. ``grads[w]`` converts the tensor ``w`` to a string
# to use as a key, and no key has that text, so the text's
# ``grads[w].dataSync()`` would fail with a ``TypeError`` on ``undefined``.
# The JavaScript that works is ``grads[w.name]``.
#
# microtape keys the gradients by name too, and it also accepts the
# variable itself, so both of the text's spellings work. Iterating gives the names:
print(list(grads))
print(grads["w"], grads[w])

# %%
# The key is the variable's ``name``, not the Python name of the object that
# holds it. A name that is not there raises a ``KeyError`` (a
# :class:`~microtape.MicrotapeError`) that lists the names that are:
try:
    grads["weight"]
except KeyError as err:
    print(err)

# %%
# What ``tidy`` cleans up
# -----------------------
#
# Every op makes a tensor, and, as in TF.js, a tensor stays in memory until it
# is disposed. :func:`~microtape.memory` counts the live tensors. The text
# wraps its loss in ``tidy`` for this reason. Let us compare the same loss
# written without ``tidy``:
#
# .. note:: The text calls ``tf.tidy`` with ``tf.variableGrads`` "a more
#    flexible tool" for gradients. To be precise, ``tidy`` has nothing to do
#    with gradients: it manages memory, disposing what the function made and
#    did not return. ``variable_grads`` computes the very same gradients with
#    or without it; ``tidy`` only decides which tensors are still alive
#    afterwards.


def loss_without_tidy(w: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
    x = mt.tensor1d([1, 2, 3, 4])
    y = mt.tensor1d([1, 3, 5, 7])
    return x.mul(w).add(b).sub(y).square().mean()


before = mt.memory().num_tensors
kept = loss_without_tidy(w, b)
print("without tidy:", mt.memory().num_tensors - before, "new tensors")
before = mt.memory().num_tensors
kept = loss_fn(w, b)
print("with tidy:   ", mt.memory().num_tensors - before, "new tensor")

# %%
# Without ``tidy``, the data and every intermediate result stay alive. With
# ``tidy`` only the returned loss survives. ``variable_grads`` cleans up after
# itself in the same way, so a call should leave exactly three new tensors:
# the value and the two gradients.
info_before = mt.memory()
value, grads = mt.variable_grads(lambda: loss_fn(w, b))
info_after = mt.memory()
print(info_before)
print(info_after)
print("new:", info_after.num_tensors - info_before.num_tensors)

# %%
# Training the line
# -----------------
#
# The text's closing point is that ``variable_grads`` returns gradients we can
# apply directly. One gradient descent step is ``w ← w - η·dw``, for every
# variable. We wrap each step in ``tidy`` so that the value and the gradients
# of the step are disposed too, and then the tensor count should stay flat
# over 300 steps. The data lie on :math:`y = 2x - 1`, so we expect ``w``
# near 2 and ``b`` near -1.
learning_rate = 0.1


def train_step() -> float:
    value, grads = mt.variable_grads(lambda: loss_fn(w, b))
    for v in (w, b):
        v.assign_sub(grads[v] * learning_rate)
    return value.item()


start = mt.memory().num_tensors
losses = [mt.tidy(train_step) for _ in range(300)]
print(f"loss {losses[0]:.4f} -> {losses[-1]:.2e}; w = {w.item():.4f}, b = {b.item():.4f}")
print("tensors left behind by 300 steps:", mt.memory().num_tensors - start)

# %%
# The line is found, and nothing leaked. On a log scale, the loss falls along
# a straight line: each step multiplies it by about the same factor.
import matplotlib.pyplot as plt

from microtape.book.figures import figure_words

words = figure_words()
fig, ax = plt.subplots(figsize=(6.4, 3.2))
ax.semilogy(losses, color="tab:blue")
ax.set(xlabel=words["step"], ylabel=words["loss_log"], title=words["ch2_title"])
fig.tight_layout()

# %%
# What we built
# -------------
#
# ``grad`` and ``grads`` differentiate functions of tensors we pass in, and
# ``value_and_grads`` returns the loss too. ``variable_grads`` finds every
# trainable variable a loss reads, and its result is keyed by variable
# name, which is why the text's ``grads[w]`` needs ``grads[w.name]`` in
# JavaScript. Wrapping work in ``tidy`` keeps ``memory()`` flat.
#
# Next: :chapter:`3` opens the tape that all of these functions use inside.
