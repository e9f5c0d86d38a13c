"""
Casebook: real gradient bugs
============================

The chapters so far showed each tool on an example made for it. Here the
examples come from people: every case below was reported in the public
tracker of an autodiff library (TensorFlow.js, TensorFlow, PyTorch, JAX,
Keras, HIPS autograd, candle, dfdx, deeplearning4j) or of a project built
on one (OpenAI Baselines, an app on TensorFlow.js), and the link says where. For each case you get
the reporter's symptom in a sentence or two, the bug rebuilt in microtape,
the tool of this book that finds it (run for real, its output printed as it
came), and the fix, run again to show that it works. Before each tool runs,
a *predict* line asks you to guess what it will say.

The reproductions are our own code, in float64: where a report needed
float32 to overflow, the numbers are moved to where float64 overflows.
The chapter ends with a table from symptom to tool to fix.
"""

# %%
# Two helpers: ``first_anomaly`` runs a computation under
# :func:`microtape.detect_anomaly` and prints the error's first line (the op,
# the pass, the line) and its hint; ``warned`` runs a computation and prints
# the warnings microtape gives instead of letting them pass by. ``short``
# drops the folders from the file names the tools print.
import math
import re
import warnings
from collections.abc import Callable

import microtape as mt


def first_anomaly(run: Callable[[], object]) -> None:
    try:
        with mt.detect_anomaly():
            run()
    except mt.AnomalyError as err:
        print(str(err).splitlines()[0])
        print("hint:", err.hint)
    else:
        print("no anomaly")


def short(text: object) -> str:
    return re.sub(r"[^\s(]*[/\\](?=[\w.-]+\.py\b)", "", str(text))


def warned(run: Callable[[], object]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    for w in caught:
        print(type(w.message).__name__ + ":", short(str(w.message).splitlines()[0]))


# %%
# Case 1: a ``where`` that hides the square root of a negative number
# --------------------------------------------------------------------
#
# *Report* (https://github.com/tensorflow/tensorflow/issues/38349): the loss
# picks ``sqrt(x)`` only where ``x > 0``, and yet its gradient is NaN. The
# branch that is not picked is still computed, and its NaN comes back as
# ``0 · nan`` on the way back.
#
# *Predict:* which op will :func:`~microtape.detect_anomaly` name, and in
# which pass?


def case1(x: mt.Tensor) -> mt.Tensor:
    return mt.where(x.greater(0.0), mt.sqrt(x), 0.0).sum()  # type: ignore[arg-type]


x1 = mt.tensor([-4.0, 9.0])
print("gradient:", mt.grad(case1)(x1))
first_anomaly(lambda: mt.grad(case1)(x1))

# %%
# The fix is the hint: a second ``where`` gives ``sqrt`` a safe input where
# its result is thrown away, so no NaN exists to leak.


def case1_fixed(x: mt.Tensor) -> mt.Tensor:
    return mt.where(x.greater(0.0), mt.sqrt(mt.where(x.greater(0.0), x, 1.0)), 0.0).sum()  # type: ignore[arg-type]


print("fixed gradient:", mt.grad(case1_fixed)(x1))

# %%
# Case 2: a reciprocal guarded at zero
# ------------------------------------
#
# *Report* (https://github.com/tensorflow/tensorflow/issues/118674):
# ``where(x > 0, 1/x, 1)`` is 1 at ``x = 0``, a constant, so its gradient
# should be 0; it comes out NaN. *Predict:* forward or backward?


def case2(x: mt.Tensor) -> mt.Tensor:
    return mt.where(x.greater(0.0), 1.0 / x, 1.0)  # type: ignore[arg-type]


print("gradient:", mt.grad(case2)(mt.scalar(0.0)))
first_anomaly(lambda: mt.grad(case2)(mt.scalar(0.0)))


def case2_fixed(x: mt.Tensor) -> mt.Tensor:
    return mt.where(x.greater(0.0), 1.0 / mt.where(x.greater(0.0), x, 1.0), 1.0)  # type: ignore[arg-type]


print("fixed gradient:", mt.grad(case2_fixed)(mt.scalar(0.0)))

# %%
# The forward ``1/0`` is ``inf``; ``where`` drops it, but the VJP of ``div``
# multiplies the zero it receives by ``-1/x²`` = ``-inf``, and ``0 · inf``
# is NaN. The inner ``where`` divides by 1 instead.
#
# Case 3: ``exp`` that overflows in the branch not taken
# ------------------------------------------------------
#
# *Report* (https://github.com/pytorch/pytorch/issues/68425): a piecewise
# function that uses ``exp(a)`` for ``a <= 0`` and ``1 + a`` above has a NaN
# gradient at large ``a`` (float32 overflows at 100, float64 at about 710).
# *Predict:* NaN or Inf first?


def case3(a: mt.Tensor) -> mt.Tensor:
    return mt.where(a.less_equal(0.0), mt.exp(a), 1.0 + a)


print("gradient:", mt.grad(case3)(mt.scalar(1000.0)))
first_anomaly(lambda: mt.grad(case3)(mt.scalar(1000.0)))


def case3_fixed(a: mt.Tensor) -> mt.Tensor:
    return mt.where(a.less_equal(0.0), mt.exp(mt.where(a.less_equal(0.0), a, mt.scalar(0.0))), 1.0 + a)


print("fixed gradient:", mt.grad(case3_fixed)(mt.scalar(1000.0)))

# %%
# Case 4: divide, then replace the zeros on the next line
# -------------------------------------------------------
#
# *Report* (https://github.com/pytorch/pytorch/issues/16317): a mean over
# counts that may be zero divides first and then swaps the NaN for 0 with a
# ``where``. The value is right, the gradient is not. Here the trace mode
# shows the whole chain: where the NaN was made, and what it went through.
# *Predict:* which op, in which pass, does the trace name first?


def case4(x: mt.Tensor, n: mt.Tensor) -> mt.Tensor:
    y = x / n
    return mt.where(n.equal(0.0), 0.0, y).sum()  # type: ignore[arg-type]


xs4 = [mt.tensor([0.0, 1.0]), mt.tensor([0.0, 2.0])]
print("gradient for x:", mt.grads(case4)(xs4)[0])
with mt.detect_anomaly(mode="trace") as trace4:
    mt.grads(case4)(xs4)
print(short(trace4))


def case4_fixed(x: mt.Tensor, n: mt.Tensor) -> mt.Tensor:
    y = x / mt.where(n.equal(0.0), mt.scalar(1.0), n)
    return mt.where(n.equal(0.0), 0.0, y).sum()  # type: ignore[arg-type]


print("fixed gradient for x:", mt.grads(case4_fixed)(xs4)[0])

# %%
# Case 5: the log of a softmax
# ----------------------------
#
# *Report* (https://github.com/tensorflow/models/pull/181): a cross-entropy
# written as ``-sum(labels * log(softmax(z)))`` turns into NaN once the logits
# are far apart, because a probability rounds to exactly 0. The usual patch,
# ``log(p + 1e-7)``, removes the NaN and with it the gradient.
# *Predict:* what does the patched gradient look like?
labels5 = mt.tensor([0.0, 1.0, 0.0])
z5 = mt.tensor([1000.0, 0.0, -1000.0])


def case5(z: mt.Tensor) -> mt.Tensor:
    return -(labels5 * mt.log(mt.softmax(z))).sum()


print("loss:", case5(z5))
first_anomaly(lambda: mt.grad(case5)(z5))
print("epsilon patch:", mt.grad(lambda z: -(labels5 * mt.log(mt.softmax(z) + 1e-7)).sum())(z5))
print("log_softmax:  ", mt.grad(lambda z: -(labels5 * mt.log_softmax(z)).sum())(z5))

# %%
# The patched gradient is all zeros: the model would stop learning exactly
# where it is most wrong. ``log_softmax`` computes ``z - logsumexp(z)``,
# which never forms the zero probability, and its gradient
# ``softmax(z) - labels`` is the right one.
#
# Case 6: a softmax over a row that is masked completely
# ------------------------------------------------------
#
# *Report* (https://github.com/pytorch/pytorch/issues/41508): in attention,
# a query that may look at nothing has every score set to ``-inf``, and its
# softmax row is NaN. *Predict:* which op makes the first NaN, inside softmax?
scores6 = mt.tensor([[0.3, 1.2, -0.4], [-math.inf, -math.inf, -math.inf]])
print(mt.softmax(scores6))
first_anomaly(lambda: mt.softmax(scores6))
print(mt.softmax(mt.tensor([[0.3, 1.2, -0.4], [-1e9, -1e9, -1e9]])))

# %%
# Subtracting the row's maximum (to keep ``exp`` from overflowing) meets
# ``-inf - (-inf)``, which is NaN. A large finite mask such as ``-1e9`` keeps
# the arithmetic finite: the masked row becomes uniform, and the caller can
# zero it out afterwards.
#
# Case 7: the length of a vector at zero
# --------------------------------------
#
# *Report* (https://github.com/HIPS/autograd/issues/151): the gradient of
# ``sqrt(sum(x*x))`` at ``x = 0`` is NaN. The function has a cone there, and
# ``sqrt``'s derivative at 0 is infinite. *Predict:* forward or backward?


def length(x: mt.Tensor) -> mt.Tensor:
    return mt.sqrt((x * x).sum())


print("gradient:", mt.grad(length)(mt.zeros((3,))))
first_anomaly(lambda: mt.grad(length)(mt.zeros((3,))))
print("mt.norm's gradient:", mt.grad(mt.norm)(mt.zeros((3,))))

# %%
# :func:`microtape.norm` documents its choice at 0: the zero subgradient, as
# TensorFlow and PyTorch return. Where the squared length is what you need,
# ``(x * x).sum()`` has no kink at all.
#
# Case 8: binary cross-entropy on probabilities
# ---------------------------------------------
#
# *Report* (https://github.com/huggingface/candle/issues/2561): the loss
# ``-log(1 - sigmoid(z))`` is ``inf`` at ``z = 40``, and the gradient NaN,
# because ``sigmoid(40)`` rounds to 1. *Predict:* will
# :func:`~microtape.check_grads` pass this NaN, and will it blame ``log``'s VJP?


def bce(z: mt.Tensor) -> mt.Tensor:
    return -mt.log(1 - mt.sigmoid(z)).sum()  # the label is 0


report8 = mt.check_grads(bce, [mt.tensor([40.0])])
print(report8.verdict, "| culprit:", report8.culprit)
print(report8.rows[0].why)
print("on logits:", mt.grad(lambda z: mt.sigmoid_cross_entropy(mt.tensor([0.0]), z))(mt.tensor([40.0])))

# %%
# The check fails, as it must, and names no culprit: every VJP here is right,
# the formula is what overflows. :func:`microtape.sigmoid_cross_entropy`
# works on the logits, and its gradient ``sigmoid(z) - label`` is finite.
#
# The overflow does not come out of nowhere. Drawn over a range of logits,
# each form's distance from the exact loss, log(1 + eᶻ), shows
# ``1 - sigmoid(z)`` running out of digits: the loss on probabilities
# wobbles more and more, and then it is ``inf``.
import matplotlib.pyplot as plt

from microtape.book.figures import figure_words

words = figure_words()
zs = [25.0 + 0.05 * i for i in range(301)]
exact = [z + math.log1p(math.exp(-z)) for z in zs]
on_probabilities = [bce(mt.tensor([z])).item() for z in zs]
on_logits = [mt.sigmoid_cross_entropy(mt.tensor([0.0]), mt.tensor([z])).item() for z in zs]
first_inf = next(z for z, v in zip(zs, on_probabilities) if math.isinf(v))
print(f"the loss on probabilities is inf from z = {first_inf:.2f}")
fig, ax = plt.subplots(figsize=(6.4, 4.2))
ax.plot(zs, [v - e if math.isfinite(v) else math.nan for v, e in zip(on_probabilities, exact)],
        label=words["ch8_probabilities"])
ax.plot(zs, [v - e for v, e in zip(on_logits, exact)], label=words["ch8_logits"])
ax.axvline(first_inf, color="C0", linestyle=":")
ax.set_xlabel(words["ch8_xlabel"])
ax.set_ylabel(words["ch8_ylabel"])
ax.set_title(words["ch8_title"])
ax.legend(loc="lower left")
fig.tight_layout()

# %%
# The dotted line is where ``sigmoid(z)`` rounds to exactly 1. From about
# z = 33 up to it, the loss on probabilities is off by more and more, in the
# end by tenths; the loss on logits stays on the exact curve all the way.
#
# Case 9: a ReLU on the output layer
# ----------------------------------
#
# *Report* (https://github.com/chelsea0x3b/dfdx/issues/486): a regression
# net with a ``relu`` on its output never learns; every gradient is zero.
# The weights start so that every output is negative, and the ``relu``'s
# derivative there is 0. *Predict:* what share of zeros will
# :func:`~microtape.grad_stats` report?
w9 = mt.variable(mt.tensor([[-0.5], [-0.8]]), name="w9")
x9 = mt.tensor([[1.0, 2.0], [0.5, 1.5]])
_, grads9 = mt.variable_grads(lambda: (mt.relu(x9 @ w9) - 1.0).square().mean())
print(mt.grad_stats(grads9)["w9"])
_, grads9_fixed = mt.variable_grads(lambda: ((x9 @ w9) - 1.0).square().mean())
print(mt.grad_stats(grads9_fixed)["w9"])

# %%
# Every entry of the gradient is zero, a dead unit. A regression output
# needs no activation; without the ``relu`` the gradient is alive.
#
# Case 10: a gradient check that cries wolf at a kink
# ---------------------------------------------------
#
# *Report* (https://github.com/pytorch/pytorch/issues/114234): checking
# ``relu`` at inputs that are exactly 0 fails, though its VJP is fine: a
# central difference across the kink gives 1/2. *Predict:* FAILED, or
# something else?
report10 = mt.check_grads(mt.relu, [mt.tensor([[0.0, 0.7], [-0.2, 0.0]])])
print(report10.verdict)
print(report10.rows[0].why)
print(mt.check_grads(mt.relu, [mt.tensor([[0.3, 0.7], [-0.2, -0.5]])]).verdict)

# %%
# No false alarm: the verdict is *passed*, and the row at the first 0 says
# why its central difference (1/2) was not held against the VJP (0): at a
# kink the one-sided slopes are 0 and 1, and any value between them is a
# fair gradient. Checking away from the kink passes as well, with nothing
# to explain.
#
# Case 11: a tensor the tape never watched
# ----------------------------------------
#
# *Report* (https://github.com/tensorflow/tensorflow/issues/29942): the
# gradient with respect to ``x`` is ``None``, though ``z`` clearly depends
# on it. ``x`` was computed before the tape opened, and a tape only watches
# trainable variables by itself. *Predict:* what does microtape warn?
x0 = mt.variable(mt.scalar(1.0), name="x0")
x11 = x0 + 3.0
with mt.GradientTape(persistent=True) as tape11:
    z11 = x11 * x0
warned(lambda: print("gradients:", tape11.gradient(z11, [x11, x0])))
tape11.release()
with mt.GradientTape() as tape11_fixed:
    tape11_fixed.watch(x11)
    z11 = x11 * x0
print("watched:", tape11_fixed.gradient(z11, [x11, x0]))

# %%
# Case 12: a copy through plain numbers cuts the graph
# ----------------------------------------------------
#
# *Report* (https://github.com/tensorflow/tensorflow/issues/37501): "Gradients
# do not exist for variables": an embedding's values went through a
# conversion to host numbers and back, and no path from the loss reaches it.
# *Predict:* which call does the warning name?
w12 = mt.variable(mt.tensor([0.5, -0.5]), name="w12")
emb = mt.variable(mt.tensor([1.0, 2.0]), name="emb")


def case12() -> mt.Tensor:
    features = mt.tensor(emb.data_sync())  # the values, copied: no path back to emb
    return ((features * w12).sum() - 1.0) ** 2.0


warned(lambda: mt.variable_grads(case12, [w12, emb]))
_, grads12 = mt.variable_grads(lambda: ((emb * w12).sum() - 1.0) ** 2.0, [w12, emb])
print("fixed, emb's gradient:", grads12[emb])

# %%
# Case 13: an ``assign`` inside the tape
# --------------------------------------
#
# *Report* (https://github.com/tensorflow/tensorflow/issues/30234): the loss
# is computed from a variable that was just updated with ``assign_add(x)``,
# and the gradient with respect to ``x`` is ``None``: an assignment is not a
# differentiable op. *Predict:* does microtape stay silent?
v13 = mt.variable(mt.scalar(1.0), name="v13")
x13 = mt.scalar(2.0)
with mt.GradientTape(persistent=True) as tape13:
    tape13.watch(x13)
    v13.assign_add(x13)
    loss13 = v13 * v13
warned(lambda: print("gradient:", tape13.gradient(loss13, x13)))
tape13.release()
v13.assign(mt.scalar(1.0))
with mt.GradientTape() as tape13_fixed:
    tape13_fixed.watch(x13)
    loss13 = (v13 + x13) * (v13 + x13)
print("without the assign:", tape13_fixed.gradient(loss13, x13))

# %%
# Case 14: a custom gradient with no second derivative
# ----------------------------------------------------
#
# *Report* (https://github.com/jax-ml/jax/issues/21220): the custom rule of
# ``x³`` reads a saved ``x²``, and the second derivative comes out wrong:
# the saved value is a constant to the outer derivative. *Predict:* does a
# first-order check see anything?


def cube(x: mt.Tensor, save: Callable[[list[mt.Tensor]], None]) -> tuple[mt.Tensor, Callable[..., mt.Tensor]]:
    save([x * x])
    return x * x * x, lambda dy, saved: dy * 3.0 * saved[0]


cube_op: Callable[[mt.Tensor], mt.Tensor] = mt.custom_grad(cube)
x14 = mt.tensor([0.5, -1.5])
print("order 1:", mt.check_grads(lambda t: cube_op(t).sum(), [x14]).verdict)
print("order 2:", mt.check_grads(lambda t: cube_op(t).sum(), [x14], order=2).verdict)


def cube_fixed(x: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], mt.Tensor]]:
    return x * x * x, lambda dy: dy * 3.0 * x * x


cube_fixed_op: Callable[[mt.Tensor], mt.Tensor] = mt.custom_grad(cube_fixed)
print("fixed, order 2:", mt.check_grads(lambda t: cube_fixed_op(t).sum(), [x14], order=2).verdict)

# %%
# The first derivative is right; only ``order=2`` catches it. Computing the
# rule from ``x`` itself keeps the rule differentiable.
#
# Case 15: optimizer state that outlives the model
# ------------------------------------------------
#
# *Report* (https://github.com/tensorflow/tfjs/issues/4647): in TF.js, the
# tensor count keeps growing after a model is disposed; the optimizer still
# holds its per-variable state. *Predict:* will
# :func:`~microtape.leak_check` call this a leak?
w15 = mt.variable(mt.tensor([1.0, 2.0]), name="w15")
before15 = mt.memory().num_tensors
opt15 = mt.train.momentum(0.001, 0.9)
with mt.leak_check(on_leak="ignore") as leaks15:
    opt15.minimize(lambda: (w15 * w15).sum())
print(short(leaks15))
opt15.dispose()
print("tensors after opt.dispose():", mt.memory().num_tensors - before15)

# %%
# Not a leak, and the report says so: the new tensor is optimizer state, with
# its owner and its name, and ``opt.dispose()`` frees it.
#
# Case 16: a prediction loop that leaks
# -------------------------------------
#
# *Report* (https://github.com/camicroscope/caMicroscope/issues/228): every
# prediction in a TF.js app left a few more tensors alive, until memory ran
# out. Each call makes its input tensor and the model's output, reads the
# numbers and keeps nothing, but nothing disposes the tensors either.
# *Predict:* which ops, on which line, will :func:`~microtape.leak_check` name?
w16 = mt.variable(mt.tensor([[0.5], [-0.5]]), name="w16")


def predict16(rows: list[list[float]]) -> list[float]:
    return (mt.tensor(rows) @ w16).data_sync()


with mt.leak_check(on_leak="ignore") as leaks16:
    for _call in range(3):
        predict16([[1.0, 2.0]])
print(short(leaks16))
with mt.leak_check(on_leak="ignore") as leaks16_fixed:
    for _call in range(3):
        mt.tidy(lambda: predict16([[1.0, 2.0]]))
print(leaks16_fixed)

# %%
# Three calls, six tensors: an input and an output per call, named with the
# line that made them. Inside :func:`microtape.tidy` both are disposed when
# the call returns, and only the plain numbers come out.
#
# Case 17: a threshold in the loss
# --------------------------------
#
# *Report* (https://github.com/pytorch/pytorch/issues/1339): the reporter
# wanted to train through an ``argmax``, and the gradient of everything
# before it was gone. A comparison such as ``x > 0.5`` has slope 0 wherever
# it is defined, so a loss that counts hits has nothing to tell the weights.
# *Predict:* what will :func:`~microtape.explain_gradient` blame for the zero?
x17 = mt.tensor([0.2, 0.9, 0.4])


def hits(t: mt.Tensor) -> mt.Tensor:
    return mt.where(t.greater(0.5), mt.ones_like(t), mt.zeros_like(t)).sum()


explained17 = mt.explain_gradient(hits, [x17])
print(explained17.total)
print("\n".join(short(explained17).splitlines()[-4:]))
print("smooth:", mt.grad(lambda t: mt.sigmoid((t - 0.5) / 0.1).sum())(x17))

# %%
# Every path stops at a factor 0, and the first named is ``greater``. A
# smooth stand-in, here a steep sigmoid around the threshold, counts almost
# the same and has a slope everywhere; keep the hard count for reporting.
#
# Case 18: a target that should have been held still
# --------------------------------------------------
#
# *Report* (https://github.com/openai/baselines/issues/105): in Q-learning
# the loss is (q(s) − (r + γ·q(s′)))², and the target r + γ·q(s′) is meant
# as a constant; the implementation wraps it in ``stop_gradient``, and the
# reporter asked why. Without it the gradient also pulls the target towards
# the prediction. *Predict:* how many paths will the explanation list, and
# which one is the intruder?
q18 = mt.tensor([0.5, -0.3])
s18, next18 = mt.tensor([1.0, 2.0]), mt.tensor([0.5, 1.0])


def td_loss(q: mt.Tensor) -> mt.Tensor:
    target = 1.0 + 0.9 * (next18 * q).sum()
    return ((s18 * q).sum() - target) ** 2.0


def td_loss_fixed(q: mt.Tensor) -> mt.Tensor:
    target = mt.stop_gradient(1.0 + 0.9 * (next18 * q).sum())
    return ((s18 * q).sum() - target) ** 2.0


print(short(mt.explain_gradient(td_loss, [q18])))
print("with stop_gradient:", mt.grad(td_loss_fixed)(q18))

# %%
# Two paths: one through the prediction, and one through the target, which
# cancels almost half of the first. With ``stop_gradient`` only the first is
# left: the gradient is the prediction's alone.
#
# Case 19: a recurrent net whose gradient explodes
# ------------------------------------------------
#
# *Report* (https://github.com/keras-team/keras/issues/5127): the loss of a
# recurrent model became NaN unless ``clipnorm`` was set. Thirty steps of a
# recurrence that stretches its state multiply the gradient thirty times.
# *Predict:* how large will :func:`~microtape.grad_stats` say the norm is?
w19 = mt.variable(mt.tensor([[1.5, -1.2], [1.3, 1.4]]), name="w19")
inputs19 = [mt.tensor([[0.3, -0.2]]) for _ in range(30)]


def rnn19() -> mt.Tensor:
    h = mt.zeros((1, 2))
    for x in inputs19:
        h = h @ w19 + x
    return (h * h).sum()


_, grads19 = mt.variable_grads(rnn19, [w19])
print(mt.grad_stats(grads19)["w19"])
clipped19, norm19 = mt.clip_by_global_norm([grads19[w19]], 1.0)
print("clipped to norm 1:", clipped19[0])
w19.assign_sub(grads19[w19] * 0.01)
print("the loss after one SGD step at lr 0.01:", rnn19())

# %%
# A norm near 1e17: one SGD step with it moves the weights by about 1e15,
# and the next loss, thirty matrix products later, is NaN (the products
# overflow, and infinities of both signs meet). Clipping to a global norm keeps the direction and
# bounds the step; a recurrent matrix that does not stretch (its
# eigenvalues inside the unit circle) removes the cause.
#
# Case 20: a sum where a mean was meant
# -------------------------------------
#
# *Report* (https://github.com/jax-ml/jax/pull/3113): a JAX tutorial summed
# its loss over the batch; with its batch size and learning rate it worked,
# with larger batches the gradients exploded, and the fix was a mean.
# *Predict:* by how much does the gradient grow from a batch of 8 to 256?
w20 = mt.variable(mt.tensor([[0.5]]), name="w20")
for n20 in (8, 256):
    x20 = mt.tensor([[1.0 + 0.1 * (i % 8)] for i in range(n20)])
    _, summed20 = mt.variable_grads(lambda: ((x20 @ w20 - 2.0 * x20) ** 2.0).sum(), [w20])
    _, mean20 = mt.variable_grads(lambda: ((x20 @ w20 - 2.0 * x20) ** 2.0).mean(), [w20])
    print(f"batch {n20:3}: norm with sum {mt.grad_stats(summed20)['w20'].norm:9.4g}, with mean {mt.grad_stats(mean20)['w20'].norm:.4g}")

# %%
# The same data, repeated: with a sum the gradient grows with the batch,
# 32 times for 32 times the rows, so the learning rate that suits one batch
# size overshoots at another. With a mean it does not move.
#
# Case 21: a hand-written gradient that forgets broadcasting
# ----------------------------------------------------------
#
# *Report* (https://github.com/deeplearning4j/nd4j/issues/2424): adding a
# row vector to a matrix broadcasts it, and the reported gradient of the
# row vector had the matrix's shape: it was never summed back. Here the
# same mistake is made in a custom rule for ``x + b``.
# *Predict:* does :func:`~microtape.check_grads` only say FAILED?


def add_bias(x: mt.Tensor, b: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], list[mt.Tensor]]]:
    return x + b, lambda dy: [dy, dy]


def add_bias_fixed(x: mt.Tensor, b: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], list[mt.Tensor]]]:
    return x + b, lambda dy: [dy, dy.sum(axis=0)]


x21, b21 = mt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), mt.tensor([0.1, -0.2])
add_bias_op: Callable[[mt.Tensor, mt.Tensor], mt.Tensor] = mt.custom_grad(add_bias)
add_bias_fixed_op: Callable[[mt.Tensor, mt.Tensor], mt.Tensor] = mt.custom_grad(add_bias_fixed)
report21 = mt.check_grads(lambda x, b: (add_bias_op(x, b) ** 2.0).sum(), [x21, b21])
print(report21.verdict)
print(next(n for n in report21.notes if "broadcast" in n))
print("fixed:", mt.check_grads(lambda x, b: (add_bias_fixed_op(x, b) ** 2.0).sum(), [x21, b21]).verdict)

# %%
# The note names the op, the input, both shapes and the likely cause. The
# VJP of a broadcast input sums ``dy`` over the axes that were broadcast,
# here the rows.
#
# Symptom, tool, fix
# ------------------
#
# =========================================  ==========================================  =============================================
# Symptom                                    Tool                                         Fix
# =========================================  ==========================================  =============================================
# NaN gradient through a ``where``           ``detect_anomaly`` (names op, pass, line)    a second ``where`` gives the op a safe input
# NaN or zero gradient of ``log(softmax)``   ``detect_anomaly``, compare with the patch   ``log_softmax``, ``softmax_cross_entropy``
# NaN row of a masked softmax                ``detect_anomaly`` (``inf - inf``)           a finite mask such as ``-1e9``
# NaN gradient of a length at zero           ``detect_anomaly`` (``sqrt`` backward)       ``mt.norm``, or the squared length
# ``inf`` loss, NaN gradient, BCE            ``check_grads`` (no culprit, origin)         ``sigmoid_cross_entropy`` on the logits
# all-zero gradient                          ``grad_stats`` (share of zeros)              remove the ``relu``, re-initialise
# gradient check fails at a kink             ``check_grads`` (row status *kink*)          check away from the kink
# ``None`` for a tensor made before a tape   ``tape.gradient``'s warning                  ``tape.watch(x)`` inside the tape
# "gradients do not exist"                   ``variable_grads``'s warning                 stay in tensor ops, no ``data_sync``
# ``None`` after an ``assign``               ``tape.gradient``'s warning                  compute with ops, assign after the step
# wrong second derivative                    ``check_grads(..., order=2)``                write the rule with the inputs' ops
# tensor count grows after dispose           ``leak_check`` (names optimizer state)       ``opt.dispose()``
# tensor count grows with every prediction   ``leak_check`` (names op and line)           ``mt.tidy`` around each call
# zero gradient through a comparison         ``explain_gradient`` (blocked op)            a smooth stand-in (``sigmoid``)
# a target that moves with the prediction    ``explain_gradient`` (an extra path)         ``stop_gradient`` on the target
# NaN loss in a recurrent net                ``grad_stats`` (norm)                        ``clip_by_global_norm``
# gradient grows with the batch size         ``grad_stats`` (norm per batch size)         a mean, not a sum
# custom VJP of a broadcast input            ``check_grads`` (shape note)                 sum ``dy`` over the broadcast axes
# =========================================  ==========================================  =============================================
#
# What we built
# -------------
#
# Twenty-one bugs people met, each found by a tool of this book and fixed.
# The pattern repeats: read the symptom, let the tool name the op and the
# line, apply the fix, and run again.
