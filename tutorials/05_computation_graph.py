"""
The computation graph (Особенности работы с графом вычислений)
================================================================

Every op makes a new tensor, and a training loop runs thousands of ops. The
Russian section *Особенности работы с графом вычислений* makes three points
about this: ``tidy`` frees intermediate tensors, one call can give gradients
for every variable of a model, and gradients computed inside nested functions
must neither leak memory nor lose track of the variables. This chapter turns
each point into numbers we can print.

By the end you will be able to watch :func:`microtape.memory` while a loop
runs, find a leak by op and line with :func:`microtape.leak_check`, write
helper functions that neither leak nor lose their results (with ``tidy``,
:func:`microtape.keep` and :func:`microtape.dispose`), and read how much a
:class:`~microtape.GradientTape` holds on to.
"""

# %%
# A small model with several variables
# ------------------------------------
#
# We fit sin(2x) on 16 points with a two-layer network,
# tanh(x·W1 + b1)·W2 + b2, using 8 hidden units and four variables. As
# always, the data are seeded.
import math
import random
import re

import microtape as mt

rng = random.Random(0)
points = [rng.uniform(-2.0, 2.0) for _ in range(16)]
xs = mt.tensor(points, shape=(16, 1))
ys = mt.tensor([math.sin(2.0 * p) for p in points], shape=(16, 1))

w1 = mt.variable(mt.random_normal((1, 8), seed=1), name="ch05_w1")
b1 = mt.variable(mt.zeros((8,)), name="ch05_b1")
w2 = mt.variable(mt.random_normal((8, 1), stddev=0.5, seed=2), name="ch05_w2")
b2 = mt.variable(mt.zeros((1,)), name="ch05_b2")
params = [w1, b1, w2, b2]


def loss() -> mt.Tensor:
    hidden = mt.tanh(xs @ w1 + b1)
    return ((hidden @ w2 + b2 - ys) ** 2).mean()


print(f"initial loss {mt.tidy(lambda: loss().item()):.4f}")

# %%
# Counting tensors
# ----------------
#
# As in TF.js, a tensor stays alive in microtape until something disposes it.
# Python's garbage collector does not count. ``mt.memory()`` reports what is
# alive right now:
print(mt.memory())

# %%
# Other chapters may have left tensors behind in this process, so we measure
# *differences* from a baseline. Here is one hand-written gradient step,
# repeated five times with no ``tidy``. ``variable_grads`` already disposes
# the forward pass's intermediates, but the loss, the four gradients, and
# the temporaries of each update survive. We therefore expect the count to
# rise by the same amount at every step.


def sgd_step() -> mt.Tensor:
    value, grads = mt.variable_grads(loss)
    for v in params:
        v.assign_sub(grads[v] * 0.1)
    return value


base = mt.memory().num_tensors
growth = []
for _ in range(5):
    sgd_step()
    growth.append(mt.memory().num_tensors - base)
growth

# %%
# That is 9 more tensors at every step, for ever. On a GPU in TF.js this is
# how a page runs out of memory. Here is the same loop with each step inside
# :func:`microtape.tidy`. Only what the step returns survives, and we return
# a Python float, so nothing should survive at all:
base = mt.memory().num_tensors
growth = []
for _ in range(5):
    last = mt.tidy(lambda: sgd_step().item())
    growth.append(mt.memory().num_tensors - base)
print(growth, f"loss {last:.4f}")

# %%
# The two loops as a picture, ten steps each: the count of new live tensors
# after every step. Before we run them we note the variables' values, and
# afterwards we put them back, so that the rest of the chapter starts from
# the same model.
start_values = [v.data_sync() for v in params]
counts: dict[str, list[int]] = {}
for label, with_tidy in (("without tidy", False), ("with tidy", True)):
    base = mt.memory().num_tensors
    counts[label] = []
    for _ in range(10):
        if with_tidy:
            mt.tidy(lambda: sgd_step().item())
        else:
            sgd_step()
        counts[label].append(mt.memory().num_tensors - base)


def restore() -> None:
    for v, values in zip(params, start_values):
        v.assign(mt.tensor(values, shape=v.shape))


mt.tidy(restore)
counts

# %%
import matplotlib.pyplot as plt

from microtape.book.figures import figure_words

words = figure_words()
legend = {"without tidy": words["ch5_without"], "with tidy": words["ch5_with"]}
fig, ax = plt.subplots(figsize=(6.4, 3.6))
for label, values in counts.items():
    ax.plot(range(1, len(values) + 1), values, "o-", label=legend[label])
ax.set_xlabel(words["ch5_xlabel"])
ax.set_ylabel(words["ch5_ylabel"])
ax.set_title(words["ch5_title"])
ax.legend()
fig.tight_layout()

# %%
# The count stays flat at zero, and the loss keeps coming down.
#
# Finding a leak: ``leak_check``
# ------------------------------
#
# In a real program, a growing count tells you *that* something leaks but not
# *what*. ``with mt.leak_check():`` watches a block and, at its end, groups
# every tensor that was made inside and is still alive by the op that made it
# and the line of your code that called that op. (As in :chapter:`4`, ``short``
# trims file paths to the file name.)


def short(text: object) -> str:
    return re.sub(r"[^\s(]*[/\\](?=[\w.-]+\.py\b)", "", str(text))


with mt.leak_check(on_leak="ignore") as leaks:
    sgd_step()
print(short(leaks))

# %%
# Every line of the report points into ``sgd_step`` or ``loss``:
#
# * ``div`` at the ``return ((hidden @ w2 ...`` line is the loss value
#   (``mean`` ends with a division);
# * ``reshape`` and ``matmul`` at the ``variable_grads`` line are the four
#   gradients (the last op of each one's backward pass);
# * ``mul`` at the ``assign_sub`` line is ``grads[v] * 0.1``, one product
#   per variable. The Python number 0.1 is not in the report: as in TF.js,
#   every op runs in its own scope, so the tensor made from 0.1 for the
#   multiplication is disposed when ``mul`` returns. Outside a tape an op
#   adds exactly its result to ``memory()``.
#
# By default the report is printed. ``on_leak="raise"`` turns it into a
# :class:`~microtape.LeakError`, which is the setting you want in a test.
# With the step inside ``tidy``, the block leaves nothing behind:
with mt.leak_check(on_leak="raise") as leaks:
    mt.tidy(lambda: sgd_step().item())
leaks.count

# %%
# Gradients for many variables at once
# ------------------------------------
#
# ``variable_grads`` with no ``var_list`` gives a gradient for every trainable
# variable that the loss reads. We did not have to list the four variables,
# and each gradient has its variable's shape:
value, grads = mt.variable_grads(loss)
{name: g.shape for name, g in grads.items()}

# %%
# ``var_list`` restricts the set, for example to train only the output layer
# while the first layer stays frozen. Every gradient is a fresh tensor, so
# once we have applied them we dispose them ourselves, together with the loss.
# :func:`microtape.dispose` accepts a whole container:
head_value, head_grads = mt.variable_grads(loss, var_list=[w2, b2])
print(list(head_grads))
mt.dispose([value, grads, head_value, head_grads])
grads[w1].is_disposed

# %%
# Nested functions, part 1: a helper that leaks
# ---------------------------------------------
#
# The section's third point is about isolation. Real training code calls
# helpers inside helpers. Here is a small one that logs the global gradient
# norm. It returns a plain float, so it *looks* free of side effects, but
# every ``g * g`` and ``.sum()`` inside it makes a tensor that nobody
# disposes. We call it outside any ``tidy`` and count:


def grad_norm(gs: mt.GradMap) -> float:
    return math.sqrt(sum((g * g).sum().item() for g in gs.values()))


value, grads = mt.variable_grads(loss)
with mt.leak_check(on_leak="ignore") as leaks:
    print(f"|grad| = {grad_norm(grads):.5f}")
print(short(leaks))

# %%
# This time the report points *inside the helper*, to the line with
# ``g * g``, and not to the line that called it. That is what makes
# ``leak_check`` useful in nested code. The fix belongs in the helper itself:
# run its body inside ``tidy``. A float is not a tensor, so ``tidy`` disposes
# everything the body made:


def grad_norm_tidy(gs: mt.GradMap) -> float:
    def body() -> float:
        return math.sqrt(sum((g * g).sum().item() for g in gs.values()))

    return mt.tidy(body)


with mt.leak_check(on_leak="raise") as leaks:
    print(f"|grad| = {grad_norm_tidy(grads):.5f}")
leaks.count

# %%
# Nested functions, part 2: a helper that loses its result
# --------------------------------------------------------
#
# The opposite mistake is just as common. A helper running *inside* a tidy
# step stores a tensor somewhere outside, such as a history list. When the
# step's scope ends, ``tidy`` disposes that tensor, because the function did
# not return it. The next time we read it, we get
# :class:`~microtape.DisposedTensorError`, which names the op that made the
# tensor and the scope that disposed it. This is where the Russian text's
# description of ``tf.tidy`` misleads: it says that ``tidy`` removes the
# intermediate tensors *not used outside the function*. ``tidy`` never looks
# at use. It disposes every tensor made inside that the function neither
# returns nor keeps, even one that code outside goes on using, like this
# history entry:
history: list[mt.Tensor] = []


def train_step() -> None:
    step_value, step_grads = mt.variable_grads(loss)
    history.append(step_value)  # a tensor escapes the scope
    for v in params:
        v.assign_sub(step_grads[v] * 0.1)


mt.tidy("train_step", train_step)
try:
    history[-1].item()
except mt.DisposedTensorError as err:
    print(err)

# %%
# There are two fixes. Store ``step_value.item()``, a float, if a number is
# all you need. Or mark the tensor with :func:`microtape.keep`, which protects
# it from every enclosing ``tidy``. Kept tensors are yours to free with
# ``dispose``. Either way the variables themselves are safe: ``tidy`` never
# disposes a variable, so ``assign_sub`` inside the scope updated the
# parameters that the optimizer will see next time.
history.clear()


def train_step_kept() -> None:
    step_value, step_grads = mt.variable_grads(loss)
    history.append(mt.keep(step_value))
    for v in params:
        v.assign_sub(step_grads[v] * 0.1)


for _ in range(3):
    mt.tidy("train_step", train_step_kept)
print([round(h.item(), 5) for h in history], w1.is_disposed)
mt.dispose(history)

# %%
# Returning is the third way out of a scope. ``tidy`` keeps everything
# reachable from the result, including tensors inside lists, tuples, dicts and
# a ``GradMap``, and hands it to the enclosing scope. So a nested function can
# compute gradients in its own scope and pass them up, while its
# intermediates are still cleaned up:
base = mt.memory().num_tensors
up_grads = mt.tidy(lambda: mt.variable_grads(loss).grads)
survivors = mt.memory().num_tensors - base
print(f"{survivors} tensors survived: the {len(up_grads)} gradients")
mt.dispose(up_grads)

# %%
# Tapes hold tensors too
# ----------------------
#
# A tape must keep every tensor that its backward pass will read. If ``tidy``
# disposes one of them while the tape is still waiting for ``gradient()``,
# the tensor becomes *pending*: it is disposed, so your code can no longer
# use it, but its data stay until the tape lets go. ``memory()`` counts these
# in ``num_tensors_held_by_tapes``. We expect a nonzero count after the tidy
# forward pass and zero once ``gradient`` has run:
before = mt.memory()
with mt.GradientTape() as tape:
    tape_loss = mt.tidy(loss)
held = mt.memory()
tape_grads = tape.gradient(tape_loss, params)
after = mt.memory()
print("held by tapes:", held.num_tensors_held_by_tapes, "->",
      after.num_tensors_held_by_tapes)
print("new tensors:", held.num_tensors - before.num_tensors, "->",
      after.num_tensors - before.num_tensors)

# %%
# While it waited, the tape held the forward pass's inputs, outputs and
# intermediates, and the tensors made from Python numbers: the exponent of
# ``** 2`` and the count that ``mean`` divides by. An op disposes those when
# it returns, but the VJPs of ``pow`` and ``div`` read them, so they stay
# pending, counted as held by the tape. After ``gradient``, everything
# already disposed was freed, and what remains new is the loss and the four
# gradients. A ``persistent=True`` tape keeps holding until you call
# ``tape.release()``, so a persistent tape that you forget about is a leak
# as well.
mt.dispose([tape_loss, tape_grads])
print(mt.memory().num_tensors - before.num_tensors)

# %%
# A variable is the one tensor whose values change, so a tape does not hold
# the variable itself: it holds the values the variable had when an op read
# it, as TensorFlow does. ``assign`` gives the variable a new list of values
# and never writes into the old one, so the tape keeps the old list without
# copying it. A recorded read therefore costs one small object per variable
# and per value it had (shared by every op that read those values), and no
# copy. ``memory()`` counts a variable once, as TF.js does: the old values a
# tape keeps after an ``assign`` are not counted. Below, the gradient with
# respect to ``b`` uses ``w`` as the tape saw it, ``[1, 2]``, so we expect
# 1 + 2 = 3 before and after the update of ``w``, and no new tensor in
# ``memory()`` from the update itself:
w = mt.variable([1.0, 2.0])
b = mt.variable(2.0)
with mt.GradientTape(persistent=True) as tape:
    wb_loss = (w * b).sum()
print("d loss/d b before:", tape.gradient(wb_loss, b))
dw = tape.gradient(wb_loss, w)
assert dw is not None  # w is connected to the loss
step = dw * 0.5
count = mt.memory().num_tensors
w.assign_sub(step)
print("w is now", w.data_sync(), "| new tensors:", mt.memory().num_tensors - count)
print("d loss/d b after: ", tape.gradient(wb_loss, b))
tape.release()

# %%
# The graph, as a program
# -----------------------
#
# A training step runs the same ops at every call, and every call pays again
# for making tensors, recording them and closing scopes. :func:`~microtape.function`
# (``tf.function`` in TensorFlow for Python) runs the step once while it
# records every primitive: the forward ops, the ops of the backward pass and
# the writes to variables. That list is a *program*; later calls with inputs
# of the same shapes run the program on plain lists of floats. ``step.program``
# prints it, one primitive a line: ``%2 = mul %1 %0`` says the third value is
# the product of the second and the first, and the comment gives its shape and
# the line that ran it. We expect the forward ops, then the ops of the VJPs,
# then the ``assign``:
fw = mt.variable([1.0, -1.0], name="fw")


@mt.function
def fit_step(x: mt.Tensor) -> mt.Tensor:
    with mt.GradientTape() as step_tape:
        loss = (fw * x).square().sum()
    (grad,) = step_tape.gradient(loss, [fw])
    assert grad is not None  # fw is read inside the tape
    fw.assign_sub(grad * 0.1)
    return loss


first = fit_step(mt.tensor([0.5, 2.0]))  # the first call traces
print(fit_step.program)

# %%
# The listing shows what the step ran. The replay compiled from it does a
# little more, because every shape is known by then: an op whose inputs were
# all made outside the function (constants, for the program) is computed
# once, while compiling, and its line says ``folded``; a line that repeats an
# earlier one (the same op on the same values, such as the transpose of one
# weight at every time step of a recurrent net) is computed once per call,
# and its line says which one it repeats; and the common ops run kernels
# written for their shapes, a broadcast as a table of positions made once, a
# matrix product with an inner size of 1 as an outer product. None of this
# changes a float: each call gives what the eager step gives, bit for bit.
# Two time steps of a tiny recurrent net show both marks: we expect the
# second ``transpose`` to repeat the first and the ``square`` of the constant
# to be folded:
rw = mt.variable([[0.5, -0.2], [0.1, 0.3]], name="rw")
gain = mt.keep(mt.tensor([1.0, 2.0]))


@mt.function
def unrolled(h: mt.Tensor) -> mt.Tensor:
    for _ in range(2):  # two time steps, one weight
        h = mt.tanh(h @ rw.transpose())
    return h * gain.square()  # gain was made outside: a constant here


unrolled_out = unrolled(mt.tensor([[1.0, 0.0]]))
print(unrolled.program)
mt.dispose([unrolled_out, gain, rw])

# %%
# What replay means for ``memory()``: a call of the function behaves like
# ``tidy`` around the step. Replayed, nothing in between is a tensor at all,
# so after each call ``memory()`` shows what the step returned and the
# variables, exactly what the eager step inside ``tidy`` leaves. Here each
# call returns one loss, so we expect one more tensor per call, and the
# variable with the same values the eager step would give it:
x_step = mt.tensor([0.5, 2.0])
count = mt.memory().num_tensors
losses_now = [fit_step(x_step) for _ in range(3)]
print("new tensors after 3 calls:", mt.memory().num_tensors - count, "| fw =", fw.data_sync())
mt.dispose([first, x_step, *losses_now])

# %%
# A trace sees ops, not Python, so a program also depends on the Python
# values the step read from outside, such as ``rate`` here, a global float.
# As TorchDynamo does in PyTorch with its *guards*, :func:`~microtape.function`
# notes each such value at the trace and checks it before every replay
# (``step.guards`` lists them). When one has changed, the call traces again
# instead of replaying a stale program, and ``step.retrace_reasons`` says
# which value it was. We expect 2.0, then 3.0 after one more trace:
rate = 2.0


@mt.function
def scaled(x: mt.Tensor) -> mt.Tensor:
    return x * rate


x_rate = mt.tensor([1.0])
print(scaled(x_rate).item(), scaled.guards)
rate = 3.0
print(scaled(x_rate).item(), "| traces:", scaled.traces)
print(scaled.retrace_reasons)

# %%
# What a replay could not repeat is refused at the trace, with an error that
# says what to write instead, and the refused call changes nothing. Reading a
# value inside the function (``if loss.item() > 1:``) is one such thing: it
# could steer Python code that a replay would not run again. Creating a
# variable at every call is another: a replay cannot make a new variable, so,
# as in ``tf.function``, only the first call may create one. We expect the
# first call to work and the second to be refused:


@mt.function
def running_total(x: mt.Tensor) -> mt.Variable:
    total = mt.variable(mt.zeros(x.shape))  # a new variable at every call
    total.assign_add(x)
    return total


print(running_total(x_rate).data_sync())
try:
    running_total(x_rate)
except mt.UnsupportedOperationError as err:
    print("\n".join(str(err).splitlines()[1:]))  # the rule and the hint

# %%
# What is guarded: the closure variables and globals that the step's code
# reads, and those of every function, method and class of yours that it
# reaches; attributes read through a module or an optimizer
# (``opt.learning_rate``); Python numbers by their bits (``-0.0`` is not
# ``0.0``), lists, dicts and objects by their contents; the ``trainable``
# flag of every variable; every tensor the step captured (the same tensor,
# still alive). The arguments make the key in the same way: the shapes of
# their tensors and the values of the rest, so a new shape traces again.
# What is not guarded: values that Python makes anew at each call without
# reading them from a variable (``time.time()``, a file's contents), and the
# code of the standard library and of installed packages. Python side
# effects, such as ``print`` or appending to a list, run at a trace only; a
# step that changes a value it reads is traced at every call. ``mt.print``
# and ``check_numerics`` are instructions of the program and run at every
# call, as ``tf.print`` does inside ``tf.function``. After five traces more
# than the first, a ``RetraceWarning`` lists the reasons. While ``profile``,
# ``leak_check`` or ``detect_anomaly`` watch, the call runs eagerly so that
# they see every op.
#
# .. note:: TF.js has the same arena and the same ``tf.tidy``, ``tf.keep``,
#    ``tf.dispose`` and ``tf.memory()``, but no ``leak_check`` and no
#    per-tape count. There you would compare ``tf.memory().numTensors``
#    before and after a block by hand.
#
# What we built
# -------------
#
# We can now watch ``memory()`` while a loop runs and see whether it grows,
# keep each step flat with ``tidy``, and let ``leak_check`` point at the op
# and line that leak, even inside nested helpers. We get gradients for every
# variable in one call, move tensors out of a scope by returning or
# ``keep``-ing them (and ``dispose`` them later), and read what a tape holds.
# Next: putting this to work on learning rates, optimizers and exploding
# gradients.
