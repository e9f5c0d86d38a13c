"""
Checking gradients (Проверка градиентов)
========================================

A wrong gradient rarely crashes anything. The loss still prints, the
weights still move, and training is just slow, unstable or stuck. This
chapter follows the checks that the Russian section *Проверка градиентов*
lists, from the cheapest to the most thorough. We read sign and scale by eye,
print gradients with :func:`microtape.print`, compare them with finite
differences (first by hand, then with :func:`microtape.numerical_grad` and
:func:`microtape.check_grads`), and set tripwires for NaN and Inf with
:func:`microtape.check_numerics` and :func:`microtape.detect_anomaly`.

By the end you will have caught a wrong hand-written gradient hidden inside
a small model, and the checker will have named the op and the line of code
that are to blame.
"""

# %%
# Sign and scale
# --------------
#
# Here is the linear model from :chapter:`2` again. The data lie on the line
# y = 2x − 1, and we start far from it, at w = 0.5 and b = 0. Before running
# anything, work out what the gradients should look like. Every prediction
# 0.5·x is below its target, so raising w or b lowers the loss, and both
# gradients must be **negative**. By hand, the residuals are
# r = wx + b − y = [−0.5, −2, −3.5, −5], so ∂L/∂w = mean(2·r·x) = −17.5
# and ∂L/∂b = mean(2·r) = −5.5.
import math
import re
from collections.abc import Callable

import microtape as mt

x = mt.tensor1d([1, 2, 3, 4])
y = mt.tensor1d([1, 3, 5, 7])
w = mt.variable(mt.scalar(0.5), name="ch04_w")
b = mt.variable(mt.scalar(0.0), name="ch04_b")


def loss() -> mt.Tensor:
    return ((x * w + b - y) ** 2).mean()


value, grads = mt.variable_grads(loss)
print(f"loss {value.item()}  dL/dw {grads[w].item()}  dL/db {grads[b].item()}")

# %%
# Both numbers match the hand calculation. The sign of ``dL/db`` is worth a
# second look. The best intercept is −1, yet the gradient says to *raise* b.
# That is not a bug. A gradient only describes the neighbourhood of the
# current point: while w is this small, every prediction is too low, and a
# larger b helps for now.
#
# Scale matters as much as sign. ``|dL/dw| = 17.5`` is 35 times the weight
# itself, so a learning rate of 0.1 would move w by 1.75 in one step.
# A ratio like this, update size over weight size, is the first number to
# look at when training diverges.
lr = 0.1
print(f"step / weight = {lr * abs(grads[w].item()) / abs(w.item()):.1f}")

# %%
# Printing gradients every step
# -----------------------------
#
# For small tensors, the section suggests ``tf.print(grads[w])`` at every
# step. :func:`microtape.print` uses the same layout, a ``Tensor`` header
# with the values below it. We take three plain gradient steps with a learning
# rate of 0.02 and expect both gradients to shrink towards zero.
for step in range(3):
    value, grads = mt.variable_grads(lambda: mt.tidy(loss))
    print(f"step {step}: loss {value.item():.3f}")
    mt.print(grads[w])
    mt.print(grads[b])
    w.assign_sub(grads[w] * 0.02)
    b.assign_sub(grads[b] * 0.02)

# %%
# The loss falls and ``dL/dw`` shrinks, so the gradients look healthy. If one
# had stayed put, flipped sign at every step, or grown, that would have been
# the moment to stop and check it properly.
#
# .. note:: In TF.js, ``tf.print(t, true)`` also prints the dtype, rank and
#    shape. ``mt.print(t, verbose=True)`` does the same:
mt.print(grads[w], verbose=True)

# %%
# f(x) = x² must give 2x
# -----------------------
#
# The simplest check uses a function whose derivative we already know. We
# try a negative point, zero and a positive point, because a sign error in a
# backward pass hides easily when every test input is positive.
#
# The Russian section calls this item «проверка конечной производной», a
# check of the *finite* derivative. The name is misleading: nothing finite
# (no step h) is involved. It is an *analytic* check, the gradient against a
# formula worked out on paper. Finite differences are the section's other
# item, the comparison with a numerical gradient, and they come next.
square_grad = mt.grad(lambda t: t * t)
square_grad(mt.tensor1d([-3.0, 0.0, 1.5]))

# %%
# The result is 2x: −6, 0 and 3.
#
# Finite differences by hand
# --------------------------
#
# When no formula is at hand, we use the definition of the derivative
# instead. The *forward* difference (f(x+h) − f(x)) / h is off by about h.
# The *central* difference (f(x+h) − f(x−h)) / 2h is off by about h², and
# for x² it is exact apart from rounding. Rounding is the catch: as h
# shrinks, f(x+h) and f(x−h) agree in more and more digits, and the
# subtraction throws those digits away. We expect the forward error to track
# h, and the central error to *grow* as h gets tiny.


def f_square(v: float) -> float:
    return v * v


x0 = 1.5
print(f"{'h':>8} {'forward err':>12} {'central err':>12}")
for h in (1e-1, 1e-3, 1e-5, 1e-8, 1e-11):
    forward = (f_square(x0 + h) - f_square(x0)) / h
    central = (f_square(x0 + h) - f_square(x0 - h)) / (2 * h)
    forward_err, central_err = abs(forward - 2 * x0), abs(central - 2 * x0)
    print(f"{h:8.0e} {forward_err:12.2e} {central_err:12.2e}")

# %%
# With many more steps, on log-log axes, each effect is a straight line. On
# the right, the *truncation* error of the formula falls as h shrinks, like h
# for the forward difference and like h² for the central one. On the left,
# the *rounding* error grows like ε/h, where ε ≈ 2.2e-16 is the spacing of
# float64 numbers near 1. The best h is where the two lines cross. We use
# f = exp at x = 1 here, because for x² the central difference has no
# truncation error at all:
steps = [10.0 ** (-k / 4) for k in range(2, 62)]
slope = math.exp(1.0)
forward_errors = [abs((math.exp(1 + h) - math.exp(1)) / h - slope) for h in steps]
central_errors = [abs((math.exp(1 + h) - math.exp(1 - h)) / (2 * h) - slope) for h in steps]
best_forward = steps[forward_errors.index(min(forward_errors))]
best_central = steps[central_errors.index(min(central_errors))]
print(f"best h: forward {best_forward:.0e}, central {best_central:.0e}")

# %%
import matplotlib.pyplot as plt

from microtape.book.figures import figure_words

words = figure_words()
fig, ax = plt.subplots(figsize=(6.4, 4.2))
ax.loglog(steps, forward_errors, ".-", label=words["ch4_forward"])
ax.loglog(steps, central_errors, ".-", label=words["ch4_central"])
for best, color in ((best_forward, "C0"), (best_central, "C1")):
    ax.axvline(best, color=color, linestyle=":")
ax.annotate(words["ch4_rounding"], xy=(1e-12, 1e-10), ha="center")
ax.annotate(words["ch4_truncation"], xy=(1e-2, 1e-11), ha="center")
ax.set_xlabel(words["ch4_xlabel"])
ax.set_ylabel(words["ch4_ylabel"])
ax.set_title(words["ch4_title"])
ax.set_ylim(1e-13, 1e1)
ax.legend(loc="upper center")
fig.tight_layout()

# %%
# The table shows both effects. In float64, h = 1e-6 is a good
# middle ground for central differences, and it is microtape's default.
# TF.js computes in float32, which keeps only about 7 digits, so there the
# step has to be much larger, around 1e-3.
#
# :func:`microtape.numerical_grad` runs this loop for every entry of every
# input. It calls ``f(*inputs)``, and if ``f`` returns a tensor rather than a
# scalar, it differentiates ``sum(f)`` as ``grad`` does. We compare it with
# the analytic gradient of the loss with respect to ``w`` and ``b`` (passed
# here as plain tensors):


def line_loss(wt: mt.Tensor, bt: mt.Tensor) -> mt.Tensor:
    return ((x * wt + bt - y) ** 2).mean()


w0, b0 = mt.scalar(0.5), mt.scalar(0.0)
numeric = mt.numerical_grad(line_loss, [w0, b0])
analytic = mt.grads(line_loss)([w0, b0])
for name, n, a in zip(("w", "b"), numeric, analytic):
    print(f"{name}: numeric {n.item():.8f}  analytic {a.item():.8f}")

# %%
# Both give −17.5 and −5.5 to eight decimals.
#
# ``check_grads``: the whole comparison in one call
# -------------------------------------------------
#
# :func:`microtape.check_grads` compares every analytic entry with its central
# difference. An entry fails when ``abs err > atol + rtol * |numeric|``, and
# the worst rows are listed first. We expect it to pass, with errors around
# 1e-10:
print(mt.check_grads(line_loss, [w0, b0]))

# %%
# The full check calls ``f`` twice per input entry. On a 6×5 matrix that is
# 61 calls. ``mode="fast"`` checks a single random *directional* derivative
# instead, vᵀ·J·u, for the price of three calls and one backward
# pass. If that one number disagrees, the checker falls back to the full
# table, so you still learn which entries are wrong. The test matrix comes
# from ``mt.random_normal(shape, seed=...)``, which draws normal samples from
# its own seeded generator, so the page shows the same numbers on every build.
big = mt.random_normal((6, 5), seed=4)


def smooth(t: mt.Tensor) -> mt.Tensor:
    return mt.tanh(t @ t.T).sum()


full = mt.check_grads(smooth, [big])
fast = mt.check_grads(smooth, [big], mode="fast", seed=0)
print(f"full: ok={full.ok}, {full.evaluations} calls of f")
print(f"fast: ok={fast.ok}, {fast.evaluations} calls of f")

# %%
# ``order=2`` also checks the gradient of the gradient, which you need
# before you trust a Hessian or a gradient penalty. Rows marked ``(order 2)``
# compare entries of the second derivative:
pair = mt.tensor1d([-1.0, 0.5])
print(mt.check_grads(lambda t: mt.tanh(t).sum(), [pair], order=2))

# %%
# The ``out`` column says which output entry a row differentiates. In a
# first-order row it is an entry of ``f``'s result, ``()`` for a scalar loss.
# In an ``(order 2)`` row the "output" is the gradient g = ∂f/∂t itself, so
# the row with index 0 and out 1 compares ∂g[1]/∂t[0]. For a sum of tanh
# that is 0 off the diagonal (each g[i] depends on t[i] alone), and
# −2·tanh(t)·(1 − tanh²(t)) on it: 0.6397 at t = −1 and −0.7269 at t = 0.5.

# %%
# Kinks
# -----
#
# At 0, ``relu`` has a left slope of 0 and a right slope of 1, so no
# single derivative exists. microtape's backward pass uses 0 there, which is
# a valid *subgradient*, while the central difference returns the average,
# 0.5. Instead of failing that entry, the checker reports it as a ``kink``:
around_zero = mt.tensor1d([-1.0, 0.0, 2.0])
relu_report = mt.check_grads(lambda t: mt.relu(t).sum(), [around_zero])
print(relu_report)
for kink in relu_report.kinks:
    print(f"kink at index {kink.index}: analytic {kink.analytic:.4g}, numeric {kink.numeric:.4g}; {kink.why}")

# %%
# ``abs`` has a kink at 0 too. There the average of its slopes,
# (−1 + 1) / 2 = 0, happens to equal the subgradient microtape picks, so the
# entry agrees with the central difference, and the checker still lists it
# under ``kinks`` because the one-sided slopes disagree. Treat a kink as
# information, not as an error. If most of your entries sit on kinks (say,
# many pre-activations exactly at 0), the gradients will be unusually
# sensitive to tiny changes in the input.
abs_report = mt.check_grads(lambda t: mt.abs(t).sum(), [around_zero])
abs_report.ok, [row.index for row in abs_report.kinks]

# %%
# When finite differences cannot tell
# -----------------------------------
#
# A point *near* a kink is harder than a point on it. At x = 1e-7 the
# step of 1e-6 reaches across relu's kink, and the central difference mixes
# the two slopes. We expect about 0.55 for the first entry, where the true
# slope is 1:
near_kink = mt.tensor1d([1e-7, -1e-7, 2.0])
mt.numerical_grad(lambda t: mt.relu(t).sum(), [near_kink])[0]

# %%
# Before the checker fails an entry, it asks whether the finite difference
# can be trusted there. Where the two one-sided slopes disagree, it shrinks
# the step until they agree, and the row says which step it used. Here the
# check passes, and relu, whose VJP is right, is not blamed:
near_report = mt.check_grads(lambda t: mt.relu(t).sum(), [near_kink])
print(near_report.verdict, [row.status for row in near_report.rows])
print(near_report.rows[0].why)

# %%
# Rounding is the other trap. Add the constant 1e9 to a loss, and f(x ± h)
# become numbers near 1e9, each rounded by up to about 1e9 · 1.1e-16 ≈ 1e-7.
# Divided by 2h = 2e-6, that rounding is worth about 0.05 in the slope, far
# more than the tolerance. The checker does not call such an entry wrong.
# It says **inconclusive**, gives the reason, and suggests what to try:
def offset_loss(t: mt.Tensor) -> mt.Tensor:
    return (t * t).sum() + 1e9


print(mt.check_grads(offset_loss, [pair]))

# %%
# An inconclusive check is not a pass: ``report.ok`` is false, and
# ``raise_if_failed`` raises, because nothing was shown to be right. But
# nothing was shown to be wrong either, so no op is blamed. The suggested
# step settles it:
mt.check_grads(offset_loss, [pair], eps=0.05).verdict

# %%
# A wrong gradient inside a model
# -------------------------------
#
# Hand-written gradients are where bugs hide. :func:`microtape.custom_grad`
# lets ``f`` return its value *and* a function ``grad_fn(dy)`` that gives the
# gradient of each input (``tf.customGrad`` in TF.js). Here is a centering
# step, as in layer normalization: subtract each row's mean. Its author
# treated the mean as a constant and passed ``dy`` straight through. But the
# mean depends on every entry of the row, so the right answer is
# dy − mean(dy), row by row.


GradFn = Callable[[mt.Tensor], mt.Tensor]


def center(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    value = t - t.mean(axis=-1, keepdims=True)
    return value, lambda dy: dy  # BUG: forgets that the mean moves with t


center_op = mt.custom_grad(center)


def model(inputs: mt.Tensor, w1: mt.Tensor, w2: mt.Tensor) -> mt.Tensor:
    hidden = center_op(inputs @ w1)
    out = mt.tanh(hidden) @ w2
    return (out * out).mean()


inputs = mt.random_normal((4, 3), seed=1)
w1 = mt.random_normal((3, 2), seed=2)
w2 = mt.random_normal((2, 1), seed=3)
print("loss", model(inputs, w1, w2).item())
mt.grads(model)([inputs, w1, w2])[1]

# %%
# The loss is finite, and the gradient of ``w1`` has a reasonable sign and
# scale, so eyeballing catches nothing. Now we run the checker. The file
# paths in its report are absolute, so a small helper trims them to the file
# name to keep this page the same on every machine.


def short(text: object) -> str:
    return re.sub(r"[^\s(]*[/\\](?=[\w.-]+\.py\b)", "", str(text))


report = mt.check_grads(model, [inputs, w1, w2])
print(short(report))

# %%
# The report fails, and its last lines give the **culprit**. After a failure,
# the checker re-runs ``f``, checks the VJP of every op at the inputs that op
# actually saw, and names the one that makes the worst entry wrong, together
# with the line that called it (the ``hidden = center_op(...)`` line above).
# The failing rows carry the same clue. Inputs 0 and 1 (``inputs`` and ``w1``, which come
# *before* the centering) are wrong, while input 2 (``w2``, which comes
# after it) is right:
assert report.culprit is not None
print(report.culprit.op, "at", short(report.culprit.where))
sorted({row.input for row in report.failures})

# %%
# The culprit finder judges each op at its own scale: with the gradient that
# really reached it in the worst entry's backward pass, and a
# finite-difference step sized to the op's own inputs. An op is blamed for its
# share of that entry's error, however small or large its values are, so
# whatever makes the check fail is traced to its op, deep inside a real loss
# too. Here a VJP is one part in a thousand too large (2.002·x instead of
# 2·x), above the default ``rtol`` of 1e-4:


def square_off(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    return t * t, lambda dy: dy * 2.002 * t  # BUG: 0.1 % too large


small_report = mt.check_grads(lambda t: mt.custom_grad(square_off)(t).sum(), [mt.tensor([0.5, -1.3, 2.0])])
print(f"worst rel err {small_report.max_rel_error:.1e}")
print(short(small_report.culprit))

# %%
# ``grad_fn`` may read ``f``'s inputs and its value. Everything else ``f``
# makes is disposed when it returns, as in TF.js (``custom_grad`` is an op,
# and every op runs in its own scope). To keep an intermediate for the
# backward pass, give ``f`` a ``save`` parameter: what it saves lives as long
# as a tape needs it and reaches ``grad_fn`` as its second argument.


def scaled_tanh(t: mt.Tensor, save: Callable[[list[mt.Tensor]], None]) -> tuple[mt.Tensor, Callable[..., mt.Tensor]]:
    th = mt.tanh(t)
    save([th])
    return 2.0 * th, lambda dy, saved: dy * 2.0 * (1.0 - saved[0] * saved[0])


mt.check_grads(mt.custom_grad(scaled_tanh), [mt.tensor([0.3, -1.1])]).ok

# %%
# In a test suite you would call ``report.raise_if_failed()``, which raises
# :class:`~microtape.GradientCheckError` with the same table:
try:
    report.raise_if_failed()
except mt.GradientCheckError as err:
    print(short(err).splitlines()[0])

# %%
# The fix is the true VJP of centering. With it, the whole model passes:


def center_fixed(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    value = t - t.mean(axis=-1, keepdims=True)
    return value, lambda dy: dy - dy.mean(axis=-1, keepdims=True)


center_op = mt.custom_grad(center_fixed)
mt.check_grads(model, [inputs, w1, w2]).raise_if_failed().ok

# %%
# Why is the gradient wrong?
# --------------------------
#
# The culprit names the op whose VJP is wrong. :func:`microtape.explain_gradient`
# shows how that op's error reaches one entry of the gradient. By the chain
# rule, a gradient entry is a sum over every path from the output back to
# that entry, and each path contributes the product of the local derivatives
# of the ops along it. Here is a one-unit function with a hand-written
# sigmoid. The slope of the sigmoid s is s·(1 − s), but its author wrote
# s·(1 + s):


def squash(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    return mt.sigmoid(t), lambda dy: dy * mt.sigmoid(t) * (1.0 + mt.sigmoid(t))  # BUG: 1 - s


squash_op = mt.custom_grad(squash)


def unit(u: mt.Tensor) -> mt.Tensor:
    squashed = squash_op(u * 2.0)
    return (squashed * 3.0 + u * u).sum()


u0 = mt.tensor([0.5, -1.0])
print(short(mt.check_grads(unit, [u0])))

# %%
# The check fails on both entries, and the culprit is the custom op. Now we
# ask why entry 0 has the value it has. ``explain_gradient`` takes the entry
# with the largest gradient unless ``index`` says otherwise. It lists the
# paths, largest contribution first, with every step's op, the entry of its
# output, the input the path goes through (by its name in your code), the
# local derivative, the input's value where it is taken, and the line:
why = mt.explain_gradient(unit, [u0], index=0)
print(why)

# %%
# The two paths through ``u * u`` each contribute u, one per operand, and
# together they make the 2u we expect. The path that carries most of the
# gradient goes through the custom op. Its other factors come from the sum,
# the add, ``* 3.0`` and ``* 2.0``, and are what they should be. That leaves
# the custom op's own factor, which we compare with both formulas at the
# point the op saw:
s0 = mt.sigmoid(u0 * 2.0).data_sync()[0]
suspect = next(step for step in why.paths[0].steps if step.op.startswith("custom_grad"))
print(f"factor on the path {suspect.local:.4g}; s(1 - s) = {s0 * (1 - s0):.4g}, s(1 + s) = {s0 * (1 + s0):.4g}")

# %%
# The factor is s·(1 + s), so the bug is the sign in the bracket. With the
# fix, the check passes, and the same path now carries the true slope:


def squash_fixed(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    return mt.sigmoid(t), lambda dy: dy * mt.sigmoid(t) * (1.0 - mt.sigmoid(t))


squash_op = mt.custom_grad(squash_fixed)
print(mt.check_grads(unit, [u0]).ok)
print(mt.explain_gradient(unit, [u0], index=0, top=1))

# %%
# The question "why this value?" matters most when the value is NaN or 0.
# A common guard keeps √t away from t ≤ 0 with ``mt.where(cond, a, b)``,
# which takes ``a`` where ``cond`` is non-zero and ``b`` elsewhere, and
# ``t.greater(0.0)``, which is 1.0 where t > 0. At t = 0 the value is a
# harmless 0.0, yet we will see a NaN gradient. We ask why for entry 0:


def guarded_root(t: mt.Tensor) -> mt.Tensor:
    root = mt.sqrt(t)
    return mt.where(t.greater(0.0), root, mt.scalar(0.0)).sum()


at_zero = mt.tensor([0.0, 4.0])
print(mt.grad(guarded_root)(at_zero))
print(mt.explain_gradient(guarded_root, [at_zero], index=0))

# %%
# The last lines say why. ``where`` sends 0.0 back to the branch it did not
# choose, the slope of √t at 0 is infinite, and 0 · ∞ is NaN in floating
# point: guarding the value does not guard the gradient. The other path goes
# through the comparison, whose derivative is 0 everywhere. The fix keeps the
# unchosen branch finite, so that it gets a finite slope to multiply by 0:


def safer_root(t: mt.Tensor) -> mt.Tensor:
    positive = t.greater(0.0)
    root = mt.sqrt(mt.where(positive, t, mt.scalar(1.0)))
    return mt.where(positive, root, mt.scalar(0.0)).sum()


print(mt.grad(safer_root)(at_zero))

# %%
# A gradient of exactly 0 is the other surprise. In this small layer the
# bias, −5, is so negative that every ``relu`` unit is off ("dead") for
# every example, so no weight gets a gradient. We expect 0.0 for the first
# weight, and the explanation to name the op that stops it:
examples = mt.tensor([[0.5, 1.0], [1.5, -0.5], [1.0, 1.0]])


def dead_layer(weights: mt.Tensor) -> mt.Tensor:
    hidden = mt.relu(examples @ weights - 5.0)
    return hidden.sum()


layer_weights = mt.tensor([[0.3, -0.2], [0.4, 0.1]])
print(mt.explain_gradient(dead_layer, [layer_weights], index=(0, 0)))

# %%
# Three paths lead back to the weight, one per example, and each has the
# factor 0 of ``relu`` at a negative input. The last line names that op and
# its line, and counts its zeros: 3 of 3 entries. So the gradient is 0
# because every path is stopped, not because the loss does not depend on the
# weight: that is said only when no path leads back at all. A smaller bias,
# or a unit that keeps a small slope below 0, brings the gradient back.

# %%
# NaN and Inf: ``check_numerics``
# -------------------------------
#
# Some gradients are not slightly wrong but not numbers at all. A classic
# case is a distance √(Σ(a − b)²) evaluated where a = b. The value is a
# harmless 0, but the slope of √u at u = 0 is infinite, and ∞ · 0 gives
# NaN. We expect a finite loss and a NaN gradient. ``mt.value_and_grad`` is
# the one-input form of :chapter:`2`'s ``value_and_grads``.
target = mt.tensor1d([1.0, 2.0])


def distance(a: mt.Tensor) -> mt.Tensor:
    return mt.sqrt(((a - target) ** 2).sum())


point = mt.tensor1d([1.0, 2.0])
dist_value, dist_grad = mt.value_and_grad(distance)(point)
print(dist_value, dist_grad)

# %%
# :func:`microtape.check_numerics` (in TensorFlow,
# ``tf.debugging.check_numerics``) returns its tensor unchanged, or raises
# :class:`~microtape.NumericsError` if any entry is NaN or Inf. Wrap the loss
# and the gradients in it, and a NaN is caught at the step where it first
# appears, before it spreads into the weights:
mt.check_numerics(dist_value, "distance")
try:
    mt.check_numerics(dist_grad, "gradient of distance")
except mt.NumericsError as err:
    print(err)

# %%
# ``check_grads`` never passes a NaN. Here the central difference is
# harmless, about 0, yet both entries fail, because the analytic gradient is
# not a number. The last note names the op that made it, traced as
# ``detect_anomaly`` does below, and blames no VJP, since the derivative of
# √u at 0 really is infinite:
print(short(mt.check_grads(distance, [point])))

# %%
# ``detect_anomaly``: which op made the NaN?
# ------------------------------------------
#
# ``check_numerics`` tells us *that* a tensor is bad, not *where* it went
# bad. Inside ``with mt.detect_anomaly():``, every op's output and every
# backward VJP is checked as it runs. The first one to produce NaN or Inf
# raises :class:`~microtape.AnomalyError`, which names the op, the pass, the
# ranges of its inputs, and the line of your code that created it:
with mt.detect_anomaly():
    try:
        mt.grad(distance)(point)
    except mt.AnomalyError as err:
        print(short(err))

# %%
# The forward pass was fine. The backward pass of ``sqrt`` produced Inf, at
# the ``mt.sqrt(...)`` line inside ``distance``. The hint is a rewrite of
# that line in its own names: the square root of a sum of squares is a
# length, and :func:`microtape.norm` computes a length with a gradient that
# stays finite at 0. There the length is at its minimum, and the norm's
# gradient is 0, a subgradient, just as ``abs`` gives at 0. A small epsilon
# under the root, ``mt.sqrt(u + 1e-12)``, would also keep the gradient
# finite, but it changes the value (1e-6 instead of 0).


def safe_distance(a: mt.Tensor) -> mt.Tensor:
    return mt.norm(a - target)


with mt.detect_anomaly():
    safe_value, safe_grad = mt.value_and_grad(safe_distance)(point)
print(safe_value, safe_grad)

# %%
# The forward pass can go wrong too: a log of a negative number is NaN right
# away.
with mt.detect_anomaly():
    try:
        mt.log(mt.tensor1d([2.0, -1.0]))
    except mt.AnomalyError as err:
        print(str(err).splitlines()[0])

# %%
# A NaN that a ``where`` should have hidden
# -----------------------------------------
#
# A common guard is to compute both branches and let ``mt.where`` pick one.
# Here it takes √v where v is positive and v itself elsewhere, so the value is
# fine at v = −1. The gradient is not. The ``where`` hides the NaN of
# √−1 from the forward pass, but on the way back it passes 0 to the branch it
# did not pick, and 0 times the NaN derivative of √ at −1 is NaN. We
# expect 0.25 and 1, and get a NaN in place of the 1:


def root_or_self(v: mt.Tensor) -> mt.Tensor:
    return mt.where(v.greater(0.0), mt.sqrt(v), v).sum()


mixed = mt.tensor1d([4.0, -1.0])
mt.grad(root_or_self)(mixed)

# %%
# ``mode="trace"`` records where the NaN was made and every op it went
# through. Its report says which ``where`` hid which entries, and its hint is
# the *double where*: a second ``where`` inside the branch gives √ a harmless
# input (1.0) at the entries the outer one throws away, so no NaN is made at
# all. The hint is the line of ``root_or_self``, rewritten:
with mt.detect_anomaly(mode="trace") as masked:
    mt.grad(root_or_self)(mixed)
print(short(masked))

# %%
# With the hint in place, ``detect_anomaly`` finds nothing and the gradient
# is right. (``where``'s type annotations ask for tensors, though it takes
# numbers too, as its other ops do; the comment tells mypy the 1.0 is meant.)


def root_or_self_fixed(v: mt.Tensor) -> mt.Tensor:
    return mt.where(v.greater(0.0), mt.sqrt(mt.where(v.greater(0.0), v, 1.0)), v).sum()  # type: ignore[arg-type]


with mt.detect_anomaly():
    print(mt.grad(root_or_self_fixed)(mixed))

# %%
# Stable formulas
# ~~~~~~~~~~~~~~~
#
# Many NaNs and Infs come from a formula that is right on paper and wrong in
# floating point. microtape has the stable forms as ops of their own, each
# with its own VJP: ``mt.log1p(x)`` for log(1 + x) and ``mt.expm1(x)`` for
# eˣ − 1 when x is tiny, ``mt.softplus(x)`` for log(1 + eˣ) and
# ``mt.log_sigmoid(x)`` when x is large, ``mt.atan2(y, x)`` for the angle
# of (x, y) without dividing by x, ``mt.norm`` for a length, and, on logits
# rather than probabilities, ``mt.log_softmax``,
# ``mt.sigmoid_cross_entropy`` and ``mt.softmax_cross_entropy``
# (:chapter:`7`). Each pair below is the naive formula and the stable op:
big_logit = mt.tensor1d([1000.0])
print("log(1 + 1e-20):", mt.log(1.0 + mt.tensor1d([1e-20])).item(), "  log1p:", mt.log1p(mt.tensor1d([1e-20])).item())
print("log(1 + exp(1000)):", mt.log(1.0 + mt.exp(big_logit)).item(), "  softplus:", mt.softplus(big_logit).item())
one, minus_one = mt.tensor1d([1.0]), mt.tensor1d([-1.0])
print(f"atan(1 / -1): {mt.atan(one / minus_one).item():.4f}   atan2(1, -1): {mt.atan2(one, minus_one).item():.4f}")
print("NaN entries of the gradient:", mt.is_nan(dist_grad))

# %%
# .. note:: TF.js has neither ``check_numerics`` nor an anomaly mode. The
#    closest it gets is debug mode, ``tf.env().set('DEBUG', true)``. In
#    debug mode TF.js profiles every kernel call, the backward pass's
#    included (its gradients are computed by running kernels too): it logs
#    each kernel's name, time and shapes to the console, reads the result
#    back, and when the result holds a NaN or an infinity it prints a warning
#    (``Found NaN in the result of 'Log'``) and carries on. Nothing stops at the
#    first bad value, and reading back every result slows everything down.
#    microtape's anomaly mode stops with an error at the first NaN or Inf of
#    either pass, names the op and the line, and costs nothing when it is
#    off.
#

# %%
# Common mistakes
# ---------------
#
# Some bugs are not wrong gradients but wrong calls, often habits from
# PyTorch or NumPy. microtape answers each with a message in three parts,
# as every error in this book has: what happened, the rule, and a hint
# (where the hint is code, it runs as written). The errors are still the
# builtin kinds, so ``except AttributeError`` catches the first one. The
# ``# type: ignore`` comments are there because mypy rejects these lines
# too, before anything runs.
try:
    loss().backward()  # type: ignore[attr-defined]  # PyTorch's way
except AttributeError as err:
    print(err)

# %%
# ``mt.grad`` and ``variable_grads`` take the *function* that computes the
# loss, because they run it inside a tape. Passing the loss already computed,
# or a function that forgets its ``return``, is caught before any work:
try:
    mt.grad(loss())  # type: ignore[arg-type]  # a tensor, not a function
except mt.InvalidArgumentError as err:
    print(err)


def forgot_return() -> None:
    ((x * w + b - y) ** 2).mean()


try:
    mt.variable_grads(forgot_return)  # type: ignore[arg-type]  # returns None
except mt.GradientError as err:
    print(err)

# %%
# Two NumPy habits last. ``x > 0`` is not a mask here: tensors keep Python's
# ``==`` by identity, so they can be dict keys, and the ordering operators
# point to the comparison ops instead. And a step written as ``w - lr * dw``
# makes a new, plain tensor, which cannot be assigned to; only the variable
# can.
try:
    x > 0  # type: ignore[operator]  # a comparison op makes the mask
except TypeError as err:
    print(err)
print(x.greater(2.0))
stepped = w - lr * grads[w]
try:
    stepped.assign(0.0)  # type: ignore[attr-defined]  # stepped is a plain tensor
except AttributeError as err:
    print(err)

# %%
# A gradient that is missing says why. Numbers read out of a tensor, or a
# copy made with ``mt.tensor``, leave the tape's graph, and ``grad`` names
# the line where that happened. When you mean to cut the path, say so with
# ``mt.stop_gradient(t)`` (``tf.stop_gradient`` in TensorFlow), and the
# error names that instead:
try:
    mt.grad(lambda t: mt.tensor(t.data_sync()) * 2.0)(mt.scalar(1.0))
except mt.GradientError as err:
    print(short(err))

# %%
# What we built
# -------------
#
# We now have a ladder of checks. At the bottom, read sign and scale and
# print gradients with ``mt.print``. Next, compare with finite differences,
# by hand, with ``numerical_grad``, or with ``check_grads`` (full or fast,
# first or second order, with kinks marked, and *inconclusive* where finite
# differences cannot tell). At the top, ``check_numerics`` and
# ``detect_anomaly`` catch NaN and Inf at the step and the line where they
# start, and say which ``where`` hid them. The checker found a wrong
# ``custom_grad`` inside a six-op model and named it. Next: the computation graph itself, meaning memory, leaks and
# gradients for many variables at once.
#
# For the checks one level deeper (forward mode and when it is cheaper, the
# dot-product and Taylor tests, the stable forms of common losses, and what
# float32 does to a finite difference), read :chapter:`9` after this one.
