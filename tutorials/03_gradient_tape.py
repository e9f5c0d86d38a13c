"""
The tape (Отслеживание операций с tf.GradientTape)
==================================================

Every gradient so far came from a :term:`tape <gradient tape>`: a list of the ops that ran,
replayed backwards. Chapters 1 and 2 used a tape briefly or hid it inside
``grad`` and ``variable_grads``. The Russian section *Отслеживание операций
с tf.GradientTape* brings the tape into view, and this chapter opens it up.

By the end of this chapter you will be able to read what a
:class:`~microtape.GradientTape` recorded, as a list, as a drawn graph and
as a table of gradient norms. You will also take the text's SGD step on
:math:`x^2 + y^2`, use :term:`persistent <persistent tape>` and nested tapes (second derivatives,
Jacobians), and know why the text's last snippet fails and how to fix it.
"""

# %%
# A correction first: TF.js has no GradientTape
# ---------------------------------------------
#
# The section says that recent versions of TensorFlow.js offer a gradient
# tape "as in TensorFlow Python". They do not: there is no
# ``tf.GradientTape`` in TF.js. TF.js records a tape *internally*, inside
# ``tf.grad``, ``tf.grads`` and ``tf.variableGrads``, and never shows it.
# ``tf.GradientTape`` belongs to TensorFlow for Python, and microtape follows
# that API. (The text's own TF.js code in this section uses ``tf.grads``
# and ``tf.grad``, never a tape.)
#
# Here is :chapter:`2`'s loss again, recorded on a tape we keep. With
# ``persistent=True`` we may ask it for gradients more than once. The trainable
# variables are watched automatically, and the data are constants:
import microtape as mt
from microtape.book.figures import figure_words

line_w = mt.variable(mt.scalar(0.5), name="line_w")
line_b = mt.variable(mt.scalar(0.0), name="line_b")
x_data = mt.tensor1d([1, 2, 3, 4])
y_data = mt.tensor1d([1, 3, 5, 7])
with mt.GradientTape(persistent=True) as tape:
    loss = (x_data * line_w + line_b - y_data).square().mean()
tape

# %%
# What the tape recorded
# ----------------------
#
# :attr:`~microtape.GradientTape.operations` lists the records in the order
# the ops ran, with input and output shapes. We expect ``mul``, ``add``,
# ``sub`` and ``square``. ``mean`` is not a primitive op: it is recorded as a
# ``sum`` followed by a ``div``.
for op in tape.operations:
    print(op)

# %%
# Running order is already a valid order for the chain rule, so the backward
# pass is one loop over this list in reverse. We expect :chapter:`2`'s numbers,
# -17.5 and -5.5:
tape.gradient(loss, [line_w, line_b])

# %%
# The tape as a picture
# ---------------------
#
# :meth:`~microtape.GradientTape.to_svg` draws the records, laid out by
# microtape itself: no Graphviz, nothing to install. The inputs are at the
# top: the watched variables filled yellow, the data dashed, as constants.
# The loss is at the bottom, framed in blue. Each op's box shows its
# output's shape, its values and, after ``gradient()``, the norm of the
# gradient that reached it (``|grad|``). A vector of up to a few entries
# shows them all, as ``x * w`` does here; a longer one shows its smallest
# and largest entries and says so (``min..max -1.5..2.0 of 64``). Constants
# have no names, so they are numbered in the order the tape read them:
# ``constant 1`` is ``x_data``, ``constant 2`` is ``y_data``, and
# ``constant 3`` is the 4 that ``mean`` divides by. Look for 6 ops and 5
# inputs. The drawing is plain SVG text (``tape.to_svg()``), the same bytes
# for the same tape. In a notebook a tape shows itself as this picture, so a
# cell that ends with ``tape`` is all it takes:
tape
# sphinx_gallery_capture_repr_block = ("_repr_html_",)
# sphinx_gallery_thumbnail_path = "_static/tape_thumbnail.png"

# %%
# If you use Graphviz, :meth:`~microtape.GradientTape.to_dot` writes the same
# graph in Graphviz's text format, for ``dot -Tsvg``: tensors are boxes, ops
# are ellipses, and the edge out of each op carries the gradient norm. The
# first lines:
print("\n".join(tape.to_dot(rankdir="TB").splitlines()[:8]))

# %%
# Follow the ``|grad|`` lines from the bottom up: this is the order in which
# the backward pass visits the ops.
#
# The same story as a table
# -------------------------
#
# :meth:`~microtape.GradientTape.summary` gives one row per op: its output's
# value range and the norm of the gradient arriving at that output. Read it
# from the bottom up, as the backward pass does. The loss gets gradient 1.
# ``div`` by 4 passes on 0.25. The ``square`` outputs each get 0.25
# (norm :math:`\sqrt{4 \cdot 0.25^2} = 0.5`). Then each residual :math:`r_i`
# gets :math:`2 r_i \cdot 0.25`, with norm :math:`\sqrt{41.5}/2 \approx 3.221`.
print(tape.summary())

# %%
# A norm that collapses towards 0 from one row to the next is where a
# gradient vanishes, and a norm that blows up is where it explodes. :chapter:`Chapter 6 <6>`
# uses this table for exactly that.
#
# The backward pass itself does not measure these norms: only the table and
# the graph need them, so the tape measures them when you ask, by replaying
# its last backward pass without recording anything. That is one reason
# this tape is persistent: a non-persistent tape lets go of its records as
# soon as ``gradient()`` returns, and its table is empty from then on.
#
# Persistent and non-persistent tapes
# -----------------------------------
#
# A persistent tape answers again, for any sources and in any structure (here
# a dict):
tape.gradient(loss, {"w": line_w})

# %%
# A persistent tape keeps every recorded tensor alive until it is released.
# A default tape frees its records after the first ``gradient()`` call, and a
# second call is an error, in TensorFlow too:
with mt.GradientTape() as one_shot:
    loss = (x_data * line_w + line_b - y_data).square().mean()
one_shot.gradient(loss, line_w)
try:
    one_shot.gradient(loss, line_b)
except mt.TapeError as err:
    print(err)

# %%
# We are done with the persistent tape, so we release what it holds:
tape.release()
tape

# %%
# The text's SGD step on x² + y²
# ------------------------------
#
# The text minimises :math:`f = x^2 + y^2` from :math:`(2, 3)` with one step of
# size 0.1, in TF.js:
#
# .. code-block:: javascript
#
#    const x = tf.variable(tf.scalar(2));
#    const y = tf.variable(tf.scalar(3));
#    tf.tidy(() => {
#      const f = () => x.square().add(y.square());
#      const [dx, dy] = tf.grads(f)([x, y]);
#      x.assign(x.sub(dx.mul(0.1)));
#      y.assign(y.sub(dy.mul(0.1)));
#    });
#
# The gradient is :math:`(2x, 2y) = (4, 6)`, so we expect the step to land on
# :math:`(2 - 0.4,\ 3 - 0.6) = (1.6, 2.4)`. With a tape:
x = mt.variable(mt.scalar(2.0), name="x")
y = mt.variable(mt.scalar(3.0), name="y")


def sgd_step() -> None:
    with mt.GradientTape() as step_tape:
        f = x.square() + y.square()
    dx, dy = step_tape.gradient(f, [x, y])
    assert dx is not None and dy is not None  # both variables were read inside the tape
    x.assign(x - dx * 0.1)
    y.assign(y - dy * 0.1)


mt.tidy(sgd_step)
print(x)
print(y)

# %%
# The text's own form passes ``tf.grads`` a function of *no* arguments. That
# works in TF.js only by accident of the closure. ``tf.grads(f)([x, y])``
# calls ``f(x, y)``; JavaScript drops the two extra arguments, and ``f``
# reads the outer ``x`` and ``y`` instead. The gradient flows because those
# are the very tensors that were passed. Pass any other tensors and ``f``
# still ignores them, so TF.js answers "Cannot compute gradient of y=f(x)
# with respect to x". Python does not drop arguments, and microtape says so
# before any work is done:
try:
    # the text's f, on purpose; the comment at the end of the next line tells mypy so
    mt.grads(lambda: x.square() + y.square())([x, y])  # type: ignore[misc, arg-type]
except mt.InvalidArgumentError as err:
    print(err)

# %%
# The fix is the form ``grads`` was made for: ``f`` takes the inputs as its
# parameters and differentiates *them*, whatever tensors are passed. From
# :math:`(1.6, 2.4)` the next step should go to :math:`(1.28, 1.92)`:


def grads_step() -> None:
    dx, dy = mt.grads(lambda a, b: a.square() + b.square())([x, y])
    x.assign(x - dx * 0.1)
    y.assign(y - dy * 0.1)


mt.tidy(grads_step)
print(x)
print(y)

# %%
# .. note:: The text also creates ``const optimizer = tf.train.sgd(0.1)``
#    and never uses it: both updates are written by hand with ``assign``.
#    Optimizers (``mt.train.sgd`` and friends) are the subject of :chapter:`6`.
#
# Nested tapes: second derivatives
# --------------------------------
#
# While a tape runs its backward pass, any *other* open tape records the ops
# of that pass. So an outer tape can differentiate the gradient that an inner
# tape computed. For :math:`t^3` at :math:`t = 2`, the first derivative is
# :math:`3t^2 = 12` and the second is :math:`6t = 12`:
t = mt.scalar(2.0)
with mt.GradientTape() as outer:
    outer.watch(t)
    with mt.GradientTape() as inner:
        inner.watch(t)
        cube = t**3
    first = inner.gradient(cube, t)
assert first is not None
second = outer.gradient(first, t)
print(first, second)

# %%
# The functional form nests too: ``grad`` of ``grad`` is the second derivative.
mt.grad(mt.grad(lambda s: s**3))(t)

# %%
# This works because each VJP is written with ops, which an open tape can
# record. There is only one VJP per op, and every pass calls it: when
# nothing records the pass (no other tape open, no profiler or other
# observer), the tensors its ops make simply stay out of the arena and are
# freed as soon as the next step no longer needs them. So the rule printed
# beside each op is the one that runs, at every order: edit it, and every
# gradient changes with it.

# %%
# Jacobians
# ---------
#
# ``gradient`` of a vector target sums it first (its ``output_gradients``
# default to ones). :meth:`~microtape.GradientTape.jacobian` keeps every
# entry apart, with one backward pass per entry of the target, and returns
# shape ``target.shape + source.shape``. For :math:`q = v \odot v` the
# Jacobian is :math:`\mathrm{diag}(2v)`:
v = mt.tensor([1.0, 2.0, 3.0])
with mt.GradientTape(persistent=True) as jac_tape:
    jac_tape.watch(v)
    q = v * v
print(jac_tape.gradient(q, v))
jac_tape.jacobian(q, v)

# %%
# Each row of the Jacobian is the gradient of one entry of ``q``, and the
# summed gradient above is the sum of its rows.
#
# Recording only part of the operations
# -------------------------------------
#
# The section says that a tape helps "where only part of the operations has
# to be tracked". TensorFlow for Python's tape has two switches for this,
# and microtape has both. With ``watch_accessed_variables=False`` the tape
# watches nothing by itself: only what we pass to ``watch`` gets a gradient.
# Here ``x`` is watched and ``y`` is not, so for :math:`x^2 + y^2` at
# :math:`(1.28, 1.92)` we expect :math:`2x = 2.56` for ``x`` and ``None`` for
# ``y``:
with mt.GradientTape(watch_accessed_variables=False) as part_tape:
    part_tape.watch(x)
    both = x.square() + y.square()
part_tape.gradient(both, [x, y])

# %%
# ``stop_recording()`` pauses a tape inside its ``with`` block. The ops run
# there are computed but not recorded, so no gradient flows through them:
# use it for a target you hold fixed, a statistic you log, or any value you
# do not want to differentiate. Here a weight is computed from ``y`` without
# recording, so the tape treats it as a constant. The gradient of
# ``weight_of_y * y²`` is then :math:`0.96 \cdot 2y \approx 3.686`, and not
# the :math:`1.5 y^2 \approx 5.53` of the recorded :math:`0.5 y^3`:
with mt.GradientTape() as part_tape:
    with part_tape.stop_recording():
        weight_of_y = y * 0.5  # computed, not recorded
    penalty = weight_of_y * y.square()
part_tape.gradient(penalty, y)

# %%
# The text's nested snippet, and why it fails
# -------------------------------------------
#
# The section ends with this TF.js code, meant to show the tape on a part of
# a computation:
#
# .. code-block:: javascript
#
#    tf.tidy(() => {
#      tf.variableGrads(() => {
#        const tape = tf.grad((x) => x.square().add(10));
#        const grad = tape(x);
#      });
#    });
#
# There are two problems. ``tf.grad`` returns a function, not a tape. And the
# arrow function given to ``variableGrads`` has a body in braces with no
# ``return``, so it returns ``undefined``, and TF.js stops with *"The result y
# returned by f() must be a tensor."* A line-by-line translation fails in
# microtape the same way, with the same sentence and a hint:


def body_without_return() -> None:
    grad_fn = mt.grad(lambda s: s.square().add(10))
    grad_fn(x)  # computed, then dropped: nothing is returned


try:
    # The text's bug, on purpose; the comment at the end of the next line tells mypy so.
    mt.tidy(lambda: mt.variable_grads(body_without_return))  # type: ignore[arg-type]
except mt.GradientError as err:
    print(f"{type(err).__name__}: {err}")

# %%
# ``mypy --strict`` spots this before anything runs: ``variable_grads`` wants
# a function that returns a tensor, and this one returns ``None``. (The
# ``type: ignore`` comment in the code above is there only so that this
# chapter can show the error at run time.)
#
# The fix depends on what we wanted. If we wanted the derivative of
# :math:`x^2 + 10` at the current ``x``, ``grad`` alone gives it, with no
# ``variable_grads`` around it. At ``x = 1.28`` we expect :math:`2x = 2.56`:
mt.tidy(lambda: mt.grad(lambda s: s.square().add(10))(x))

# %%
# If we wanted ``variable_grads`` to differentiate something *through* that
# gradient, the function must return it. Then ``variable_grads``
# differentiates :math:`2x` with respect to the variable ``x``, a second
# derivative, so we expect 2:


def body_with_return() -> mt.Tensor:
    return mt.grad(lambda s: s.square().add(10))(x)


value, grads = mt.tidy(lambda: mt.variable_grads(body_with_return))
print(value, grads[x])

# %%
# What we built
# -------------
#
# A tape is a list of records, read backwards. We can list it
# (``operations``), draw it (``to_svg``, or ``to_dot`` for Graphviz) and follow the gradient through it
# (``summary``). A persistent tape answers many questions, nested tapes give
# higher derivatives, and ``jacobian`` keeps the outputs apart.
# ``watch_accessed_variables=False`` and ``stop_recording()`` limit what a
# tape records. TF.js hides
# all of this inside ``tf.grad``, and its ``variableGrads`` needs a function
# that returns the loss.
#
# Next: :chapter:`4` checks gradients: their sign and scale, and against finite differences.
