"""
Analysis tools (Встроенные функции для анализа)
===============================================

The Russian section *Встроенные функции для анализа* closes the text with
two TF.js helpers: ``tf.memory()``, which counts live tensors, and
``tf.nextFrame()``, which lets a browser page redraw while a model trains.
It adds that together these tools make a complete system for debugging
gradients. This chapter adds a third tool, ``tf.profile``, and then
checks that claim by putting every tool of the book into one training loop.

By the end you will be able to read what one training step costs with
:func:`microtape.profile`, spot optimizer state in :func:`microtape.memory`,
keep an asyncio program responsive with :func:`microtape.next_frame`,
run a training loop that checks memory, numerics and gradients while it
reports its progress, and watch it live in a browser with
:class:`microtape.Dashboard`.
"""

# %%
# ``memory()``: what is alive, including optimizer state
# ------------------------------------------------------
#
# The linear model one last time. Besides ``num_tensors`` and ``num_bytes``
# (8 bytes per entry, because everything is float64), ``memory()`` counts
# variables. An optimizer's running averages are variables too. Adam keeps
# two per trained variable, ``m`` and ``v``, so after its first step we
# expect ``num_variables`` to grow by four, and ``opt.dispose()`` to bring
# it back.
import asyncio
import math
import re
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import microtape as mt
from microtape.book.running import run_to_end

x = mt.tensor1d([1, 2, 3, 4])
y = mt.tensor1d([1, 3, 5, 7])
w = mt.variable(mt.scalar(0.0), name="ch07_w")
b = mt.variable(mt.scalar(0.0), name="ch07_b")


def loss() -> mt.Tensor:
    return ((x * w + b - y) ** 2).mean()


opt = mt.train.adam(0.1)
start = mt.memory().num_variables
opt.minimize(loss)
print("variables after one Adam step:", mt.memory().num_variables - start, "more")
print(sorted(name for slots in opt.slots.values() for name in slots))
opt.dispose()
print("after opt.dispose():", mt.memory().num_variables - start, "more")

# %%
# Optimizer state is easy to forget when you count memory. A training script
# that creates a new optimizer for every experiment and never disposes the
# old ones leaks in exactly this way, and both counts grow with it:
# ``num_tensors`` counts variables too, as ``numTensors`` does in TF.js.
# ``leak_check`` (:chapter:`5`) tells the two kinds apart. Around the first
# step of a new optimizer it finds no leak, and lists the four slots as what
# they are, optimizer state kept for the next steps, which ``opt.dispose()``
# frees. Printed (``on_leak="print"``, the default), the report also names
# the line that made them; here we read its fields:
counts = mt.memory()
fresh = mt.train.adam(0.1)
with mt.leak_check(on_leak="ignore") as leaks:
    fresh.minimize(loss)
grown = mt.memory()
print(f"num_tensors +{grown.num_tensors - counts.num_tensors}, num_variables +{grown.num_variables - counts.num_variables}")
print("leaks:", leaks.count, " optimizer state:", [(group.owner, group.count, group.names) for group in leaks.state])
fresh.dispose()
print("after dispose: num_tensors +", mt.memory().num_tensors - counts.num_tensors)

# %%
# ``profile()``: what one step costs
# ----------------------------------
#
# ``mt.profile(fn)`` runs ``fn`` and records every kernel (op) it runs, with
# input and output shapes, the bytes it added, and the time it took. It also
# returns ``new_tensors`` and ``new_bytes`` (what ``fn`` left behind) and
# ``peak_bytes``, the highest arena total while ``fn`` ran. ``peak_bytes``
# includes everything that was already alive, so we subtract the starting
# total. We profile one gradient computation inside ``tidy`` and expect it
# to leave nothing behind:


def grad_step(f: Callable[[], mt.Tensor]) -> float:
    return mt.tidy(lambda: mt.variable_grads(f).value.item())


before = mt.memory().num_bytes
info = mt.profile(lambda: grad_step(loss))
print(f"kernels {len(info.kernels)}, new_tensors {info.new_tensors}, "
      f"new_bytes {info.new_bytes}, peak {info.peak_bytes - before} bytes "
      "above the start")

# %%
# Nothing is left behind, but three times as many kernels ran as the six of
# the forward pass. ``str(info)`` prints the whole table. The timing column
# changes from run to run, so here we print only the columns that don't.
# The first six rows are the forward pass and the rest are backward:
print(f"{'kernel':<14}{'inputs':<22}{'output':<8}{'+bytes':>7}")
for k in info.kernels:
    inputs = ", ".join(map(str, k.input_shapes))
    print(f"{k.name:<14}{inputs:<22}{str(k.output_shapes[0]):<8}{k.bytes_added:>7}")

# %%
# The same list as a picture: one bar per kernel in the order they ran, as
# high as the bytes it added, the forward pass in one colour and the backward
# pass in another. Profiling the forward pass alone tells us where the
# backward pass starts:
forward_kernels = len(mt.profile(lambda: mt.tidy(lambda: loss().item())).kernels)
forward_kernels

# %%
import matplotlib.pyplot as plt

from microtape.book.figures import figure_words

words = figure_words()
fig, ax = plt.subplots(figsize=(7, 3.4))
colors = ["C0" if i < forward_kernels else "C1" for i in range(len(info.kernels))]
ax.bar(range(len(info.kernels)), [k.bytes_added for k in info.kernels], color=colors)
ax.set_xticks(range(len(info.kernels)), [k.name for k in info.kernels], rotation=60, ha="right")
ax.set_ylabel(words["ch7_ylabel"])
ax.set_title(words["ch7_title"])
fig.tight_layout()

# %%
# A second ``pow`` and a ``sub`` appear in the backward half. They come
# from the VJP of ``** 2``: ``pow`` is a general power, so its VJP computes
# e·bᵉ⁻¹ (a ``sub`` for e − 1, a ``pow`` and two ``mul``), where the VJP of
# ``square`` needs only 2·b. What does *not* appear is the gradient with
# respect to the exponent, bᵉ·log b: the tape knows that the 2 is a constant
# nobody asked a gradient for, and skips it, as TF.js does. The Russian
# text writes the loss with ``square()``, and the profile shows what that
# saves:
pow_names = Counter(info.kernel_names)
square_info = mt.profile(lambda: grad_step(lambda: (x * w + b - y).square().mean()))
square_names = Counter(square_info.kernel_names)
assert pow_names["pow"] == 2 and "pow" not in square_names and "log" not in pow_names  # as the text says
for name, prof in (("x ** 2", info), ("square()", square_info)):
    peak = prof.peak_bytes - before
    print(f"{name:<10} {len(prof.kernels)} kernels, peak {peak} bytes above start")
extra = pow_names - square_names
print("only with ** 2:", ", ".join(f"{name} x{n}" for name, n in extra.items()))

# %%
# The gradients are identical either way. Only the cost differs. On four
# numbers that hardly matters, but the habit does: when a step is slow or its
# memory peak is high, profile it and read the kernel list, because it shows
# what the backward pass really runs. TF.js has the same tool,
# ``await tf.profile(() => ...)``, with the fields ``newTensors``,
# ``newBytes``, ``peakBytes`` and ``kernels``.
#
# ``next_frame()``: training without freezing everything else
# -----------------------------------------------------------
#
# In a browser, JavaScript runs on the same thread that draws the page, so a
# long training loop freezes the page until it ends. ``await tf.nextFrame()``
# inside the loop gives the browser a turn to redraw. Python's equivalent of
# that single thread is an asyncio event loop, and ``await mt.next_frame()``
# gives every other ready task one turn.
#
# To see the difference, we run a training :term:`coroutine` next to a second task
# that prints progress. The trainer only appends messages to a list. The
# printer prints them and notes which step the trainer was at when the
# printer got its turn. First, a trainer that never awaits anything:


def one_step(opt: mt.train.Optimizer) -> float:
    return mt.tidy(lambda: opt.minimize(loss, return_cost=True).item())


async def train(steps: int, log: list[str], at: list[int], yielding: bool) -> None:
    opt = mt.train.momentum(0.02, 0.9)
    for step in range(steps):
        at[0] = step
        value = one_step(opt)
        if step % 10 == 0:
            log.append(f"step {step:>2}: loss {value:.4f}")
        if yielding:
            await mt.next_frame()
    at[0] = steps
    opt.dispose()


# %%
# The printer is an ordinary asyncio task. ``run`` resets the weights,
# starts the printer, awaits the trainer, and then lets the printer finish.
# ``run_to_end`` is ``asyncio.run`` that also works where an event loop is
# already running, as in Jupyter or in a browser (the book's own helper,
# from ``microtape.book.running``):


async def printer(log: list[str], at: list[int], done: asyncio.Event) -> None:
    while not (done.is_set() and not log):
        while log:
            print(f"{log.pop(0)}   (printed while the trainer was at step {at[0]})")
        await mt.next_frame()


async def run(yielding: bool, steps: int = 40) -> None:
    w.assign(mt.scalar(0.0))
    b.assign(mt.scalar(0.0))
    log: list[str] = []
    at, done = [0], asyncio.Event()
    task = asyncio.create_task(printer(log, at, done))
    await train(steps, log, at, yielding)
    done.set()
    await task


run_to_end(run(yielding=False))

# %%
# Every message was printed only after training had finished (step 40): the
# printer never got a turn while training ran. This is the frozen page.
# Now the same trainer awaits ``next_frame()`` after each step:
run_to_end(run(yielding=True))

# %%
# Now each message appears at the step that produced it. ``next_frame`` does
# nothing else: it makes no tensors and does not wait for a screen. One
# caution: ``tidy`` goes *inside* the coroutine, around each synchronous step,
# as ``one_step`` does. ``tidy`` cannot scope an async function, because its
# tensors would be made after the scope had closed, and it says so:


async def whole_training() -> None:
    await train(5, [], [0], yielding=True)


try:
    _ = mt.tidy(whole_training)  # raises: tidy refuses a coroutine
except mt.TidyError as err:
    print(err)

# %%
# A training loop that debugs itself
# ----------------------------------
#
# Here is the claim of the Russian section put to work: one loop that uses
# every tool in the book. Each step runs inside ``tidy`` and checks its loss
# with ``check_numerics``. A ``GradientMonitor`` records the gradients before
# the optimizer applies them. Every ten steps the loop checks that the tensor
# count has not grown and prints a progress line, and it awaits
# ``next_frame`` so that the rest of the program stays responsive. The count
# starts after the first step, because ``num_tensors`` includes variables (as
# ``numTensors`` does in TF.js), and that step creates the two momentum slots.


async def debug_training(steps: int = 60) -> mt.GradientMonitor:
    w.assign(mt.scalar(0.0))
    b.assign(mt.scalar(0.0))
    opt = mt.train.momentum(0.02, 0.9)
    monitor = mt.GradientMonitor(explode_norm=100.0)

    def step() -> float:
        value, grads = mt.variable_grads(loss)
        mt.check_numerics(value, "loss")
        monitor.record(grads)
        opt.apply_gradients(grads)
        return value.item()

    baseline = 0
    for i in range(steps):
        value = mt.tidy(step)
        if i == 0:  # the first step creates the optimizer's slots: count from here
            baseline = mt.memory().num_tensors
        if i % 10 == 0:
            grown = mt.memory().num_tensors - baseline
            assert grown == 0, f"leak: {grown} tensors since step 0"
            print(f"step {i:>2}  loss {value:8.4f}  tensors +{grown}  "
                  f"w {w.item():.3f}  b {b.item():.3f}")
        await mt.next_frame()
    opt.dispose()
    return monitor


monitor = run_to_end(debug_training())
print(monitor.report(width=60))

# %%
# The loss falls, the tensor count stays flat, and the monitor raises no flag.
# The line approaches w = 2, b = −1.
#
# A live training page
# --------------------
#
# The Russian text's last point is that gradients are best watched as charts,
# and that ``tf.nextFrame()`` is what keeps a browser page alive while a model
# trains. :class:`microtape.Dashboard` puts both together with nothing but the
# standard library: opened with ``async with``, it serves a page on
# 127.0.0.1 from the training loop's own event loop. The page draws the loss,
# each variable's gradient norm against the monitor's exploding and vanishing
# thresholds, the ratio of each update to its weight, histograms of the latest
# gradients and the run's live tensors (``memory().num_tensors`` less those
# alive before the dashboard was made), and it updates itself as steps
# arrive. The loop feeds it with ``dash.log`` once per step, and after the
# last step hands its Backward panel one backward pass with
# ``dash.log_backward`` (the next section reads such steps). ``port=0`` asks
# for any free port, and the server closes when the block ends. Here a small
# "browser" task asks for the page's data while the loop trains, to show when
# it gets its answer.


async def visitor(dash: mt.Dashboard, steps: int, answers: list[str]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", dash.port)
    writer.write(b"GET /data.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    status = (await reader.readline()).decode().strip()
    await reader.read()
    writer.close()
    answers.append(f"{status}, while training: {dash.steps_logged < steps}")


async def watched_training(steps: int = 60) -> mt.Dashboard:
    w.assign(mt.scalar(0.0))
    b.assign(mt.scalar(0.0))
    opt = mt.train.momentum(0.02, 0.9)
    answers: list[str] = []
    monitor = mt.GradientMonitor(explode_norm=100.0)
    async with mt.Dashboard("The linear model, momentum(0.02, 0.9)", monitor=monitor, port=0) as dash:
        browser = asyncio.create_task(visitor(dash, steps, answers))
        for i in range(steps):

            def step() -> None:
                value, grads = mt.variable_grads(loss)
                monitor.record(grads)
                opt.apply_gradients(grads)
                dash.log(i, loss=value, grads=grads, variables=[w, b])

            mt.tidy(step)
            await mt.next_frame()  # the page is answered here, between two steps

        def last_pass() -> None:
            with mt.GradientTape() as tape:
                value = loss()
            dash.log_backward(tape.backward_steps(value, {"w": w, "b": b}))

        mt.tidy(last_pass)
        await browser
    opt.dispose()
    print(*answers)
    return dash


dash = run_to_end(watched_training())

# %%
# The page was answered while the loop ran. Take the ``await mt.next_frame()``
# out and the answer comes only after the last step, exactly like a browser
# tab frozen by a loop that never yields. A plain ``for`` loop without asyncio
# can use ``with mt.Dashboard() as dash:`` instead, which serves the page from
# a background thread. To watch a run for real, open the printed
# ``dash.url`` in a browser, or try the demo, which trains :chapter:`6`'s
# recurrent net into an explosion and then rescues it with clipping:
#
# .. code-block:: text
#
#    python -m microtape dashboard --demo --port 8765
#
# After training, ``save_html`` writes the same charts into one
# self-contained HTML file, a report to keep or hand in. It has no script and
# loads nothing from elsewhere, so it opens offline. Below is the report of
# the run above, as the file shows it:
with tempfile.TemporaryDirectory() as folder:
    saved = dash.save_html(Path(folder) / "training_report.html")
    html = saved.read_text()
    elsewhere = re.findall(r'(?:src|href)="(?!#|data:)', html)
    print(f"{saved.name}: {saved.stat().st_size // 1024} KB in one file, "
          f"{html.count('<script')} scripts, {len(elsewhere)} files loaded from elsewhere")
# sphinx_gallery_capture_repr_block = ("_repr_html_", "__repr__")
dash

# %%
# Read it as a check-up. The loss falls on a log scale. Both gradient norms
# stay between the two thresholds. The update ratios start large, as momentum
# builds up, and then settle. The run's tensor count is flat: no leak. Its
# five tensors are the two momentum slots made at step 0, and the step's loss
# and two gradients, alive inside ``tidy`` while ``dash.log`` reads them. The
# histogram chart is empty on purpose: ``w`` and ``b`` are single numbers,
# and a histogram of one value says nothing that the norm chart does not. The
# Backward panel lists the last loss's backward pass, one VJP a row, from the
# ``div`` and ``sum`` of the mean at the top down to ``w`` and ``b``.
#
# Watching the chain rule
# -----------------------
#
# Every tool so far reports a result: a gradient, a norm, a flag. When a
# gradient surprises you, the question is *why* it has that value, and the
# answer is the chain rule, applied one op at a time.
# :meth:`~microtape.GradientTape.backward_steps` runs the same backward pass
# as ``gradient()``, but stops after every VJP to show its numbers: the op,
# the line that ran it, the gradient that reached the op's output (``dout``),
# the op's local derivative by each input, what its VJP returned for each
# input, and the gradients of the sources so far (``None`` until the pass
# reaches a source).
#
# Take chapter 3's example, :math:`f = x^2 + y^2` at :math:`(2, 3)`. The pass
# starts at ``f`` with gradient 1. We expect ``add`` to pass 1 to both
# squares, then the square of ``y`` to turn it into :math:`2y = 6` and the
# square of ``x`` into :math:`2x = 4`, in the reverse of the order they ran:
chain_x = mt.variable(mt.scalar(2.0), name="chain_x")
chain_y = mt.variable(mt.scalar(3.0), name="chain_y")
with mt.GradientTape() as chain_tape:
    f = chain_x.square() + chain_y.square()
chain_steps = list(chain_tape.backward_steps(f, {"x": chain_x, "y": chain_y}))
for chain_step in chain_steps:
    print(chain_step)

# %%
# The last step's gradients are exactly what ``gradient()`` returns, so
# the steps are the backward pass itself, not a model of it. Each step is also
# an object you can question, and in Jupyter it draws itself as a small table.
# A :class:`~microtape.Dashboard` shows the steps of one pass in its Backward
# panel: ``dash.log_backward(tape.backward_steps(loss, sources))``.
last = chain_steps[-1]
print(last.op, "returned", last.grads, "for its input")
print("gradients so far:", last.accumulated)

# %%
# The local derivatives are where a NaN gradient starts. Chapter 4 guarded a
# square root with ``where`` and still got NaN at 0. Stepping through that
# pass, we expect ``where`` to pass 0.0 to the root, the root's local
# derivative at 0 to be ``inf``, and its VJP to return ``0.0 * inf``:
root_x = mt.variable(mt.scalar(0.0), name="root_x")
with mt.GradientTape(persistent=True) as root_tape:
    guarded = mt.where(root_x.greater(0.0), mt.sqrt(root_x), mt.scalar(0.0))
for root_step in root_tape.backward_steps(guarded, {"x": root_x}):
    print(root_step)

# %%
# Read from the top: ``where`` chose the constant, which needs no gradient
# (``None``), and passes 0.0 to the root and to the comparison. The root's
# local derivative is ``inf``, so its VJP returns 0.0 · ∞ = NaN, and the
# comparison's slope is 0. ``tape.explain`` says the same in one sentence,
# with the lines:
print(root_tape.explain(guarded, root_x).nonfinite[0])
root_tape.release()

# %%
# Where a NaN came from, and where it went
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The same view helps when a value stops being a number. Here is a
# cross-entropy for one example, written as its formula reads, the log of the
# model's probabilities: the model's logits make the last class so unlikely
# that its softmax probability is exactly 0.0, and the label is the second
# class. The label's zeros should switch the impossible class off, yet the
# loss comes out NaN. With ``mode="trace"``, ``detect_anomaly`` raises
# nothing. It records the first op that made a non-finite value and every op
# that value then went through, forward to the loss and back through the
# backward pass:
logits = mt.tensor([[2.0, 1.2, -800.0]])
labels = mt.tensor([[0.0, 1.0, 0.0]])
with mt.detect_anomaly(mode="trace") as trace:
    with mt.GradientTape() as nan_tape:
        nan_tape.watch(logits)
        probs = mt.softmax(logits)
        cross_entropy = -(labels * mt.log(probs)).sum()
    nan_tape.gradient(cross_entropy, logits)
print("probabilities:", probs, " loss:", cross_entropy.item())
print(trace)

# %%
# Read the chain from the top. ``log(0.0)`` is ``-inf``. That alone is not
# NaN: the label's ``0.0`` was meant to cancel it, but ``0.0 * -inf`` is NaN
# in floating point, so the ``mul`` turns the Inf into a NaN. The NaN then
# goes through the ``sum`` and the ``neg`` to the loss. In the backward pass
# the derivative of ``log`` at 0, :math:`1/x`, meets the 0 that the ``mul``
# sends back, and the NaN goes on through the softmax's own ops (``softmax``
# is ``exp(z - logsumexp(z))``) to every logit. The trace's last line, its
# hint, names the fix in the names of your own line. ``trace.first`` holds
# the details: the entries, the input values and the line.
first = trace.first
assert first is not None
print(first.op, first.phase, first.entries, first.inputs)

# %%
# The fix belongs at the first op, not at the loss: never take the log of a
# probability that a softmax made. Its log is
# :math:`\log \mathrm{softmax}(z)_i = z_i - \log \sum_j e^{z_j}`, which
# :func:`microtape.log_softmax` computes from the logits with
# :func:`microtape.logsumexp`: for the last class it is −802.4, a finite
# number, and 0 · (−802.4) is 0. The same trace then reports nothing, and the
# gradient is softmax − labels:
with mt.detect_anomaly(mode="trace") as fixed:
    with mt.GradientTape() as fixed_tape:
        fixed_tape.watch(logits)
        safe_loss = -(labels * mt.log_softmax(logits)).sum()
    safe_grad = fixed_tape.gradient(safe_loss, logits)
print("log_softmax:", mt.log_softmax(logits), " logsumexp:", mt.logsumexp(logits))
print("loss:", safe_loss.item(), " gradient:", safe_grad)
print(fixed)

# %%
# The usual quick fix, ``log(probs + 1e-7)``, also silences the trace, but it
# changes the function, and with it the gradient. The derivative of
# :math:`\log(p + \varepsilon)` is :math:`1/(p + \varepsilon)` where it should
# be :math:`1/p`, so every gradient that goes through it is the right one times
# :math:`p/(p + \varepsilon)`. That factor is close to 1 while the probability
# is much larger than the epsilon, and nearly 0 once it is smaller. It matters
# most when the label is the class the model rules out, the example the model
# has most to learn from. We move that class's logit down and compare the two
# losses (the label comes from its class index with
# :func:`microtape.one_hot`, and :func:`microtape.argmax` reads the model's
# choice). We expect the true gradient, softmax − labels, from
# ``log_softmax`` at every logit, and a gradient from the epsilon that
# shrinks towards 0:
ruled_out = mt.one_hot(mt.tensor([2.0]), 3)  # the label is the class the model rules out


def epsilon_loss(z: mt.Tensor) -> mt.Tensor:
    return -(ruled_out * mt.log(mt.softmax(z) + 1e-7)).sum()


def logits_loss(z: mt.Tensor) -> mt.Tensor:
    return -(ruled_out * mt.log_softmax(z)).sum()


for low in (-10.0, -20.0, -800.0):
    z = mt.tensor([[2.0, 1.2, low]])
    print(f"logit {low:g}: the model picks class {int(mt.argmax(z, axis=-1).item())}, "
          f"p = {mt.softmax(z).data_sync()[2]:.2g}")
    for name, fn in (("log(softmax + 1e-7)", epsilon_loss), ("log_softmax", logits_loss)):
        value, grad = mt.value_and_grad(fn)(z)
        print(f"  {name:<20} loss {value.item():7.2f}  gradient {grad}")

# %%
# At a logit of −20 the epsilon's gradient is about 500 times too small, and
# at −800 it is exactly 0 with the loss stuck at 16: the model is never told
# how wrong it is, and nothing reports a NaN, a spike or a leak. The
# ``log_softmax`` loss grows as the logit falls and its gradient stays
# −1 on the label. :func:`microtape.softmax_cross_entropy` (TF.js's
# ``tf.losses.softmaxCrossEntropy``) is the same loss in one call.

# %%
# Without ``mode="trace"``, ``detect_anomaly`` stops at the first op, as in
# chapter 4, and its message now says which input value and which entry
# caused the problem:
with mt.detect_anomaly():
    try:
        mt.log(mt.softmax(logits))
    except mt.AnomalyError as err:
        print(str(err).splitlines()[0])
        print("cause:", err.cause)

# %%
# A vanishing gradient, path by path
# ----------------------------------
#
# Chapter 6 watched a gradient vanish as a norm that shrinks step by step.
# :func:`microtape.explain_gradient` shows the same thing in the chain rule
# itself. A gradient entry is a sum over every path from the output back to
# that entry, and each path contributes the product of the local
# derivatives along it. Here is a deep chain of two tanh units per layer,
# with positive weights large enough to push the units towards saturation,
# where the slope of tanh, tanh′(z) = 1 − tanh(z)², is far below 1:
DEPTH = 8
layers = [mt.random_uniform((2, 2), 0.8, 1.6, seed=40 + k) for k in range(DEPTH)]


def deep(x: mt.Tensor) -> mt.Tensor:
    h = x
    for weight in layers:
        h = mt.tanh(h @ weight)
    return h.sum()


x0 = mt.tensor([[0.8, -0.6]])
vanishing = mt.explain_gradient(deep, [x0], top=3)
print(vanishing)

# %%
# Every layer offers two ways through, so there are 2 to the power ``DEPTH``
# paths, listed with their factors from the output back to the input. No
# single path dominates: the three largest carry a small share each and the
# rest carry the bulk, and every one of them is tiny. The factors say why.
# Along the top path, the tanh slopes are
top_path = vanishing.paths[0]
tanh_factors = [step.local for step in top_path.steps if step.op == "tanh"]
weight_factors = [step.local for step in top_path.steps if step.op == "matmul"]
print("tanh' along the top path:", " ".join(f"{v:.3f}" for v in tanh_factors))
print(f"product of the tanh slopes {math.prod(tanh_factors):.3g}, of the weights {math.prod(weight_factors):.3g}")
contributions = [p.contribution for p in vanishing.paths]
print(f"{vanishing.count} paths, the largest contributes {max(abs(c) for c in contributions):.3g}")

# %%
# Each tanh slope is below 1, and the slopes of the saturated layers near
# the output are far below it. Their product is many orders of magnitude
# smaller than 1, while the weights' product is a modest number that cannot make
# up for it. Every path multiplies the same kind of factors, so every path
# is tiny, and so is their sum: the gradient vanishes because each path
# crosses saturated units, not because the paths cancel. The cures follow
# from the factors: smaller weights or inputs keep the units out of
# saturation (tanh′ near 1), and a shortcut around a layer adds a path whose
# factor is 1.

# %%
# A gradient of exactly 0 has a cause too. In this two-layer net the first
# layer's bias pushes hidden unit 1 below zero for every example, so its
# ``relu`` is dead: the weights that feed it never move. We explain one of
# them, ``w1[0, 1]``, from a tape; the tape calls it by the variable's name:
relu_x = mt.random_normal((16, 2), seed=7)
w1 = mt.variable(mt.tensor([[0.5, 0.3], [-0.4, 0.2]]), name="w1")
b1 = mt.variable(mt.tensor([4.0, -6.0]), name="b1")
w2 = mt.variable(mt.tensor([[1.0], [0.5]]), name="w2")
with mt.GradientTape(persistent=True) as relu_tape:
    hidden = mt.relu(relu_x @ w1 + b1)
    relu_loss = ((hidden @ w2) ** 2).mean()
dead_unit = relu_tape.explain(relu_loss, w1, index=(0, 1), top=2)
print(dead_unit)

# %%
# Sixteen paths, one per example, and all of them stop at the same factor:
# the ``relu`` of unit 1 has derivative 0 for 16 of its 16 entries. Unit 0
# is live for every example, so the weight that feeds it gets a gradient
# from 16 paths, none of them stopped:
live_unit = relu_tape.explain(relu_loss, w1, index=(0, 0), top=1)
print(f"{live_unit.total:.4g} from {live_unit.path_count} paths, {live_unit.stopped} stopped")
relu_tape.release()

# %%
# The cure is to bring the unit back into its live range: a smaller bias, a
# different initialisation, or an activation with a small slope below 0.
#
# A map from symptoms to tools
# ----------------------------
#
# Every tool of the book has now been shown, and each one answers a different
# question. Start from what you see:
#
# * **The memory count grows from step to step.** Use ``memory()`` to see it,
#   ``leak_check`` to find the op and line, and ``tidy``, ``keep`` and
#   ``dispose`` to fix it (:chapter:`5`). Look at the optimizer's slots too
#   (this chapter).
# * **The loss is NaN or Inf.** Use ``check_numerics`` to find the step and
#   ``detect_anomaly`` to find the op, the pass and the line (:chapter:`4`);
#   with ``mode="trace"`` it also shows where the value went (this chapter).
#   A log of a softmax is fixed with ``log_softmax``, not with an epsilon.
# * **The loss does not fall, or training disagrees with your maths.** Check
#   sign and scale, print gradients with ``mt.print``, and run
#   ``check_grads``, whose culprit names a wrong custom VJP (:chapter:`4`).
# * **The loss jumps, or early layers do not learn.** Use a
#   ``GradientMonitor``, sparklines and per-time-step gradient norms, then
#   clip, change the learning rate or change the optimizer (:chapter:`6`).
#   ``explain_gradient`` shows which factors make a gradient vanish (this
#   chapter).
# * **A gradient is unexpected.** Read the tape: ``tape.operations``,
#   ``tape.summary()`` and ``tape.to_dot()`` (:chapter:`3`), then step
#   through its backward pass with ``tape.backward_steps``, each VJP with its
#   local derivative (this chapter).
# * **One gradient entry is NaN, 0 or just not what you expect.** Ask why:
#   ``explain_gradient`` (or ``tape.explain``) lists the paths that make the
#   entry, names the infinite factor and the 0 that met it, or the op whose
#   factor 0 stops every path, as the dead ``relu`` above (:chapter:`4`, this
#   chapter).
# * **A gradient is None or missing.** Read the warning or the error: it
#   names the copy, the assign, the ``stop_gradient`` or the read that cut the
#   path, and its line (:chapter:`4`).
# * **A step is slow or its memory peak is high.** Run ``profile`` and read
#   the kernel list (this chapter).
# * **Everything else freezes while training runs.** Await ``next_frame()``
#   between steps (this chapter).
# * **You want to see it all at once, as it happens.** Feed a ``Dashboard``
#   and open its page, or save its report (this chapter).
#
# A complete system?
# ------------------
#
# The Russian section ends by saying that its methods together make a
# complete system for debugging gradients. The verdict of this chapter: they
# do not, and neither does the whole book's kit, though it comes much closer.
# ``tf.memory()`` and ``tf.nextFrame()`` find leaks and keep a page alive;
# they say nothing about whether a gradient is right. The loop above needed
# ``check_numerics`` for NaN, a ``GradientMonitor`` for norms, and
# ``check_grads``, ``backward_steps`` and ``explain_gradient`` to check and
# explain a gradient. Even all of them together only catch what they look
# for: a leak, a non-finite value, a norm out of range, a derivative that
# disagrees with a finite difference at the points you check. The epsilon
# loss of this chapter passes every one of those checks with a gradient 500
# times too small, or 0. What catches it is a question about the maths (what
# is the true derivative of this loss?), asked with the tools, not by them.
#
# What we built
# -------------
#
# We read the cost of a step with ``profile``, found optimizer state with
# ``memory``, kept an asyncio program responsive with ``next_frame``, wrote
# a training loop that watches its own memory, numerics and gradients, and
# watched the chain rule one VJP and one path at a time. To practise, try the
# exercises in ``tutorials/exercises`` and check each one with
# ``python -m microtape grade FILE``. To replay any chapter in a terminal, run
# ``python -m microtape tour --chapter N``.
#
# Next, :doc:`08_casebook` turns from the tools to the bugs people met.
