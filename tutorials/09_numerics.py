"""
Numerics: stable losses, modes and precision
============================================

This chapter goes beyond the Russian text. Read it after :chapter:`4`: it
takes the checks of that chapter one level deeper. First the other half
of automatic differentiation, *forward mode*, and when it is the cheaper
half. Then two checks that need no finite-difference step at all, or
that survive a bad one: the dot-product test and the Taylor test. Then the
stable forms of the losses where real NaNs come from: log-sum-exp,
cross-entropy on logits, ``softplus`` and the double ``where``. Last, what
float32, the only float that TF.js has, does to a gradient check.

Every number on this page is computed while the page is built, timings
included, so yours will differ a little.
"""

# %%
# Two ways through the chain rule
# -------------------------------
#
# A function f from n inputs to m outputs has an m × n Jacobian J. Reverse
# mode, everything the book has used so far, computes a *vector-Jacobian
# product* uᵀJ: one combination of the rows of J per backward pass. Forward
# mode computes a *Jacobian-vector product* J v: one combination of the
# columns, the rate at which every output moves when the input moves along
# the direction v. :func:`microtape.jvp` takes the function, the point and the
# direction (``jax.jvp`` in JAX). For f(a, b) = (a·b, sin a, b²) at a = 2,
# b = 3, moving along v = (1, 0) changes the outputs at the rates
# (b, cos a, 0) = (3, −0.416, 0):
import math
import struct
from array import array
from collections.abc import Callable

import microtape as mt


def three(a: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
    return mt.stack([a * b, mt.sin(a), b * b])


value, rate = mt.jvp(three, [2.0, 3.0], [1.0, 0.0])
print(value, rate)

# %%
# microtape has no forward-mode rule for any op. It gets J v from the VJPs
# it already has, with a trick worth knowing. The VJP u ↦ Jᵀu is *linear* in
# the cotangent u. So the gradient of ⟨Jᵀu, v⟩ with respect to u, a second
# reverse pass over the ops of the first one, is exactly J v. Every
# derivative still comes from the one VJP printed beside each op, so a
# student's edit to a rule changes the forward mode too.
#
# :func:`microtape.linearize` keeps that recording: ``f`` runs once, and the
# function it returns gives J v for any new v without calling ``f`` again
# (``jax.linearize``). We count the calls:
calls: list[int] = []


def counted(a: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
    calls.append(1)
    return three(a, b)


value, three_jvp = mt.linearize(counted, [2.0, 3.0])
print(three_jvp([1.0, 0.0]), three_jvp([0.0, 1.0]), f"{len(calls)} call of f")

# %%
# The two columns are the whole Jacobian, since f has two inputs:
# ∂/∂a = (b, cos a, 0) and ∂/∂b = (a, 0, 2b).
#
# :func:`microtape.hvp` is the Hessian-vector product H v of a scalar
# function: the gradient of ⟨∇f, v⟩, reverse mode over reverse mode
# (``torch.autograd.functional.hvp`` in PyTorch). Newton-type optimizers and
# curvature estimates need H v, and never the whole n × n matrix H. For
# f(x) = Σ xᵢ³ + (Σ xᵢ)²/2 the Hessian is [[6x₀ + 1, 1], [1, 6x₁ + 1]], so
# at x = (1, 2) and v = (1, 0) we expect (7, 1):


def cubic(x: mt.Tensor) -> mt.Tensor:
    return (x**3).sum() + x.sum() ** 2 / 2.0


value, (curvature,) = mt.hvp(cubic, [mt.tensor([1.0, 2.0])], [mt.tensor([1.0, 0.0])])
curvature

# %%
# Which mode is cheaper
# ---------------------
#
# To get the whole Jacobian, reverse mode needs one pass per *row* (m
# passes, with u the unit vectors), and forward mode one per *column* (n
# passes). So the shape of J decides. A loss has one output and millions of
# inputs, a *wide* Jacobian, which is why training uses reverse mode. A
# function with few inputs and many outputs, say a curve or an image
# rendered from a handful of parameters, has a *tall* one.
#
# We measure both modes on a wide function (48 inputs, 2 outputs) and a
# tall one (2 inputs, 48 outputs), counting the ops each runs with
# :func:`microtape.profile`. We count rather than time: a count is the same
# on every machine and in every build of this page, a timing is not.
WIDE, NARROW = 48, 2
w_wide = mt.random_normal((NARROW, WIDE), seed=1)
w_tall = mt.random_normal((WIDE, NARROW), seed=2)


def wide(x: mt.Tensor) -> mt.Tensor:
    return mt.tanh(w_wide @ x)


def tall(x: mt.Tensor) -> mt.Tensor:
    return mt.tanh(w_tall @ x)


def unit(i: int, n: int) -> mt.Tensor:
    return mt.tensor([1.0 if j == i else 0.0 for j in range(n)])


def by_rows(f: Callable[[mt.Tensor], mt.Tensor], x: mt.Tensor, m: int) -> list[mt.Tensor]:
    """Reverse mode: row i of J is the gradient of ⟨eᵢ, f(x)⟩."""
    units = [unit(i, m) for i in range(m)]
    return [mt.grad(lambda t: (f(t) * e).sum())(x) for e in units]


def by_columns(f: Callable[[mt.Tensor], mt.Tensor], x: mt.Tensor, n: int) -> list[mt.Tensor]:
    """Forward mode: column j of J is J eⱼ, from one linearization."""
    units = [unit(j, n) for j in range(n)]
    _, f_jvp = mt.linearize(f, [x])
    return [f_jvp([e]) for e in units]


print(f"{'Jacobian':<16} {'mode':<8} {'passes':>6} {'ops':>5} {'ops/pass':>8}")
for label, f, n, m in (("wide (2 × 48)", wide, WIDE, NARROW), ("tall (48 × 2)", tall, NARROW, WIDE)):
    x_in = mt.random_normal((n,), seed=3)
    for mode, build, passes in (("reverse", by_rows, m), ("forward", by_columns, n)):
        info = mt.profile(lambda: mt.tidy(lambda: build(f, x_in, passes)))
        ops = len(info.kernels)
        print(f"{label:<16} {mode:<8} {passes:>6} {ops:>5} {ops / passes:>8.1f}")

# %%
# On the wide Jacobian reverse mode wins by more than ten times, and on the
# tall one forward mode wins by about as much. One pass of either mode costs
# about the same number of ops: a reverse pass here runs f and its backward
# pass, and a forward pass replays the recorded backward pass once more, in
# reverse. So the number of passes decides, and the rule of thumb follows: go
# forward when the inputs are few, backward when the outputs are few.
# Frameworks with a JVP rule per op (JAX, ``torch.func``) run forward mode
# alongside f itself instead, with the same result.

# %%
# Stable losses
# -------------
#
# :chapter:`4` listed microtape's stable ops. Here each one is the fix of a
# formula that is right on paper and fails in floating point. We show each
# failing, in its value or its gradient, then fixed.
#
# Log-sum-exp
# ~~~~~~~~~~~
#
# log Σ exp(zᵢ) is the log of a softmax's denominator. Written as it reads,
# exp overflows to ``inf`` for logits above about 709, and the gradient,
# exp(zᵢ)/Σ exp(z), becomes ∞/∞ = NaN. We expect 1000.40 and the softmax of
# the logits, (0.33, 0.67), and get neither:
big = mt.tensor([999.3, 1000.0])


def naive_lse(z: mt.Tensor) -> mt.Tensor:
    return mt.log(mt.exp(z).sum())


print(mt.value_and_grad(naive_lse)(big))

# %%
# ``mode="trace"`` of ``detect_anomaly`` names the op where the first Inf
# appeared and follows it to the NaN of the gradient:
with mt.detect_anomaly(mode="trace") as lse_trace:
    mt.grad(naive_lse)(big)
first = lse_trace.first
assert first is not None
print(first.op, first.phase, first.inputs)

# %%
# The fix shifts by the largest logit c first: log Σ exp(zᵢ) = c + log Σ
# exp(zᵢ − c). Now every exponent is at most 0, and the largest term is 1,
# so nothing overflows and nothing important underflows. Subtracting c does
# not change the gradient, because the shifted sum's gradient is the same
# softmax. :func:`microtape.logsumexp` does this inside one op. The shift
# can also be written by hand, with ``stop_gradient`` on c since it is a
# constant:


def shifted_lse(z: mt.Tensor) -> mt.Tensor:
    c = mt.stop_gradient(z.max())
    return c + mt.log(mt.exp(z - c).sum())


for name, fn in (("logsumexp", mt.logsumexp), ("shifted by hand", shifted_lse)):
    lse, softmax = mt.value_and_grad(fn)(big)
    print(f"{name:<16} {lse.item():.4f}  gradient {softmax}")

# %%
# Cross-entropy on logits, not on probabilities
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The cross-entropy of a softmax, −Σ yᵢ log pᵢ, fails the same way one step
# later. A logit 40 below the label's makes p for that class about 4e-18.
# That is still a number, but 800 below gives exactly 0.0, log 0 is −∞, and
# the gradient is NaN. :chapter:`7` traced this NaN. Here we check the
# gradient, which for any logits must be softmax − labels:
logits = mt.tensor([[2.0, -800.0]])
labels = mt.tensor([[0.0, 1.0]])


def from_probs(z: mt.Tensor) -> mt.Tensor:
    return -(labels * mt.log(mt.softmax(z))).sum()


def from_logits(z: mt.Tensor) -> mt.Tensor:
    return mt.softmax_cross_entropy(labels, z)


for name, fn in (("log(softmax(z))", from_probs), ("softmax_cross_entropy", from_logits)):
    ce, ce_grad = mt.value_and_grad(fn)(logits)
    print(f"{name:<22} loss {ce.item():8.2f}  gradient {ce_grad}")

# %%
# On logits, the log of the softmax is z − logsumexp(z), a subtraction
# that never takes a log of 0. The loss is 802, as large as it should be,
# and the gradient (1, −1) is softmax − labels. This is why every framework's
# loss takes logits (``from_logits=True`` in Keras).
#
# Binary labels have the same trap with the sigmoid. The loss
# −y log σ(z) − (1 − y) log(1 − σ(z)) needs 1 − σ(z), which is exactly 0.0 in
# float64 once z is above about 37. With y = 0 at z = 40, the loss should be
# about 40 and its slope about 1:
z40 = mt.tensor([40.0])
zero_label = mt.tensor([0.0])


def bce_from_probs(z: mt.Tensor) -> mt.Tensor:
    p = mt.sigmoid(z)
    return -(zero_label * mt.log(p) + (1.0 - zero_label) * mt.log(1.0 - p)).sum()


def bce_from_logits(z: mt.Tensor) -> mt.Tensor:
    return mt.sigmoid_cross_entropy(zero_label, z)


for name, fn in (("log(1 - sigmoid(z))", bce_from_probs), ("sigmoid_cross_entropy", bce_from_logits)):
    bce, bce_grad = mt.value_and_grad(fn)(z40)
    print(f"{name:<22} loss {bce.item()}  gradient {bce_grad}")

# %%
# The stable form rewrites the loss on z alone: max(z, 0) − z·y +
# log(1 + exp(−|z|)). The exponent is never positive, so nothing
# overflows, and the ``log1p`` of the last term keeps its digits when
# exp(−|z|) is tiny.
#
# ``softplus`` and ``log1p``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# That last term is softplus, log(1 + eˣ), the smooth relu. Written as it
# reads, it fails at both ends: for x = 800, eˣ overflows and the value is
# ``inf``; for x = −40, 1 + eˣ rounds to exactly 1 and the value to 0,
# though the true value, about 4.2e-18, is not 0. We print the value and the
# gradient at both points, first naive, then with the stable op:
ends = mt.tensor([800.0, -40.0])


def naive_softplus(x: mt.Tensor) -> mt.Tensor:
    return mt.log(1.0 + mt.exp(x))


print("naive   ", naive_softplus(ends), mt.grad(lambda x: naive_softplus(x).sum())(ends))
print("softplus", mt.softplus(ends), mt.grad(lambda x: mt.softplus(x).sum())(ends))

# %%
# The naive gradient is NaN at 800 (∞/∞), and at −40 it is the right
# 4.2e-18 only by luck: its value there is 0 instead of 4.2e-18, a relative
# error of 100%. :func:`microtape.softplus` computes max(x, 0) +
# log1p(exp(−|x|)), right at both ends. The same care is in
# :func:`microtape.log1p` itself: log(1 + x) for a tiny x first rounds
# 1 + x, and :func:`microtape.expm1` does it for eˣ − 1:
tiny = mt.tensor([1e-10])
print(f"log(1 + x) {mt.log(1.0 + tiny).item():.10e}   log1p(x) {mt.log1p(tiny).item():.10e}")
print(f"exp(x) - 1 {(mt.exp(tiny) - 1.0).item():.10e}   expm1(x) {mt.expm1(tiny).item():.10e}")

# %%
# The double ``where``
# ~~~~~~~~~~~~~~~~~~~~
#
# The entropy term x·log x is 0 at x = 0 (its limit), so a guard picks 0.0
# there with ``where``. The value is then right, yet the gradient is NaN.
# The reason is :chapter:`4`'s: ``where`` sends the cotangent 0 to the branch
# it did not pick, and the slope of x·log x at 0 is log 0 + 1 = −∞,
# so the branch's gradient is 0 · (−∞) = NaN. We expect the gradient
# log x + 1 at x = 0.5, and 0 where the guard holds (any finite slope would
# do, since the guard makes the value constant):
probs = mt.tensor([0.0, 0.5])


def entropy_term(x: mt.Tensor) -> mt.Tensor:
    return mt.where(x.greater(0.0), x * mt.log(x), mt.zeros_like(x)).sum()


print(mt.value_and_grad(entropy_term)(probs))
with mt.detect_anomaly(mode="trace") as entropy_trace:
    mt.grad(entropy_term)(probs)
print(entropy_trace.hint)

# %%
# The hint above is the fix, written into our own line: a second ``where``
# feeds ``log`` a harmless input (1.0) at the entries the first one throws
# away. Nothing infinite is made, so nothing is multiplied by 0, and the value
# is unchanged where it counts:


def entropy_term_fixed(x: mt.Tensor) -> mt.Tensor:
    positive = x.greater(0.0)
    return mt.where(positive, x * mt.log(mt.where(positive, x, mt.ones_like(x))), mt.zeros_like(x)).sum()


with mt.detect_anomaly():
    print(mt.value_and_grad(entropy_term_fixed)(probs))

# %%
# float32: what TF.js computes in
# -------------------------------
#
# microtape's tensors hold Python floats, which are float64: 53 bits, about
# 16 digits. TF.js has no float64 at all. Its tensors are float32: 24 bits,
# about 7 digits. The spacing of numbers near 1 is ε₆₄ = 2⁻⁵² ≈ 2.2e-16 for
# float64 and ε₃₂ = 2⁻²³ ≈ 1.2e-7 for float32. Python can round a number
# to float32 for us, either through ``struct`` or through ``array('f')``
# (both store 4-byte floats):
eps32 = 2.0**-23


def to_f32(v: float) -> float:
    """The float32 nearest to v, back as a Python float."""
    return array("f", [v])[0]


packed = struct.unpack("<f", struct.pack("<f", 0.1))[0]
print(f"0.1 as float32: {to_f32(0.1)!r} (struct: {packed!r})")
print(f"eps32 {eps32:.3e}   sqrt(eps32) {math.sqrt(eps32):.3e}   cbrt(eps32) {eps32 ** (1 / 3):.3e}")

# %%
# Now the central difference of exp at 1 from :chapter:`4`, computed twice:
# once in float64, and once as a float32 framework would, with the point,
# the step and every value rounded to float32. The rounding error of
# f(x + h) − f(x − h) is about ε times the size of f, and dividing by 2h multiplies it by
# 1/2h. So we expect float32's error to stay 10⁹ times larger at every
# small step:


def exp32(v: float) -> float:
    return to_f32(math.exp(to_f32(v)))


def central(f: Callable[[float], float], x0: float, h: float) -> float:
    return (f(x0 + h) - f(x0 - h)) / (2 * h)


fd_steps = [10.0 ** (-k / 4) for k in range(4, 41)]
err64 = [abs(central(math.exp, 1.0, h) - math.e) / math.e for h in fd_steps]
err32 = [abs(central(exp32, 1.0, to_f32(h)) - math.e) / math.e for h in fd_steps]
print(f"{'h':>8} {'float64':>10} {'float32':>10}")
for h in (1e-2, 1e-3, 3.5e-4, 1e-4, 1e-6):
    h32 = to_f32(h)
    e64 = abs(central(math.exp, 1.0, h) - math.e) / math.e
    e32 = abs(central(exp32, 1.0, h32) - math.e) / math.e
    print(f"{h:8.1e} {e64:10.2e} {e32:10.2e}")
best32 = min(range(len(fd_steps)), key=lambda i: err32[i])
print(f"float32 is best at h = {fd_steps[best32]:.1e}, with a relative error of {err32[best32]:.1e}")

# %%
import matplotlib.pyplot as plt

from microtape.book.figures import figure_words

words = figure_words()
fig, ax = plt.subplots(figsize=(6.4, 4.2))
ax.loglog(fd_steps, err64, ".-", label=words["ch9_float64"])
ax.loglog(fd_steps, err32, ".-", label=words["ch9_float32"])
ax.axvline(math.sqrt(eps32), color="C1", linestyle=":")
ax.axvline(1e-6, color="C0", linestyle=":")
ax.set_xlabel(words["ch4_xlabel"])
ax.set_ylabel(words["ch9_fd_ylabel"])
ax.set_title(words["ch9_fd_title"])
ax.legend(loc="center left")
fig.tight_layout()

# %%
# The dotted lines are the two steps that matter. At microtape's default,
# h = 1e-6, float64 is accurate to about ten digits, while float32's
# difference is off by several percent. The error of float32 is lowest
# near h = ∛ε₃₂ ≈ 5e-3, where rounding (ε/h) and truncation (h²) balance, and
# even there it stays far above float64's error at its default step. For a function less kind than exp, with
# larger values or a larger third derivative, the floor is higher. So a
# float32 gradient check needs
#
# - a step around **1e-3**, between √ε₃₂ ≈ 3.5e-4 and ∛ε₃₂ ≈ 5e-3, not 1e-6,
#   and
# - a relative tolerance of about **√ε₃₂ ≈ 3.5e-4**, not the 1e-4 that is
#   safe in float64.
#
# This is why gradient checks fail for TF.js users where the same check
# passes here. A finite-difference check copied from a float64 tutorial,
# with h = 1e-6 and a tight tolerance, fails on TF.js even when every
# gradient is right, because the *numeric* side is noise. Its users then hunt
# for a bug that is not there. (Some WebGL devices even compute in 16-bit
# floats, worse again.) A check written for float32 uses the step and
# tolerance above, and then a failure means something.
#
# Why √ε₃₂ for the tolerance? At the step h = √ε₃₂, the rounding term ε/h is
# itself √ε₃₂ (for a function whose value and slope are of the same size,
# as exp's are), so a check that may use any step from √ε₃₂ up must allow an
# error of that size. Here are the steps and tolerances as pass or fail of
# the rule ``|numeric − exact| ≤ rtol·|exact|``, for exp at 1:
for h, rtol in ((1e-6, 1e-4), (3.5e-4, 1e-4), (3.5e-4, 3.5e-4), (1e-3, 3.5e-4)):
    rel = abs(central(exp32, 1.0, to_f32(h)) - math.e) / math.e
    print(f"float32, h={h:.1e}, rtol={rtol:.1e}: rel err {rel:.1e} -> {'pass' if rel <= rtol else 'FAIL'}")

# %%
# Checks that need no step: the dot-product test
# ----------------------------------------------
#
# Every check so far compares the gradient with a finite difference, and so
# depends on a good step. The *dot-product test* needs none for its
# main part. For any u and v,
#
# .. math:: \langle u, J v \rangle = \langle J^\top u, v \rangle
#
# holds exactly, up to rounding: the left side is forward mode, the right
# side is reverse mode. Scientific codes that write their adjoints (VJPs)
# by hand run it on every one. In microtape forward mode is made from the
# VJP, so what the test checks is the VJP's linearity: a VJP must be Jᵀu
# for *every* cotangent u, not only for the cotangent that the usual check
# sends it.
#
# Here is the bug it catches. A hand-written VJP of x² forgets to multiply
# by ``dy`` and returns the local slope 2x alone. ``check_grads`` on the
# loss ``op(x).sum()`` passes, because the sum sends the cotangent
# ``dy = 1``, and 1 · 2x = 2x:
GradFn = Callable[[mt.Tensor], mt.Tensor]


def square_forgot_dy(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    return t * t, lambda dy: 2.0 * t  # BUG: should be dy * 2.0 * t


square_op = mt.custom_grad(square_forgot_dy)
x_dot = mt.tensor([0.5, -1.3, 2.0])
mt.check_grads(lambda t: square_op(t).sum(), [x_dot]).ok

# %%
# The dot-product test at a random u and v: one JVP, one VJP and two
# inner products, whatever the size of x. We also compute the left side
# with a directional central difference, which checks the forward pass
# against the VJP, and costs two more calls of f:


def dot_test(f: Callable[[mt.Tensor], mt.Tensor], x: mt.Tensor, seed: int) -> tuple[float, float, float]:
    u = mt.random_normal(f(x).shape, seed=seed)
    v = mt.random_normal(x.shape, seed=seed + 1)
    _, jv = mt.jvp(f, [x], [v])
    jtu = mt.grad(lambda t: (f(t) * u).sum())(x)
    h = 1e-6
    fd = (f(x + v * h) - f(x - v * h)) / (2 * h)
    return (u * jv).sum().item(), (jtu * v).sum().item(), (u * fd).sum().item()


left, right, numeric = dot_test(square_op, x_dot, seed=7)
print(f"<u, Jv> {left:.6f}   <J^T u, v> {right:.6f}   <u, finite difference> {numeric:.6f}")

# %%
# All three should agree, and none do. The JVP built from this VJP is 0,
# since the VJP does not depend on its cotangent at all. With ``dy`` back
# in the rule, the test agrees to the last digits:


def square_fixed(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    return t * t, lambda dy: dy * 2.0 * t


left, right, numeric = dot_test(mt.custom_grad(square_fixed), x_dot, seed=7)
print(f"<u, Jv> {left:.6f}   <J^T u, v> {right:.6f}   <u, finite difference> {numeric:.6f}")

# %%
# ``check_grads`` would have caught it too, if asked about the vector
# ``op(x)`` rather than its sum. But that costs a backward pass per output
# entry and two calls of f per input entry. The dot-product test costs the
# same for a million entries as for three.
#
# ``check_grads`` runs both tests itself when asked for the forward mode,
# as JAX's ``check_grads(modes=["fwd", "rev"])`` does. With
# ``modes=("rev", "fwd")`` it adds rows marked ``fwd`` (each entry of J v
# against the difference along v) and one marked ``dot`` (the dot-product
# test), says which test failed, and names the op whose VJP is not linear
# in its cotangent:
report = mt.check_grads(lambda t: square_op(t).sum(), [x_dot], modes=("rev", "fwd"))
print(report.tests)
print(report.culprit)

# %%
# The reverse check passed and the two forward tests failed: only a VJP
# that ignores its cotangent does that. With the default ``modes=("rev",)``
# the report is the one the earlier chapters print.

# %%
# The Taylor test
# ---------------
#
# The Taylor test is the other check from scientific computing
# (dolfin-adjoint's ``taylor_test``). Along a direction v, Taylor's theorem
# says
#
# .. math:: f(x + hv) - f(x) = O(h), \qquad f(x + hv) - f(x) - h\,\nabla f \cdot v = O(h^2).
#
# Halve h, and the first remainder halves, while the second falls by four
# times, *if and only if* ∇f is right. A wrong gradient leaves a term
# of order h in the second remainder, and the observed order drops to 1.
# The test asks for no tolerance: it asks whether a slope on a log-log plot
# is 1 or 2, and that does not change with the scale of f or the size of
# the error. Here is the test written out, on a smooth loss, with the right
# gradient and with a gradient 1% too large, at steps h = 2⁻⁶ … 2⁻¹⁷:


def smooth_loss(t: mt.Tensor) -> mt.Tensor:
    return (mt.tanh(t) * t).sum()


x_t = mt.tensor([0.3, -0.8, 1.1])
v_t = mt.random_normal((3,), seed=13)
f0 = smooth_loss(x_t).item()
slope = (mt.grad(smooth_loss)(x_t) * v_t).sum().item()
taylor_steps = [0.5**k for k in range(6, 18)]
no_grad, right_grad, wrong_grad = [], [], []
for h in taylor_steps:
    moved = smooth_loss(x_t + v_t * h).item() - f0
    no_grad.append(abs(moved))
    right_grad.append(abs(moved - h * slope))
    wrong_grad.append(abs(moved - h * slope * 1.01))


def orders(remainders: list[float]) -> list[float]:
    return [math.log2(a / b) for a, b in zip(remainders, remainders[1:])]


for name, rs in (("without gradient", no_grad), ("right gradient", right_grad), ("1% wrong", wrong_grad)):
    print(f"{name:<17} orders " + " ".join(f"{o:5.2f}" for o in orders(rs)))

# %%
fig, ax = plt.subplots(figsize=(6.4, 4.2))
ax.loglog(taylor_steps, no_grad, "o-", label=words["ch9_no_grad"])
ax.loglog(taylor_steps, right_grad, "s-", label=words["ch9_right"])
ax.loglog(taylor_steps, wrong_grad, "^-", label=words["ch9_wrong"])
ax.set_xlabel(words["ch4_xlabel"])
ax.set_ylabel(words["ch9_taylor_ylabel"])
ax.set_title(words["ch9_taylor_title"])
ax.legend(loc="lower right")
fig.tight_layout()

# %%
# The right gradient shows order 2 at every step. The wrong one starts
# above 1, while h is large and the h² term still half hides an error of 1%,
# and settles to 1 as h shrinks: at small h the leftover 0.01·h·∇f·v is all that
# remains. No tolerance was chosen, and a smaller error only moves the
# bend to a smaller h. The limit is rounding: once the remainder comes down
# to the rounding of f itself (about 1e-16 times the size of f, more with a large
# offset in f, or in float32), the line stops being calculus, and a careful
# test must say so rather than read a slope from noise.
#
# microtape's taylor_test
# -----------------------
#
# :func:`microtape.taylor_test` runs the same measurement and says what it
# means. It takes the function and the point, draws a seeded random
# direction scaled to each input (or takes ``direction=``), halves h from
# ``h0`` for ``steps`` steps, and reads the orders at the smallest steps
# that stay above rounding. A wrong gradient is *failed* with the slope it
# gives and the one f's change implies; a kink crossed by the steps, a
# jump, or a NaN is *inconclusive*, with the reason. Here it is on the loss
# above, and on the same loss with a hand-written gradient that forgets
# tanh's own derivative:
print(mt.taylor_test(smooth_loss, [x_t], [v_t]))

forgetful = mt.custom_grad(lambda t: ((mt.tanh(t) * t).sum(), lambda dy: dy * mt.tanh(t)))
print(mt.taylor_test(forgetful, [x_t], [v_t]).headline())
print(mt.taylor_test(forgetful, [x_t], [v_t]).reason)

# %%
# The cases that fool a central difference do not fool it. A ReLU whose
# input sits 1e-7 from its kink, a loss with an offset of 1e9, inputs of
# size 1e-8: each is judged by a slope, so the right gradient passes and a
# gradient half as large fails, at every scale. At the kink of ``abs``
# itself the right gradient gets no verdict (inconclusive: the slope there
# is not defined), while the halved one still fails, since its error on the
# smooth entry 2.0 is more than the kink explains:
Loss = Callable[[mt.Tensor], mt.Tensor]
fooling: list[tuple[str, Loss, list[float]]] = [
    ("relu near its kink", lambda t: mt.relu(t).sum(), [1e-7, 0.5]),
    ("offset of 1e9", lambda t: (t * t).sum() + 1e9, [0.3, -1.2]),
    ("inputs of 1e-8", lambda t: (t * t).sum(), [1e-8, -2e-8]),
    ("abs at its kink", lambda t: t.abs().sum(), [0.0, 2.0]),
]


def halved(loss: Loss) -> Loss:
    """``loss`` with a hand-written gradient of 0.5 per entry: wrong wherever the true slope is not 0.5."""
    return mt.custom_grad(lambda t: (loss(t), lambda dy: dy * 0.5 * mt.ones_like(t)))


for label, loss, point in fooling:
    with_right = mt.taylor_test(loss, [mt.tensor(point)]).verdict
    with_half = mt.taylor_test(halved(loss), [mt.tensor(point)]).verdict
    print(f"{label:<20} right gradient: {with_right:<13} half the gradient: {with_half}")

# %%
# What we built
# -------------
#
# Forward mode gives J v, ``linearize`` keeps it without re-running f, and
# ``hvp`` gives curvature along a direction. Forward mode is the cheaper one
# when a function has fewer inputs than outputs, and reverse mode when it
# has fewer outputs, as a loss does. The stable forms of log-sum-exp, the
# cross-entropies, softplus and the double ``where`` keep both the value and
# the gradient finite. float32 needs a step near 1e-3 and a tolerance near
# √ε₃₂ ≈ 3.5e-4. And two checks need no good step: the dot-product test
# catches a VJP that is not linear in its cotangent, and the Taylor test
# tells a right gradient from a wrong one by a slope of 2 or 1.
