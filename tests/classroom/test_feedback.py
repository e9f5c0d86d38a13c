"""Feedback that never misleads: each check, fed a wrong answer of each kind it tells apart, says what is true of it.

ex04e once answered the name exactly as the explain table prints it with "the factor
of that step is the true derivative of its op; another step is wrong" (false: it was
the right op), and ex07b said a distance "should be 0 from the exact distance"
without the tolerance. Each row below is a worked solution with one wrong answer
put in, and the words its check must say: true of that answer (how far off it is,
that op is not in the table, it is not a number, the tensors it leaves). The checks
run as the grader runs them (``judge.py``), against the student's code served in
this process through the same messages as over the pipes (``LoopbackTransport``),
at a fixed seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from microtape.classroom import judge
from microtape.classroom.catalog import list_exercises, load_exercise
from microtape.classroom.check_tools import seed_checks
from microtape.classroom.proxy import LoopbackTransport, Session

from .spellings import SOLUTIONS, Edits, spelled
from .test_exercise_checks import grade, load


@dataclass(frozen=True)
class Wrong:
    """A wrong answer: the exercise, the check it is aimed at, what kind of wrong it is, the edits, the words that must come."""

    name: str
    check: str
    kind: str
    edits: Edits
    says: tuple[str, ...]
    status: str = "FAIL"


def w(name: str, check: str, kind: str, edits: Edits, *says: str, status: str = "FAIL") -> Wrong:
    return Wrong(name, check, kind, edits, says, status)


E0, E1, E2, E2B = "ex00_gradient_by_hand", "ex01_variables_sgd", "ex02_linear_model", "ex02b_item_cuts_the_graph"
E3, E3B, E4, E4B, E4C, E4D, E4E = (
    "ex03_second_derivative", "ex03b_unwatched_tensor", "ex04_softplus_vjp", "ex04b_find_the_bug", "ex04c_broadcast_vjp",
    "ex04d_nan_hunt", "ex04e_wrong_factor",
)
E5, E5B, E5C, E6, E6B, E6C, E7, E7B = (
    "ex05_stop_the_leak", "ex05b_tidy_too_eager", "ex05c_leaky_loop", "ex06_exploding_rnn", "ex06b_learning_rate", "ex06c_rescue_the_run",
    "ex07_profile_memory", "ex07b_trace_the_nan",
)
E8A, E8B, E8C, E8D, E8E, E8F = (
    "ex08a_masked_sqrt", "ex08b_log_of_softmax", "ex08c_dead_relu", "ex08d_second_derivative", "ex08e_masked_softmax", "ex08f_optimizer_state",
)
E9, E9B = "ex09_dot_product_test", "ex09b_stable_loss"
LSE = "    top = z.max(axis=-1, keepdims=True)\n    return top + mt.log(mt.exp(z - top).sum(axis=-1, keepdims=True))"
CLIP = "    clipped, _ = mt.clip_by_global_norm(grads, max_norm)\n    return clipped"

WRONG = [
    # ex00
    w(E0, "df_by_hand matches finite differences", "wrong sign of a term", (("return 3.0 * x * x - 2.0", "return 3.0 * x * x + 2.0"),),
      "df_by_hand(-2.0) is wrong: off by about 40 % from the finite differences of f."),
    w(E0, "df_by_hand matches finite differences", "f itself", (("return 3.0 * x * x - 2.0", "return x**3 - 2.0 * x"),),
      "hint: that is f(x) itself: return its derivative"),
    w(E0, "df_by_hand matches finite differences", "a tensor", (("return 3.0 * x * x - 2.0", "return mt.scalar(3.0 * x * x - 2.0)"),),
      "df_by_hand(-2.0) returned a Tensor", "not a Python float; read it with .item()"),
    w(E0, "df_by_hand matches finite differences", "missing", (("def df_by_hand(x: float)", "def df_by_hand_(x: float)"), ("* df_by_hand(x)", "* df_by_hand_(x)")),
      "the file defines no df_by_hand(); the grader calls it by that name."),
    w(E0, "df_with_mt returns f'(x) as a tensor", "a float", (("return mt.grad(f)(x)", "return float(mt.grad(f)(x).sum().item())"),),
      "df_with_mt(x) returned float"),
    w(E0, "df_with_mt returns f'(x) as a tensor", "summed", (("return mt.grad(f)(x)", "return mt.grad(f)(x).sum()"),),
      "df_with_mt(x) returned a tensor of shape (), expected shape (3,)."),
    w(E0, "df_with_mt differentiates f itself", "retyped", (("return mt.grad(f)(x)", "return 3.0 * x * x - 2.0"),),
      "it does not differentiate f"),
    w(E0, "gradient_descent steps downhill", "one step too many", (("for _ in range(steps):", "for _ in range(steps + 1):"),),
      "gradient_descent(2.0, 0.05, 0) is wrong: off by about 20 %."),
    w(E0, "gradient_descent steps downhill", "no step", (("    x = x0\n    for _ in range(steps):\n        x = x - lr * df_by_hand(x)\n    return x", "    return x0"),),
      "gradient_descent(2.0, 0.05, 1) is wrong", "hint: that is x0 itself: take the steps"),
    w(E0, "gradient_descent steps downhill", "uphill", (("x = x - lr * df_by_hand(x)", "x = x + lr * df_by_hand(x)"),),
      "gradient_descent(2.0, 0.05, 1) is wrong: off by about 70 %."),
    w(E0, "gradient_descent steps downhill", "its derivative is wrong", (("return 3.0 * x * x - 2.0", "return 3.0 * x * x + 2.0"),),
      "gradient_descent uses your df_by_hand(), which fails its check above: fix df_by_hand() first."),
    # ex01
    w(E1, "make_weights makes a trainable variable", "a tensor", (("return mt.variable(values)", "return mt.tensor(values)"),),
      "make_weights([1.0, -2.0, 0.5]) returned Tensor, not a Variable."),
    w(E1, "make_weights makes a trainable variable", "frozen", (("return mt.variable(values)", "return mt.variable(values, trainable=False)"),),
      "make_weights(...) returned a variable with trainable=False; weights must be trainable."),
    w(E1, "make_weights makes a trainable variable", "a column", (("return mt.variable(values)", "return mt.variable(mt.tensor(values).reshape((len(values), 1)))"),),
      "make_weights([1.0, -2.0, 0.5]) has shape (3, 1), expected (3,)."),
    w(E1, "make_weights can be called twice", "a fixed name", (("return mt.variable(values)", 'return mt.variable(values, name="w")'),),
      "your code raised VariableError"),
    w(E1, "make_step_counter is a frozen scalar at 0", "trainable", (("return mt.variable(0.0, trainable=False)", "return mt.variable(0.0)"),),
      "make_step_counter() is trainable, so variable_grads and optimizers would change it."),
    w(E1, "make_step_counter is a frozen scalar at 0", "a vector", (("return mt.variable(0.0, trainable=False)", "return mt.variable([0.0], trainable=False)"),),
      "make_step_counter() has shape (1,), expected a scalar, shape ()."),
    w(E1, "make_step_counter is a frozen scalar at 0", "starts at 1", (("return mt.variable(0.0, trainable=False)", "return mt.variable(1.0, trainable=False)"),),
      "make_step_counter() does not start at 0: it should be 0."),
    w(E1, "sgd_step updates the variable in place", "rebinding", (("w.assign_sub(grad * lr)", "w = mt.variable(w - grad * lr)"),),
      "after sgd_step(w, grad, 0.1), w still holds [1.0, 2.0, 3.0]: the variable was not updated."),
    w(E1, "sgd_step updates the variable in place", "uphill", (("w.assign_sub(grad * lr)", "w.assign_add(grad * lr)"),),
      "moved up the gradient", "hint: subtract, do not add"),
    w(E1, "sgd_step updates the variable in place", "a new variable kept", (("w.assign_sub(grad * lr)", "KEPT.append(mt.variable(w - grad * lr))\n    w.assign(KEPT[-1])"),
                                                                           ("import microtape as mt\n", "import microtape as mt\n\nKEPT: list[mt.Variable] = []\n")),
      "sgd_step made 1 new variable(s); an SGD step assigns to the existing one."),
    w(E1, "count_step adds 1 in place", "adds 2", (("counter.assign_add(1.0)", "counter.assign_add(2.0)"),),
      "after 3 calls of count_step(counter), starting at 0, the counter is wrong: about 2 times too large."),
    # ex02
    w(E2, "loss_fn is the mean squared error", "the sum", (("return ((X * w + b - Y) ** 2).mean()", "return ((X * w + b - Y) ** 2).sum()"),),
      "loss_fn(w=0.5, b=0.0) is wrong: about 4 times too large.", "hint: that is the sum of the squared errors: take the mean"),
    w(E2, "gradients gives dL/dw and dL/db", "swapped", (("return grads[w], grads[b]", "return grads[b], grads[w]"),),
      "(dL/dw, dL/db) at w=0.5, b=0.0 is wrong", "hint: dw and db are swapped: return dw first"),
    w(E2, "gradients gives dL/dw and dL/db", "its loss is wrong", (("return ((X * w + b - Y) ** 2).mean()", "return ((X * w + b - Y) ** 2).sum()"),),
      "gradients uses your loss_fn(), which fails its check above: fix loss_fn() first."),
    w(E2, "gradients gives dL/dw and dL/db", "a list", (("return grads[w], grads[b]", "return [grads[w], grads[b]]"),),
      "gradients(w, b) returned list, expected a pair (dw, db)."),
    w(E2, "gradients leaves only dw and db alive", "no tidy", (("return mt.tidy(step)", "return step()"),),
      "one call of gradients(w, b) left 3 new tensor(s) alive, expected exactly 2 (dw and db)."),
    w(E2, "train fits y = 2x - 1", "one step too many", (("    for _ in range(steps):\n\n        def step() -> None:", "    for _ in range(steps + 1):\n\n        def step() -> None:"),),
      "returns is not that of", "SGD steps from w = b = 0: off by about"),
    w(E2, "train leaves no tensors behind", "a variable from a tensor", (("w = mt.variable(0.0)", "w = mt.variable(mt.scalar(0.0))"),),
      "train(20, 0.05) left 1 tensor(s) alive; memory must stay flat.", "another train(20, 0.05) leaves 1 x tensor (ex02_linear_model.py:"),
    # ex02b
    w(E2B, "the loss has the same values", "another model", (("A * mt.tanh(w)", "A * w"),), "loss_fn(w=0.3, b=-0.2) is wrong"),
    w(E2B, "the gradient reaches w", "cut again", (("A * mt.tanh(w)", "A * mt.tanh(mt.scalar(float(w.item())))"),),
      "tape.gradient(loss_fn(w, b), w) is None: no recorded op connects w to the loss."),
    w(E2B, "train fits w and b", "another rate", (("variable.assign_sub(gradient * lr)", "variable.assign_sub(gradient * lr * 0.5)"),),
      "returns is not that of", "SGD steps from 0: off by about"),
    w(E2B, "train fits w and b", "its loss is cut", (("A * mt.tanh(w)", "A * mt.tanh(mt.scalar(float(w.item())))"),),
      "train uses your loss_fn(), whose gradient does not reach w (the check above): fix that first."),
    # ex03
    w(E3, "second_derivative matches f''", "the first derivative", (("d2y_dx2 = outer.gradient(dy_dx, x)", "d2y_dx2 = dy_dx"),),
      "second_derivative(x**3) at x = [-1.5, 0.5, 2.0] is wrong", "hint: that is the first derivative: differentiate it once more"),
    w(E3, "second_derivative matches f''", "the inner gradient too late",
      (("        dy_dx = inner.gradient(y, x)  # computed while the outer tape records\n", ""),
       ("    assert dy_dx is not None  # f uses x", "    dy_dx = inner.gradient(y, x)\n    assert dy_dx is not None  # f uses x")),
      "your code raised AssertionError (ex03_second_derivative.py:"),
    w(E3, "minimize_paraboloid does SGD on x² + y²", "a double step", (("x.assign_sub(dx * lr)", "x.assign_sub(dx * lr * 2.0)"),),
      "minimize_paraboloid(2.0, 3.0, lr=0.1, steps=1) is wrong at entry 0: off by about 30 %."),
    w(E3, "minimize_paraboloid does SGD on x² + y²", "a list", (("return x.item(), y.item()", "return [x.item(), y.item()]"),),
      "minimize_paraboloid returned list, expected a pair of floats (x, y)."),
    # ex03b
    w(E3B, "input_gradient returns d model / dx", "not watched", (("        tape.watch(x)  # a plain tensor is recorded only when watched\n", ""),),
      "input_gradient(x) is None: the tape has no record of how the output depends on x."),
    w(E3B, "all_gradients returns the gradients for x, W and V", "asked twice",
      (("    dx, dw, dv = tape.gradient(y, [x, W, V])  # one question: a tape answers once",
        "    dx = tape.gradient(y, x)\n    dw = tape.gradient(y, W)\n    dv = tape.gradient(y, V)"),),
      "your code raised TapeError (ex03b_unwatched_tensor.py:"),
    w(E3B, "all_gradients returns the gradients for x, W and V", "a doubled gradient", (("    return dx, dw, dv", "    return dx, dw * 2.0, dv"),),
      "all_gradients(x): d/dW at x = [0.5, -1.0, 2.0, 0.25, -0.75, 1.0] (compared with finite differences) is wrong at entry 0: off by about 100 % (6 of 6 entries are wrong)."),
    # ex04
    w(E4, "softplus computes log(1 + e^x)", "another forward", (("value = mt.log(1.0 + mt.exp(x))", "value = mt.exp(x)"),),
      "softplus([-3.0, -1.0, 0.0, 0.7, 2.5]) is wrong at entry 0"),
    w(E4, "softplus is one custom_grad op", "no decorator", (("@mt.custom_grad\ndef softplus", "def _softplus"),
                                                                ("    return value, grad_fn\n", "    return value, grad_fn\n\n\ndef softplus(x: mt.Tensor) -> mt.Tensor:\n    return mt.log(1.0 + mt.exp(x))\n")),
      "the tape recorded ['exp', 'add', 'log'], expected one op named 'custom_grad(...)'."),
    w(E4, "the VJP agrees with finite differences", "another derivative", (("[dy * mt.sigmoid(x)]", "[dy * mt.exp(x)]"),),
      "softplus at [-3.0, -1.0, 0.0, 0.7, 2.5]: check_grads failed", "culprit: the VJP of 'custom_grad(softplus)'"),
    w(E4, "the VJP agrees with finite differences", "no dy", (("[dy * mt.sigmoid(x)]", "[mt.sigmoid(x)]"),), "hint: did you multiply by dy?"),
    w(E4, "the VJP can be differentiated again", "python floats",
      (("from __future__ import annotations\n", "from __future__ import annotations\n\nimport math\n"),
       ("return [dy * mt.sigmoid(x)]", "return [dy * mt.tensor([1.0 / (1.0 + math.exp(-v)) for v in x.data_sync()])]")),
      "(second derivative)"),
    w(E4, "prove() returns a passing order-2 check", "order 1", (("check_grads(softplus, [x], order=2)", "check_grads(softplus, [x])"),),
      "prove() checked order=1; the second derivative must be checked too."),
    w(E4, "prove() returns a passing order-2 check", "two points", (("mt.tensor([-3.0, -1.0, 0.0, 0.5, 2.0])", "mt.tensor([0.0, 1.0])"),),
      "prove() checked softplus at 2 point(s) in mode='full'; check at least 3 points in full mode."),
    w(E4, "prove() returns a passing order-2 check", "a string", (("return mt.check_grads(softplus, [x], order=2)", "return str(mt.check_grads(softplus, [x], order=2))"),),
      "prove() returned str, not the report of mt.check_grads."),
    # ex04b
    w(E4B, "CULPRIT names the op with the wrong VJP", "not a string", (('CULPRIT = "custom_grad(swish)"', "CULPRIT = 3"),),
      "CULPRIT is 3, expected a str such as 'custom_grad(some_op)'."),
    w(E4B, "CULPRIT names the op with the wrong VJP", "another op of the model", (('CULPRIT = "custom_grad(swish)"', 'CULPRIT = "custom_grad(scaled_tanh)"'),),
      "CULPRIT = 'custom_grad(scaled_tanh)': the culprit line of check_grads(model, [W, X]) on the starter names another op, whose VJP is the wrong one."),
    w(E4B, "CULPRIT names the op with the wrong VJP", "not an op of the model", (('CULPRIT = "custom_grad(swish)"', 'CULPRIT = "relu"'),),
      "CULPRIT = 'relu' is not an op of the model: its ops are matmul, custom_grad(swish), custom_grad(scaled_tanh), custom_grad(smooth_abs), sum, div."),
    w(E4B, "CULPRIT names the op with the wrong VJP", "still the starter's", (('CULPRIT = "custom_grad(swish)"', 'CULPRIT = "TODO 1: later"'),),
      "not done yet: TODO 1: later", status="TODO"),
    w(E4B, "the model's gradient agrees with finite differences", "the fix is wrong", (("[dy * (s + x * s * (1.0 - s))]", "[dy * (s + x * (1.0 - s))]"),),
      "model(w, x): check_grads failed", "culprit: the VJP of 'custom_grad(swish)' called at ex04b_find_the_bug.py:"),
    w(E4B, "every custom op passes check_grads alone", "no dy", (("[dy * (s + x * s * (1.0 - s))]", "[s + x * s * (1.0 - s)]"),),
      "swish at [-1.5, -0.2, 0.0, 0.7, 2.0]: check_grads failed", "hint: did you multiply by dy?"),
    w(E4B, "the forward values are unchanged", "the forward fixed instead",
      (("return x * s, lambda dy, saved: [dy * (s + x * s * (1.0 - s))]", "return x * 0.5, lambda dy, saved: [dy * 0.5]"),),
      "swish([-1.5, -0.2, 0.0, 0.7, 2.0]) is wrong at entry 0"),
    # ex04c
    w(E4C, "center still computes x - b", "x + b", (("return x - b, grad_fn", "return x + b, grad_fn"),), "center(x, b) with x of shape (4, 3) is wrong at entry 0"),
    w(E4C, "center is one custom_grad op", "no decorator", (("@mt.custom_grad\ndef center", "def _center"),
                                                             ("    return x - b, grad_fn\n", "    return x - b, grad_fn\n\n\ndef center(x: mt.Tensor, b: mt.Tensor) -> mt.Tensor:\n    return x - b\n")),
      "the tape recorded ['sub'], expected one op named 'custom_grad(...)'."),
    w(E4C, "the VJP agrees with finite differences", "the wrong sign", (("[dy, -dy.sum(axis=0)]", "[dy, dy.sum(axis=0)]"),),
      "d out[0,1] / d b[1]", "hint: b's gradient has the wrong sign: what is the derivative of x - b with respect to b?"),
    w(E4C, "the VJP agrees with finite differences", "the wrong shape", (("[dy, -dy.sum(axis=0)]", "[dy, -dy]"),),
      "the gradient of center(x, b) cannot be computed: ShapeError", "hint: b's gradient must have b's shape: add up the rows its contribution came from"),
    w(E4C, "the VJP agrees with finite differences", "no dy", (("[dy, -dy.sum(axis=0)]", "[mt.ones_like(dy), -mt.ones_like(dy).sum(axis=0)]"),),
      "hint: did you multiply by dy? Each gradient is built from dy"),
    w(E4C, "the model's gradient agrees with finite differences", "its center is wrong", (("[dy, -dy.sum(axis=0)]", "[dy, dy.sum(axis=0)]"),),
      "model uses your center(), whose VJP fails its check above: fix center() first."),
    # ex04d
    w(E4D, "log_sum_exp is exact for small and large inputs", "clipped logits", ((LSE, "    return mt.log(mt.exp(z.clip_by_value(-700.0, 700.0)).sum(axis=-1, keepdims=True))"),),
      "log_sum_exp of the rows [[1.0, 2.0, 3.0], [1000.0, 999.0, 0.0]"),
    w(E4D, "log_sum_exp is exact for small and large inputs", "still overflows", ((LSE, "    return mt.log(mt.sum(mt.exp(z), axis=-1, keepdims=True))"),),
      "log_sum_exp([1000.0, 999.0, 0.0]) = inf: an overflow (or underflow) on the way."),
    w(E4D, "its gradient is the softmax, finite everywhere", "cut", ((LSE, "    return mt.tensor([[v] for v in [0.0] * z.shape[0]]) + mt.logsumexp(z, axis=-1, keepdims=True).data_sync()[0] * 0.0 + mt.tensor(mt.logsumexp(z, axis=-1, keepdims=True).data_sync()).reshape((z.shape[0], 1))"),),
      "the gradient of sum(log_sum_exp(z)) with respect to z is None: the path from z is cut."),
    w(E4D, "train runs to the end with a finite loss", "another rate", (("w.assign_sub(grads[w] * lr)", "w.assign_sub(grads[w] * lr * 0.5)"),),
      "train(100, 0.5): the loss of step 1 is wrong"),
    w(E4D, "train runs to the end with a finite loss", "its log_sum_exp overflows", ((LSE, "    return mt.log(mt.sum(mt.exp(z), axis=-1, keepdims=True))"),),
      "train uses your log_sum_exp(), which fails its check above: fix log_sum_exp() first."),
    # ex04e
    w(E4E, "WRONG_OP names the op whose factor is wrong", "not a string", (('WRONG_OP = "custom_grad(cube)"', "WRONG_OP = None"),),
      "WRONG_OP is None, expected a str such as 'custom_grad(some_op)'."),
    w(E4E, "WRONG_OP names the op whose factor is wrong", "another op of the table", (('WRONG_OP = "custom_grad(cube)"', 'WRONG_OP = "custom_grad(softsign)[2]"'),),
      "WRONG_OP = 'custom_grad(softsign)[2]': in the starter's table that step's factor is the true derivative of its op; another step's is wrong."),
    w(E4E, "WRONG_OP names the op whose factor is wrong", "not an op of the table", (('WRONG_OP = "custom_grad(cube)"', 'WRONG_OP = "cubic"'),),
      "WRONG_OP = 'cubic' is not an op of this table: the table's names are sum, mul[2], custom_grad(softsign)[2], custom_grad(cube)[2]."),
    w(E4E, "WRONG_FACTOR is the factor the table shows for that op", "the right derivative", (("WRONG_FACTOR = -6.0", "WRONG_FACTOR = 12.0"),),
      "WRONG_FACTOR = 12.0 is the right derivative of x³ at X[2]; the table showed what the wrong VJP gives."),
    w(E4E, "WRONG_FACTOR is the factor the table shows for that op", "another number", (("WRONG_FACTOR = -6.0", "WRONG_FACTOR = 0.5"),),
      "WRONG_FACTOR = 0.5 is not the local derivative the table shows for the wrong step (rounded as the table rounds it)."),
    w(E4E, "WRONG_FACTOR is the factor the table shows for that op", "still 0", (("WRONG_FACTOR = -6.0", "WRONG_FACTOR = 0.0"),),
      "not done yet: WRONG_FACTOR is still 0.0", status="TODO"),
    w(E4E, "energy's gradient agrees with finite differences", "not fixed", (("lambda dy: dy * 3.0 * x * x", "lambda dy: dy * 3.0 * x"),),
      "energy at [0.5, 1.5, -2.0]: check_grads failed"),
    w(E4E, "the forward values are unchanged", "another cube", (("return x * x * x, lambda", "return x * x, lambda"),), "cube([0.5, 1.5, -2.0]) is wrong at entry 0"),
    # ex05
    w(E5, "train_step makes a correct SGD step", "another rate", (("w.assign(w - lr * grads[w])", "w.assign(w - 2.0 * lr * grads[w])"),),
      "w after one train_step(w=[0.5, -0.25], lr=0.1) is wrong"),
    w(E5, "evaluate returns the loss", "the sum", (("return mt.tidy(lambda: mse(predict(w, X), Y).item())", "return mt.tidy(lambda: mse(predict(w, X), Y).item() * 4.0)"),),
      "evaluate(w=[1.0, 0.5]) is wrong: about 4 times too large."),
    w(E5, "train_step leaves no tensors behind", "no tidy", (("    return mt.tidy(step)", "    return step()"),),
      "after each of 5 calls of train_step,", "tensor(s) leak per call.", "one more call leaves"),
    w(E5, "evaluate leaves no tensors behind", "no tidy", (("return mt.tidy(lambda: mse(predict(w, X), Y).item())", "return mse(predict(w, X), Y).item()"),),
      "after each of 5 calls of evaluate, [4, 8, 12, 16, 20] more tensors were alive than before the first: 4 tensor(s) leak per call.",
      "one more call leaves 1 x matmul (ex05_stop_the_leak.py:"),
    # ex05b
    w(E5B, "transform works after fit and gives z-scores", "too eager", (("        self.mean, self.std = mt.tidy(compute)  # returned from tidy: they survive it",
                                                                        "        self.mean, self.std = compute()\n        mt.dispose([self.mean, self.std])"),),
      "your code raised DisposedTensorError (ex05b_tidy_too_eager.py:"),
    w(E5B, "transform works after fit and gives z-scores", "the sample std", (("mt.sqrt(((data - mean) ** 2).mean(axis=0))", "mt.sqrt(((data - mean) ** 2).sum(axis=0) / (data.shape[0] - 1))"),),
      "transform(the fitted rows) after fit on 5 rows of 2 columns is wrong at entry 0"),
    w(E5B, "fit leaves at most the mean and the std alive", "no tidy", (("        self.mean, self.std = mt.tidy(compute)  # returned from tidy: they survive it", "        self.mean, self.std = compute()"),),
      "one fit left 5 new tensor(s) alive, expected at most 2 (the mean and the std).", "another fit leaves"),
    # ex05c
    w(E5C, "fit trains and returns the losses as floats", "tensors", (("            return loss.item()  # a float survives the tidy; the loss tensor does not", "            return loss"),
                                                                    ("        history.append(mt.tidy(step))", "        history.append(mt.tidy(step))  # type: ignore")),
      "fit(...) loss 0 returned a Tensor"),
    w(E5C, "fit trains and returns the losses as floats", "another rate", (("w.assign_sub(grads[w] * lr)", "w.assign_sub(grads[w] * lr * 2.0)"),),
      "the losses of fit(w=[0.0, 0.0], 4, 0.1) is wrong at entry 1"),
    w(E5C, "fit leaves no tensors behind", "a rate tensor", (("w.assign_sub(grads[w] * lr)", "w.assign_sub(grads[w] * mt.keep(mt.scalar(lr)))"),),
      "fit(w, 1, 0.05) left 1 tensor(s) alive; training must leave memory flat.", "another fit(w, 3, 0.05) leaves 3 x tensor (ex05c_leaky_loop.py:", "kept with mt.keep)"),
    # ex06
    w(E6, "clipped_grads rescales to the global norm", "each by its own norm", ((CLIP, "    return [mt.clip_by_norm(g, max_norm) for g in grads]"),),
      "after clipped_grads(grads, 1.0) the global norm is", "above max_norm", "hint: each gradient was clipped by its own norm: clip by the norm of all of them together"),
    w(E6, "clipped_grads rescales to the global norm", "by value", ((CLIP, "    return [mt.clip_by_value(g, -max_norm / 2.0, max_norm / 2.0) for g in grads]"),),
      "the gradients were not all scaled by the same positive factor, so their direction changed."),
    w(E6, "clipped_grads rescales to the global norm", "half the norm", ((CLIP, "    clipped, _ = mt.clip_by_global_norm(grads, max_norm / 2.0)\n    return clipped"),),
      "the global norm after clipping should be max_norm exactly, and it is about 2 times too small."),
    w(E6, "clipped_grads leaves small gradients alone", "always scaled", ((CLIP, "    norm = mt.sqrt(sum([mt.sum(g * g) for g in grads[1:]], mt.sum(grads[0] * grads[0])))\n    return [g * (max_norm / norm) for g in grads]"),),
      "clipped_grads(grads, 1.0) below the limit, flattened is wrong at entry 0"),
    w(E6, "train_rnn converges with clipping", "clipped by value", (("dw, du = clipped_grads(raw, max_norm)", "dw, du = [mt.clip_by_value(g, -100.0, 100.0) for g in raw]"),),
      "train_rnn"),
    w(E6, "the monitor saw the explosion", "clipped before recording", (('monitor.record({"w": raw[0], "u": raw[1]})  # the raw norms: see the explosion\n            dw, du = clipped_grads(raw, max_norm)',
                                                                           'dw, du = clipped_grads(raw, max_norm)\n            monitor.record({"w": dw, "u": du})'),),
      "the monitor's first global norm is 1.0, not the raw gradient norm at w=1.25, u=0.5", "(were the gradients clipped before recording?)"),
    w(E6, "the monitor saw the explosion", "never recorded", (('monitor.record({"w": raw[0], "u": raw[1]})  # the raw norms: see the explosion', "pass"),),
      "recorded 0 steps in the monitor, expected one per step"),
    # ex06b
    w(E6B, "stability_limit is 2 / λ_max, from the data", "2 / λ_min", (("lam_max = (trace + math.sqrt(", "lam_max = (trace - math.sqrt("),),
      "stability_limit() with XS = [1.0, 2.0, 3.0, 4.0, 5.0] is not 2 / λ_max", "hint: that is 2 / λ_min: the limit comes from the largest eigenvalue"),
    w(E6B, "stability_limit is 2 / λ_max, from the data", "fixed data", (("n = len(XS)", "XS_ = [1.0, 2.0, 3.0, 4.0, 5.0]\n    n = len(XS_)"), ("sum(x * x for x in XS)", "sum(x * x for x in XS_)"), ("sum(XS) / n", "sum(XS_) / n")),
      "stability_limit() with XS = [0.5, 1.0, -2.0, 3.0] is not 2 / λ_max"),
    w(E6B, "fit(LR, 300) converges", "above the limit", (("LR = 0.08  # below the limit 0.0845", "LR = 0.09"),), "the rate is above the stability limit: the loss grows."),
    w(E6B, "fit(LR, 300) converges", "far below", (("LR = 0.08  # below the limit 0.0845", "LR = 0.001"),),
      "the rate is below the stability limit, but so far below that 300 steps are not enough."),
    # ex06c
    w(E6C, "the model is unchanged", "another target", (("return (h - TARGET) ** 2", "return (h - TARGET * 2.0) ** 2"),), "loss_fn(w=1.2, u=0.3) is wrong"),
    w(E6C, "train(150, 0.05) converges from the same start", "another start", (("w, u = mt.variable(W0), mt.variable(U0)", "w, u = mt.variable(0.8), mt.variable(U0)"),),
      "is not the loss at the starting point (1.2, 0.3)", "keep the start."),
    w(E6C, "train(150, 0.05) converges from the same start", "not rescued", (("gs, _ = mt.clip_by_global_norm([grads[w], grads[u]], 1.0)  # each step at most lr long",
                                                                             "gs = [grads[w], grads[u]]"),),
      "the run still explodes."),
    w(E6C, "train(150, 0.05) converges from the same start", "too careful", (("gs, _ = mt.clip_by_global_norm([grads[w], grads[u]], 1.0)  # each step at most lr long",
                                                                              "gs, _ = mt.clip_by_global_norm([grads[w], grads[u]], 1e-4)"),),
      "expected a drop of more than 1000x."),
    # ex07
    w(E7, "leftover_tensors counts what a call leaves alive", "bytes", (("return mt.memory().num_tensors - before", "return (mt.memory().num_tensors - before) * 8"),),
      "leftover_tensors(a function making 3 tensors) is wrong: it counts too many tensors."),
    w(E7, "leftover_tensors counts what a call leaves alive", "a float", (("return mt.memory().num_tensors - before", "return float(mt.memory().num_tensors - before)"),),
      "leftover_tensors(fn) returned float, not an int."),
    w(E7, "profile_layer profiles layer inside tidy", "no tidy", (("return mt.profile(lambda: mt.tidy(lambda: layer(x, w)))", "return mt.profile(lambda: layer(x, w))"),),
      "the profile reports new_tensors=3, expected 1: only layer's result should survive."),
    w(E7, "profile_layer profiles layer inside tidy", "its result", (("return mt.profile(lambda: mt.tidy(lambda: layer(x, w)))", "return mt.profile(lambda: mt.tidy(lambda: layer(x, w))).result"),),
      "profile_layer(x, w) returned Tensor, not what mt.profile returns."),
    w(E7, "profile_layer profiles layer inside tidy", "layer twice", (("return mt.profile(lambda: mt.tidy(lambda: layer(x, w)))", "return mt.profile(lambda: mt.tidy(lambda: layer(x, w) + 0.0 * layer(x, w)))"),),
      "the profile saw the kernels"),
    w(E7, "extra_peak_bytes measures the peak above what was alive", "no baseline", (("return mt.profile(fn).peak_bytes - before", "return mt.profile(fn).peak_bytes"),),
      "it counts too many bytes.", "hint: the profile's peak counts every live tensor, and some of them were alive before fn started"),
    # ex07b
    w(E7B, "FIRST_OP and FIRST_PASS name where the trace starts", "another op", (('FIRST_OP = "sqrt"', 'FIRST_OP = "exp"'),),
      "FIRST_OP = 'exp', but the trace names another op first."),
    w(E7B, "FIRST_OP and FIRST_PASS name where the trace starts", "the other pass", (('FIRST_PASS = "backward"', 'FIRST_PASS = "forward"'),),
      "FIRST_PASS = 'forward': sqrt made its non-finite value in the other pass."),
    w(E7B, "FIRST_OP and FIRST_PASS name where the trace starts", "not a string", (('FIRST_PASS = "backward"', "FIRST_PASS = 2"),),
      "FIRST_PASS is 2, expected a str."),
    w(E7B, "distance is exact, and its gradient finite even at a point on the center", "a large epsilon", (("+ 1e-14)", "+ 1e-6)"),),
      "distance from [0.0, 0.0] to [0.0, 0.0] is 0.001: it should be 0 from the exact distance, more than the 1e-06 allowed."),
    w(E7B, "distance is exact, and its gradient finite even at a point on the center", "no epsilon", (("+ 1e-14)", ")"),),
      "with the center [0.0, 0.0] on one of the points", "the gradient is [nan, nan]: not finite."),
    w(E7B, "fit runs to the end with finite losses that fall", "its distance is not finite", (("+ 1e-14)", ")"),),
      "fit uses your distance(), which fails its check above: fix distance() first."),
    # ex08a
    w(E8A, "rooted keeps its values: √x where x > 0, 0 elsewhere", "shifted by an epsilon", (("mt.sqrt(safe)", "mt.sqrt(safe + 1e-3)"),),
      "rooted([-4.0, 0.0, 2.25, 9.0]) is wrong at entry 2: "),
    w(E8A, "the gradient of rooted is finite: 1/(2√x) where x > 0, 0 elsewhere", "one where only", (("mt.sqrt(safe)", "mt.sqrt(x)"),),
      "the gradient of rooted at [-4.0, 0.0, 2.25, 9.0] is nan at x = -4.0: not finite."),
    w(E8A, "the gradient of rooted is finite: 1/(2√x) where x > 0, 0 elsewhere", "cut", (("return mt.where(x.greater(0.0), mt.sqrt(safe), mt.zeros_like(x))", "return mt.tensor(mt.where(x.greater(0.0), mt.sqrt(safe), mt.zeros_like(x)).data_sync())"),),
      "the gradient of rooted(x).sum() is None: the path from x is cut."),
    # ex08b
    w(E8B, "cross_entropy is exact, for logits near and far apart", "epsilon", (("mt.log_softmax(z)", "mt.log(mt.softmax(z) + 1e-7)"),),
      "cross_entropy([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], [[1000.0, 0.0, -1000.0], [0.5, -0.5, 2.0]]) is wrong: "),
    w(E8B, "cross_entropy is exact, for logits near and far apart", "log of a zero", (("mt.log_softmax(z)", "mt.log(mt.softmax(z))"),),
      "= nan: a log of 0 (or an overflow) on the way."),
    w(E8B, "its gradient is (softmax(z) - labels) / rows", "cut", (("return -(labels * mt.log_softmax(z)).sum(axis=-1).mean()",
      "return mt.tensor(-(labels * mt.log_softmax(z)).sum(axis=-1).mean().item())"),),
      "the gradient of cross_entropy with respect to the logits is None: the path from the logits is cut."),
    w(E8B, "its gradient is (softmax(z) - labels) / rows", "summed over the rows", ((".sum(axis=-1).mean()", ".sum()"),),
      "the gradient of cross_entropy at the logits [[1000.0, 0.0, -1000.0], [0.5, -0.5, 2.0]] is wrong at entry 0: about 2 times too large"),
    # ex08c
    w(E8C, "ZERO_SHARE is the share of zeros grad_stats reports", "a fraction", (("ZERO_SHARE = 100.0", "ZERO_SHARE = 1.0"),),
      "ZERO_SHARE = 1.0, but grad_stats reports another share of zeros for w at the start."),
    w(E8C, "ZERO_SHARE is the share of zeros grad_stats reports", "with a % sign", (("ZERO_SHARE = 100.0", 'ZERO_SHARE = "100.0%"'),),
      "ZERO_SHARE returned str '100.0%', not a number."),
    w(E8C, "predict is linear: its outputs may be negative", "relu kept", (("return x @ w", "return mt.relu(x @ w)"),),
      "predict([[1.0, 2.0], [0.5, 1.5]], w = [-0.5, -0.8]) is wrong at entry 0: it is 0 and should not be"),
    w(E8C, "fit learns: its losses are those of gradient descent, and they fall", "a leaky relu", (("return x @ w", "return mt.maximum(x @ w, 0.01 * (x @ w))"),),
      "the losses of fit(30, 0.1) is wrong at entry 0: "),
    # ex08d
    w(E8D, "ORDER_2_VERDICT is the verdict check_grads gives at order 2", "order 1's", (('ORDER_2_VERDICT = "FAILED"', 'ORDER_2_VERDICT = "passed"'),),
      "ORDER_2_VERDICT = 'passed', but check_grads gives another verdict at order 2."),
    w(E8D, "ORDER_2_VERDICT is the verdict check_grads gives at order 2", "a bool", (('ORDER_2_VERDICT = "FAILED"', "ORDER_2_VERDICT = False"),),
      "ORDER_2_VERDICT is False, expected a str."),
    w(E8D, "cube_op is x³, and its first derivative 3x²", "factor 2", (("lambda dy: dy * 3.0 * x * x", "lambda dy: dy * 2.0 * x * x"),),
      "the first derivative of cube_op at [0.5, -1.5, 2.0] is wrong at entry 0: "),
    w(E8D, "its second derivative is 6x", "a constant again", (("lambda dy: dy * 3.0 * x * x", "lambda dy: dy * 3.0 * mt.stop_gradient(x * x)"),),
      "the second derivative of cube_op at [0.5, -1.5, 2.0] is None: the outer derivative does not see the rule depend on x."),
    # ex08e
    w(E8E, "masked_softmax keeps its values: a softmax over the kept entries, 0 elsewhere", "no outer where",
      (("return mt.where(keep.greater(0.5), mt.softmax(scores + bias), mt.zeros_like(scores))", "return mt.softmax(scores + bias)"),),
      "masked_softmax([[0.3, 1.2, -0.4], [2.0, -1.0, 0.5]], keep = [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]) is wrong at entry 3: "),
    w(E8E, "its gradient is finite and right, also in a row that keeps nothing", "-inf again", (("- 1e9)", "- math.inf)"), ("import microtape as mt", "import math\n\nimport microtape as mt")),
      "the gradient of masked_softmax at the scores [[0.3, 1.2, -0.4], [2.0, -1.0, 0.5]], keep = [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]], has 3 non-finite entries (the first is nan)."),
    w(E8E, "its gradient is finite and right, also in a row that keeps nothing", "cut",
      (("return mt.where(keep.greater(0.5), mt.softmax(scores + bias), mt.zeros_like(scores))", "return mt.tensor(mt.where(keep.greater(0.5), mt.softmax(scores + bias), mt.zeros_like(scores)).data_sync(), shape=scores.shape)"),),
      "the gradient of masked_softmax with respect to the scores is None: the path from the scores is cut."),
    # ex08f
    w(E8F, "train returns the losses of momentum, as floats", "tensors", (("return loss.item()", "return loss"),),
      "train(...) loss 0"),
    w(E8F, "train returns the losses of momentum, as floats", "after the update", (("losses: list[float] = []", "losses: list[float] = []\n    OPTIMIZER.minimize(lambda: loss_fn(w), var_list=[w])"),),
      "the losses of train(5) is wrong at entry 0: "),
    w(E8F, "train leaves no tensors behind, however many times it runs", "state kept", (("    OPTIMIZER.dispose()", "    pass"),),
      "1 call(s) of train(4) left 1 tensor(s) alive; training must leave memory flat."),
    # ex09
    w(E9, "dot_test returns <u, J v> and <J^T u, v>", "cotangent left out", (("(f(t) * u).sum()", "f(t).sum()"),),
      "dot_test of W @ tanh(x) at x = [", "is wrong at entry 1: "),
    w(E9, "dot_test returns <u, J v> and <J^T u, v>", "a list", (("return (u * jv).sum().item(), (jtu * v).sum().item()", "return [(u * jv).sum().item(), (jtu * v).sum().item()]"),),
      "dot_test(...) returned list, expected a tuple of two floats."),
    w(E9, "dot_test returns <u, J v> and <J^T u, v>", "tensors", (("return (u * jv).sum().item(), (jtu * v).sum().item()", "return (u * jv).sum(), (jtu * v).sum()"),),
      "the first side", "Tensor"),
    w(E9, "dot_test tells a VJP that ignores dy from a right one", "one side twice",
      (("return (u * jv).sum().item(), (jtu * v).sum().item()", "return (jtu * v).sum().item(), (jtu * v).sum().item()"),),
      "with a VJP that ignores dy gave", "the two sides must differ there."),
    w(E9, "soft_abs's VJP is right for every dy", "dy forgotten", (("[dy * x / mt.sqrt(x * x + 1.0)]", "[x / mt.sqrt(x * x + 1.0)]"),),
      "soft_abs at [0.5, -1.5, 2.0, 0.1]: check_grads failed", "hint: did you multiply by dy?"),
    w(E9, "soft_abs's VJP is right for every dy", "forward changed", (("mt.sqrt(x * x + 1.0), lambda", "mt.sqrt(x * x + 2.0), lambda"),),
      "soft_abs([0.5, -1.5, 2.0, 0.1]) is wrong at entry 0: "),
    # ex09b
    w(E9B, "bce is exact for small and large logits", "naive", (("return (mt.softplus(logits) - logits * labels).mean()",
      "return -(labels * mt.log(mt.sigmoid(logits)) + (1.0 - labels) * mt.log(1.0 - mt.sigmoid(logits))).mean()"),),
      "bce(labels, [2.0, -3.0, 40.0, -800.0, 1000.0]) = inf: an overflow (or a log of 0) on the way."),
    w(E9B, "bce is exact for small and large logits", "sign of the label term", (("- logits * labels", "+ logits * labels"),),
      "bce([0.0, 1.0, 0.0, 1.0, 0.5], [2.0, -3.0, 40.0, -800.0, 1000.0]) is wrong: "),
    w(E9B, "its gradient is (sigmoid(z) - labels) / n, finite everywhere", "cut", (("return (mt.softplus(logits) - logits * labels).mean()",
      "return mt.tensor((mt.softplus(logits) - logits * labels).mean().item())"),),
      "the gradient of bce with respect to the logits is None: the path from the logits is cut."),
    w(E9B, "its gradient is (sigmoid(z) - labels) / n, finite everywhere", "a hidden NaN", (("- logits * labels).mean()", "- logits * labels + 0.0 * mt.sqrt(logits - logits)).mean()"),),
      "the gradient of bce at the logits [2.0, -3.0, 40.0, -800.0, 1000.0] has 5 non-finite entries (the first is nan)."),
]


def test_every_check_of_every_exercise_is_fed_a_wrong_answer() -> None:
    aimed = {(row.name, row.check) for row in WRONG}
    for name in list_exercises():
        exercise = load_exercise(name)
        assert exercise is not None
        missing = [c.name for c in exercise.checks if (name, c.name) not in aimed]
        assert not missing, f"{name}: no wrong answer aimed at {missing}"


@pytest.mark.parametrize("row", WRONG, ids=lambda row: f"{row.name}-{row.kind}")
def test_a_wrong_answer_gets_words_true_of_it(row: Wrong) -> None:
    exercise = load_exercise(row.name)
    assert exercise is not None
    [check] = [c for c in exercise.checks if c.name == row.check]
    session = Session(LoopbackTransport(), str(SOLUTIONS / f"{row.name}.py"))
    module = session.load(spelled(row.name, row.edits))
    seed_checks(11, check.name)
    status, details = judge.run_check(check, module, session)
    session.end()
    text = f"{status} " + "\n".join(details)
    assert status == row.status, text
    for words in row.says:
        assert words in text, f"{words!r} not in:\n{text}"


def _local(name: str, source: str, check_name: str, seed: int) -> str:
    exercise = load_exercise(name)
    assert exercise is not None
    [check] = [c for c in exercise.checks if c.name == check_name]
    seed_checks(seed, check.name)
    results = grade(name, load(name, source), seed)
    return results[check.name]


PARITY = [(name, spelled(name, ()), "worked") for name in list_exercises()] + [(row.name, spelled(row.name, row.edits), row.kind) for row in WRONG]


@pytest.mark.parametrize(("name", "source", "label"), PARITY, ids=[f"{n}-{label}" for n, _, label in PARITY])
def test_a_check_says_the_same_in_this_process_and_across_the_channel(name: str, source: str, label: str) -> None:
    """The fast tests run the checks against a module in this process; the grader across the channel. They must agree."""
    exercise = load_exercise(name)
    assert exercise is not None
    session = Session(LoopbackTransport(), str(SOLUTIONS / f"{name}.py"))
    module = session.load(source)
    for check in exercise.checks:
        seed_checks(5, check.name)
        status, details = judge.run_check(check, module, session)
        session.end()
        local = _local(name, source, check.name, 5)
        if local.startswith("ERROR"):  # the local harness names an exception; the grader says "your code raised" it
            assert status == "FAIL" and local.split(":")[0].split()[-1] in " ".join(details), (check.name, local, details)
        elif local.startswith("TODO"):
            assert status == "TODO", (check.name, local, details)
        else:
            said = "PASS" if status == "PASS" else f"{status} " + "\n".join(details)
            assert said == local, (check.name, local, details)
