"""
In practice (Практическое применение)
=====================================

The Russian section *Практическое применение* makes three practical points.
The learning rate and the optimizer decide how large the updates are and
how they behave. Recurrent networks are where gradients :term:`explode
<exploding gradient>` or :term:`vanish <vanishing gradient>`, and
:term:`clipping <gradient clipping>` (``clipByValue``, ``clipByNorm``) keeps them in check. And
plots, whether graphical or in the console, show what is going on.

One of the text's points needs a correction. It says the learning rate and
the optimizer act on the size and behaviour of the *gradients*. They act on
the *updates*: the gradient at a given point does not depend on them at all.
They change later gradients only indirectly, through where the updates take
the weights, which is exactly how a too-large learning rate makes them blow up
below.

By the end of this chapter you will have compared learning rates and all
seven TF.js optimizers on the linear model of :chapter:`2`. You will have
measured exploding and vanishing gradients time step by time step in a
small recurrent net, rescued a diverging training run with
:func:`microtape.clip_by_global_norm`, and watched the gradients with a
:class:`~microtape.GradientMonitor`, :term:`sparklines <sparkline>` and a histogram, next to
matplotlib plots.
"""

# %%
# Learning rate
# -------------
#
# Once more, the linear model: x = [1, 2, 3, 4], y = [1, 3, 5, 7]. ``fit``
# trains a fresh pair of variables with a given optimizer from
# ``mt.train`` and returns the loss at every step. ``opt.minimize(f,
# return_cost=True)`` is one step of ``variable_grads`` plus the update, and
# it returns the loss, which we read and dispose. ``opt.dispose()`` frees
# the optimizer's own state at the end.
#
# This chapter runs thousands of steps, so ``fit`` wraps its step in
# :func:`~microtape.function` (chapter 5, "The graph, as a program"): the
# first call records the step's primitives, forward, backward and the
# optimizer's update, and every later call replays them on plain lists, with
# no tensor, tape or scope made in between. The numbers are exactly those of
# the eager step, bit for bit; only the bookkeeping is gone, which makes each
# step about three times faster here. The loss is read with ``item()``
# *after* the call: inside it, a trace refuses to read values.
import math
import random
from collections.abc import Callable

import matplotlib.pyplot as plt

import microtape as mt
from microtape.book.figures import figure_words

x = mt.tensor1d([1, 2, 3, 4])
y = mt.tensor1d([1, 3, 5, 7])


def fit(opt: mt.train.Optimizer, steps: int = 100, scale: float = 1) -> list[float]:
    w, b = mt.variable(mt.scalar(0.0)), mt.variable(mt.scalar(0.0))

    @mt.function
    def step() -> mt.Tensor:
        return opt.minimize(lambda: ((x * w + b - y) ** 2).mean() * scale, return_cost=True)

    losses = []
    for _ in range(steps):
        cost = step()
        losses.append(cost.item() / scale)
        cost.dispose()
    opt.dispose()
    mt.dispose([w, b])
    return losses


print(f"{fit(mt.train.sgd(0.05))[-1]:.5f}")

# %%
# How large can the learning rate be? This loss is a quadratic with a
# constant Hessian, H = 2·[[mean x², mean x], [mean x, 1]] = [[15, 5], [5, 2]].
# Plain gradient descent converges only if lr < 2 / λ_max, where λ_max is
# the largest eigenvalue of H. We compute that limit first and then try
# learning rates on both sides of it.
trace, det = 15.0 + 2.0, 15.0 * 2.0 - 5.0 * 5.0
lam_max = (trace + math.sqrt(trace**2 - 4 * det)) / 2
print(f"lambda_max = {lam_max:.2f}, so lr must stay below {2 / lam_max:.4f}")

# %%
# We expect 0.01 to be slow, 0.05 to be steady, 0.11 (just under the limit)
# to be the fastest, and 0.125 (just over it) to blow up. Each curve
# also gets a console **sparkline**, :func:`microtape.sparkline`, on a log
# scale, so the same picture fits in a terminal or a log file.
rates = [0.01, 0.05, 0.11, 0.125]
sgd_runs = {lr: fit(mt.train.sgd(lr)) for lr in rates}

words = figure_words()
fig, ax = plt.subplots(figsize=(7, 4))
for lr, losses in sgd_runs.items():
    ax.semilogy(losses, label=f"sgd({lr})")
ax.set(xlabel=words["step"], ylabel=words["loss_log"], title=words["ch6_sgd_title"])
ax.legend()
fig.tight_layout()
for lr, losses in sgd_runs.items():
    print(f"lr={lr:<6} {mt.sparkline(losses[::2], log=True)}  last {losses[-1]:.3g}")

# %%
# Just under the limit, 0.11 wins. Just over it, at 0.125, the loss grows
# every step, because each update overshoots the minimum by more than it
# corrects. A loss that creeps upwards step after step is the signature of a
# learning rate that is too large. It is not a bug in the gradient: the
# gradient is right, and the step is too long.
#
# The converging curves have two phases: a quick drop and then a slow
# tail. The loss is a long, narrow valley. The steep direction (curvature
# λ_max = 16.7) is fixed within a few steps, and the shallow one (curvature
# about 0.3) takes the rest of the run. A learning rate small enough for the
# steep direction is about 55 times too small for the shallow one. This is the
# problem that momentum and the adaptive optimizers try to solve.
#
# Optimizers
# ----------
#
# The other optimizers change *how* a gradient becomes a step. Momentum
# accumulates past gradients. The adaptive ones divide each entry by a
# measure of its size: Adagrad by the root of the running *sum* of its
# squares, so its steps shrink like 1/√t; RMSProp and Adam by the root of a
# running *average* of the squares, and Adamax by a running maximum of the
# size. So a step moves each weight by about ``learning_rate`` whatever the
# gradient's scale (Adagrad's less and less). The settings below are tuned by
# hand for this problem. They are not universal defaults.
optimizers: dict[str, Callable[[], mt.train.Optimizer]] = {
    "sgd(0.05)": lambda: mt.train.sgd(0.05),
    "momentum(0.02, 0.9)": lambda: mt.train.momentum(0.02, 0.9),
    "adagrad(1.0)": lambda: mt.train.adagrad(1.0),
    "adadelta(0.05)": lambda: mt.train.adadelta(0.05),
    "adam(0.2)": lambda: mt.train.adam(0.2),
    "adamax(0.2)": lambda: mt.train.adamax(0.2),
    "rmsprop(0.05)": lambda: mt.train.rmsprop(0.05),
}
opt_runs = {name: fit(make()) for name, make in optimizers.items()}
for name, losses in opt_runs.items():
    print(f"{name:<20} {mt.sparkline(losses[::3], log=True)}  last {losses[-1]:.2e}")

# %%
fig, ax = plt.subplots(figsize=(7, 4.5))
for name, losses in opt_runs.items():
    dotted = name.startswith("adadelta")  # drawn on top of sgd(0.05): see below
    ax.semilogy(losses, ":" if dotted else "-", lw=2.5 if dotted else 1.5, label=name)
ax.set(xlabel=words["step"], ylabel=words["loss_log"], title=words["ch6_optimizers_title"])
ax.legend(fontsize=8, ncol=2)
fig.tight_layout()

# %%
# Momentum wins here, with the wobble that is typical of it. Adagrad,
# RMSProp and Adam come close behind, and Adamax is slow at this learning
# rate. One line hides another. The dotted
# ``adadelta(0.05)`` curve lies exactly on top of ``sgd(0.05)``:
print(opt_runs["adadelta(0.05)"] == opt_runs["sgd(0.05)"])

# %%
# That is not a plotting accident. TF.js's Adadelta divides by the
# *previous* running average of g², and microtape copies TF.js's update
# rule. Both of its running averages start at zero, and that keeps them
# equal for ever, so the ratio that should adapt the step is always 1 and the
# update is plain ``learning_rate * g``. Keras and TensorFlow for Python use
# the updated average, which breaks the tie. When two supposedly different
# algorithms draw identical curves, read the update rule.
#
# One more difference that matters when gradients misbehave: multiply the
# loss by 100 and every gradient grows 100 times. SGD's steps grow with it,
# while Adam's stay the same size.
print("loss after 30 steps    loss x1    loss x100")
for name in ("sgd(0.05)", "adam(0.2)"):
    plain = fit(optimizers[name](), steps=30)
    scaled = fit(optimizers[name](), steps=30, scale=100.0)
    print(f"{name:<20} {plain[-1]:10.3g} {scaled[-1]:12.3g}")

# %%
# SGD diverges once the gradients are 100 times larger. Adam does not notice.
# Adaptive optimizers are therefore more forgiving of badly scaled gradients,
# but they also *hide* them. A gradient a thousand times too large still
# gives a normal-looking step, so you have to look at the gradients
# themselves, which is what the rest of this chapter does.
#
# Exploding and vanishing gradients in a recurrent net
# ----------------------------------------------------
#
# A recurrent net applies the same weights at every time step:
# h_t = tanh(h_{t−1}·W + x_t·U). The gradient that reaches step t has been
# multiplied by the transposed Jacobian of every later step, diag(1 − h²)·Wᵀ.
# Twenty such factors, each a little above or below 1 in size, make a number
# that is huge or tiny. We build a batch of 16 random sequences of length 20,
# with 8 hidden units, and let the net predict the *first* input from the
# last state, a task that needs gradients to travel back all 20 steps.
T, N_HIDDEN, BATCH = 20, 8, 16
rng = random.Random(0)
columns = [[rng.uniform(-1.0, 1.0) for _ in range(BATCH)] for _ in range(T)]
inputs = [mt.tensor(col, shape=(BATCH, 1)) for col in columns]
target = inputs[0]

scale_w = 1 / math.sqrt(N_HIDDEN)
base_w = mt.random_normal((N_HIDDEN, N_HIDDEN), stddev=scale_w, seed=2)
base_u = mt.random_normal((1, N_HIDDEN), seed=3)
base_v = mt.random_normal((N_HIDDEN, 1), stddev=scale_w, seed=4)


Tensor = mt.Tensor


def run_rnn(w: Tensor, u: Tensor, v: Tensor) -> tuple[Tensor, list[Tensor]]:
    """Unroll the net over the sequence; return the loss and every hidden state."""
    h = mt.zeros((BATCH, N_HIDDEN))
    states = []
    for x_t in inputs:
        h = mt.tanh(h @ w + x_t @ u)
        states.append(h)
    return ((h @ v - target) ** 2).mean(), states


# %%
# ``gain`` scales the recurrent weights W. To see the product of Jacobians
# clearly, we first keep the input weights small (``base_u * 0.01``), so
# tanh works near its linear part, where 1 − h² ≈ 1. A tape gives the
# gradient with respect to every hidden state in one call, and we take each
# one's norm:


def norm(t: mt.Tensor) -> float:
    return math.sqrt(math.fsum(v * v for v in t.data_sync()))


def state_grad_norms(gain: float, input_scale: float = 0.01) -> list[float]:
    def body() -> list[float]:
        w, u = base_w * gain, base_u * input_scale
        with mt.GradientTape() as tape:
            tape.watch([w, u])
            loss, states = run_rnn(w, u, base_v)
        grads = tape.gradient(loss, states)
        return [norm(g) if g is not None else 0.0 for g in grads]

    return mt.tidy(body)


# %%
# We expect gain 0.5 to shrink the gradient by about half at each step back
# in time (vanishing), gain 2 to grow it (exploding), and gain 1 to sit in
# between. A fourth run keeps gain 2 but uses full-size inputs, which pushes
# tanh into saturation.
profiles = {f"gain {g}": state_grad_norms(g) for g in (0.5, 1.0, 2.0)}
profiles["gain 2.0, loud inputs"] = state_grad_norms(2.0, input_scale=1.0)
for name, norms in profiles.items():
    line = mt.sparkline(norms, log=True)
    print(f"{name:<22} {line}  t=1: {norms[0]:.1e}  t=20: {norms[-1]:.1e}")

# %%
fig, ax = plt.subplots(figsize=(7, 4))
for name, norms in profiles.items():
    style = "--" if "loud" in name else "-o"
    gain = name.split()[1].rstrip(",")
    label = words["ch6_gain_loud" if "loud" in name else "ch6_gain"].format(gain=gain)
    ax.semilogy(range(1, T + 1), norms, style, markersize=3, label=label)
ax.set(xlabel=words["ch6_rnn_xlabel"], ylabel=words["ch6_rnn_ylabel"], title=words["ch6_rnn_title"])
ax.legend()
fig.tight_layout()

# %%
# Read the plot from right to left, as the backward pass does. At gain 0.5 the
# gradient loses five orders of magnitude on its way to t = 1, so the first
# inputs get almost no learning signal. That is the vanishing gradient. At
# gain 2 it gains almost three orders of magnitude, and the early steps would
# dominate every update. That is the exploding gradient. With loud inputs,
# saturated units (h ≈ ±1, so 1 − h² ≈ 0) damp the growth, which is also why
# a net that is *too* saturated starts to vanish.
#
# Clipping
# --------
#
# We take the exploding case, gain 2, and look at the gradients of W and U.
quiet = [base_w * 2.0, base_u * 0.01]
raw = mt.grads(lambda w, u: run_rnn(w, u, base_v)[0])(quiet)
dw, du = raw
print(f"|dW| = {norm(dw):.3g}, |dU| = {norm(du):.3g}")

# %%
# The norm of dU is more than ten times that of dW. A console histogram,
# :func:`microtape.histogram`, shows how the 64 entries of dW are spread:
# most are small, with a tail reaching almost −2.
print(mt.histogram(dw, bins=6, width=24))

# %%
# The same spread as a plot, for both gradients. The dotted lines mark ±1,
# the range that ``clip_by_value(-1, 1)`` keeps:
fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
for ax, (name, g) in zip(axes, (("dW", dw), ("dU", du))):
    ax.hist(g.data_sync(), bins=20, color="C0" if name == "dW" else "C3")
    for edge in (-1.0, 1.0):
        ax.axvline(edge, color="grey", linestyle=":")
    ax.set_title(words["ch6_entries"].format(size=g.size, name=name))
    ax.set_xlabel(words["ch6_value"])
axes[0].set_ylabel(words["ch6_count"])
fig.suptitle(words["ch6_spread_title"])
fig.tight_layout()

# %%
# The Russian text's form, ``grads[w].clipByValue(-1, 1)``, works as a method
# here too, as ``clip_by_value``. It clips each entry on its own, so it
# changes only the entries outside ±1. For dW those are a few entries in the
# tail. For dU they are all of them:
for name, g in (("dW", dw), ("dU", du)):
    outside = sum(abs(v) > 1 for v in g.data_sync())
    print(f"{name}: {outside} of {g.size} entries outside [-1, 1]")
du.clip_by_value(-1, 1)

# %%
# Every entry of dU became ±1, so only its signs survive. Clipping each
# entry changes the *direction* of the gradient, and not just its length.
# ``mt.clip_by_norm(t, c)`` rescales a whole tensor to norm at most c. TF.js
# has no ``clipByNorm``, although the Russian text mentions one: this is
# TensorFlow for Python's ``tf.clip_by_norm``.
# ``mt.clip_by_global_norm(ts, c)`` rescales several tensors *together* and
# also returns their joint norm. We compare all three by the joint norm of
# (dW, dU) and by the cosine between the clipped and the raw gradient, where
# 1 means the direction is unchanged.


def joint(ts: list[mt.Tensor]) -> list[float]:
    return [v for t in ts for v in t.data_sync()]


def compare(name: str, ts: list[mt.Tensor]) -> None:
    a, b = joint(ts), joint(list(raw))
    cosine = sum(p * q for p, q in zip(a, b)) / (math.hypot(*a) * math.hypot(*b))
    print(f"{name:<22} joint norm {math.hypot(*a):8.3f}   cosine with raw {cosine:.3f}")


compare("raw", list(raw))
compare("clip_by_value(-1, 1)", [g.clip_by_value(-1, 1) for g in raw])
compare("clip_by_norm(1)", [mt.clip_by_norm(g, 1.0) for g in raw])
clipped, global_norm = mt.clip_by_global_norm(list(raw), 1.0)
compare("clip_by_global_norm(1)", clipped)

# %%
# Only ``clip_by_global_norm`` keeps the direction exactly (cosine 1.000).
# The other two shorten the huge dU much more than dW, and so change which
# way the step points. All three bound the step, and that is what matters
# most when a gradient explodes. ``global_norm`` is the unclipped norm, a
# good number to log:
global_norm

# %%
# Rescuing a diverging run
# ------------------------
#
# Now we train the net for real, with full-size inputs, gain 2 and plain SGD
# at a learning rate of 0.3, once as is and once with the global norm clipped
# to 1. A :class:`~microtape.GradientMonitor` records the gradient norms at
# every step, *before* clipping, and flags exploding steps (a global norm
# above 1000, or growth of more than 100 times within 5 steps) and vanishing
# ones (a norm below 1e-7).


def train_rnn(
    label: str, clip: float | None, steps: int = 60
) -> tuple[list[float], mt.GradientMonitor, list[mt.Variable]]:
    params = [
        mt.variable(base_w * 2.0, name=f"ch06_{label}_W"),
        mt.variable(base_u, name=f"ch06_{label}_U"),
        mt.variable(base_v, name=f"ch06_{label}_V"),
    ]
    opt, monitor, losses = mt.train.sgd(0.3), mt.GradientMonitor(), []

    def step() -> float:
        value, grads = mt.variable_grads(lambda: run_rnn(*params)[0])
        monitor.record(grads)
        gs: list[mt.Tensor | None] = [grads[p] for p in params]
        if clip is not None:
            gs, _ = mt.clip_by_global_norm(gs, clip)
        opt.apply_gradients(list(zip(gs, params)))
        return value.item()

    for _ in range(steps):
        losses.append(mt.tidy(step))
    opt.dispose()
    return losses, monitor, params


plain_losses, plain_monitor, plain_params = train_rnn("plain", clip=None)
clip_losses, clip_monitor, clip_params = train_rnn("clipped", clip=1.0)
mt.dispose(clip_params)
for name, losses, monitor in (("without clipping", plain_losses, plain_monitor),
                               ("with clipping", clip_losses, clip_monitor)):
    print(f"{name:<17} final loss {losses[-1]:.3g}, {len(monitor.flags)} flags")

# %%
fig, (ax_loss, ax_norm) = plt.subplots(1, 2, figsize=(10, 4))
ax_loss.semilogy(plain_losses, label=words["ch6_no_clipping"])
ax_loss.semilogy(clip_losses, label="clip_by_global_norm(1)")
ax_loss.set(xlabel=words["step"], ylabel=words["loss_log"], title=words["ch6_training_loss"])
ax_norm.semilogy(plain_monitor.global_norms, label=words["ch6_no_clipping"])
ax_norm.semilogy(clip_monitor.global_norms, label="clip_by_global_norm(1)")
ax_norm.set(xlabel=words["step"], ylabel=words["ch6_norm_ylabel"], title=words["ch6_norm_title"])
ax_loss.legend()
fig.suptitle(words["ch6_clip_title"])
fig.tight_layout()

# %%
# Without clipping, the run goes well for a few steps, then one large
# gradient throws the weights far away, and the loss runs off by many orders
# of magnitude. With clipping, no single step can be longer than 0.3 × 1, and
# the run stays in the region where it can learn. The console view tells the same story. Each row of
# ``report()`` is a log-scale sparkline of one variable's gradient norm over
# the 60 steps, followed by the first flag (when the trouble started) and the
# latest ones:
print(plain_monitor.report(width=60))

# %%
# The last flags are *vanishing* ones for W and U. After the blow-up, every
# hidden unit is saturated at ±1, so 1 − h² = 0 and no gradient gets through
# any more, while the gradient of the readout V keeps growing. An exploding
# gradient often leaves a dead network behind, and the monitor caught both
# problems. ``monitor.flags`` holds every flag, so the first ones show when
# the trouble started:
for flag in plain_monitor.flags[:3]:
    print(flag)

# %%
# Why does the loss then grow by the same factor at every step? With every
# hidden unit saturated, the last hidden state ``h`` no longer depends on W
# or U, so the loss is a quadratic in the readout V alone, mean((hV − y)²),
# with the constant Hessian (2/16)·hᵀh. That is the situation of the
# learning-rate section above: along the steepest direction, each step of
# plain SGD multiplies the error by (1 − lr·λ_max), and so the loss by
# (1 − lr·λ_max)². We measure all three numbers: the saturation, λ_max (by
# power iteration: multiply a vector by the Hessian until its direction
# settles), and the loss's growth over the last step.
h_last = run_rnn(*plain_params)[1][-1]
saturated = sum(1 for v in h_last.data_sync() if abs(v) > 0.999)
hessian = (h_last.T @ h_last) * (2.0 / BATCH)
direction = mt.ones((N_HIDDEN, 1))
for _ in range(50):
    direction = hessian @ direction
    direction = direction / norm(direction)
lam_rnn = (direction.T @ hessian @ direction).item()
print(f"{saturated} of {h_last.size} hidden entries have |h| > 0.999")
print(f"lambda_max = {lam_rnn:.2f}, above 2 / 0.3 = {2 / 0.3:.2f}: (1 - 0.3 * lambda_max)^2 = {(1 - 0.3 * lam_rnn) ** 2:.2f}")
print(f"the loss grew by {plain_losses[-1] / plain_losses[-2]:.2f} over the last step")
mt.dispose(plain_params)

# %%
# The run diverges for the reason the learning-rate section showed, not
# because the loss and the gradients somehow feed each other: once the net
# is saturated, 0.3 is simply too large a step for the readout's curvature.
# Clipping bounds each step, which is why it rescues the run.
#
# The clipped run raised no flag at all:
print(clip_monitor.report(width=60))

# %%
# .. note:: In TF.js you would clip inside a custom training step, because
#    ``optimizer.minimize`` has no clipping option. The order is the one used
#    above: ``variableGrads``, then ``clipByValue`` (or a global-norm clip
#    written by hand), then ``applyGradients``. Keras's ``clipnorm`` and
#    ``clipvalue`` optimizer arguments do the same thing internally.
#
# What we built
# -------------
#
# We now have a feel for how the learning rate and the optimizer shape the
# updates: a hard stability limit for SGD, adaptive optimizers that ignore
# gradient scale (and so hide it), and a TF.js Adadelta that is secretly SGD.
# We measured vanishing and exploding gradients at every time step of a
# recurrent net, compared three kinds of clipping, rescued a diverging run
# with ``clip_by_global_norm``, and watched it all in plots and in the
# console. Next: the analysis tools, ``memory``, ``profile`` and
# ``next_frame``, and how they fit into one debugging workflow.
