"""Two more correct solutions of every exercise, spelled otherwise than the worked one.

Each is a list of (old, new) replacements in the worked solution's text. They pass
every check at every seed (``test_random_domains.py`` runs them over 1,000), so a
check's random cases must come from a domain where every correct solution passes,
whatever its rounding, order of operations or choice of op.
"""

from __future__ import annotations

from pathlib import Path

SOLUTIONS = Path(__file__).resolve().parents[2] / "tutorials" / "exercises" / "solutions"

Edits = tuple[tuple[str, str], ...]

SPELLINGS: dict[str, tuple[Edits, Edits]] = {
    "ex00_gradient_by_hand": (
        (("return 3.0 * x * x - 2.0", "return 3 * x**2 - 2"), ("x = x - lr * df_by_hand(x)", "x -= lr * (3 * x**2 - 2)")),
        (("return mt.grad(f)(x)", "return mt.grads(lambda t: f(t))([x])[0]"),
         ("x = x - lr * df_by_hand(x)", "x = x - lr * df_with_mt(mt.scalar(x)).item()")),
    ),
    "ex01_variables_sgd": (
        (("return mt.variable(values)", "return mt.variable(mt.tensor(values))"), ("w.assign_sub(grad * lr)", "w.assign(w - lr * grad)")),
        (("return mt.variable(0.0, trainable=False)", "return mt.variable(mt.scalar(0.0), trainable=False)"),
         ("counter.assign_add(1.0)", "counter.assign(counter + 1.0)"), ("w.assign_sub(grad * lr)", "w.assign_sub(mt.mul(lr, grad))")),
    ),
    "ex02_linear_model": (
        (("return ((X * w + b - Y) ** 2).mean()", "return ((w * X + b - Y) ** 2).sum() / 4.0"),),
        (("        _, grads = mt.variable_grads(lambda: loss_fn(w, b))\n        return grads[w], grads[b]",
          "        dw, db = mt.grads(loss_fn)([w, b])\n        return dw, db"),
         ("w.assign_sub(dw * lr)", "w.assign(w - lr * dw)")),
    ),
    "ex02b_item_cuts_the_graph": (
        (("A * mt.tanh(w)", "A * (mt.exp(2.0 * w) - 1.0) / (mt.exp(2.0 * w) + 1.0)"),),
        (("A * mt.tanh(w)", "mt.tanh(w) * A"), ("return x * slope + b", "return slope * x + b")),
    ),
    "ex03_second_derivative": (
        (("    with mt.GradientTape() as outer:\n        outer.watch(x)\n        with mt.GradientTape() as inner:\n            inner.watch(x)\n"
          "            y = f(x)\n        dy_dx = inner.gradient(y, x)  # computed while the outer tape records\n"
          "    assert dy_dx is not None  # f uses x, so the gradient exists\n    d2y_dx2 = outer.gradient(dy_dx, x)\n"
          "    assert d2y_dx2 is not None\n    return d2y_dx2",
          "    return mt.grad(mt.grad(f))(x)"),),
        (("x.assign_sub(dx * lr)", "x.assign(x - lr * dx)"), ("y.assign_sub(dy * lr)", "y.assign(y - dy * lr)"),
         ("f = x * x + y * y", "f = x ** 2 + mt.square(y)")),
    ),
    "ex03b_unwatched_tensor": (
        (("    with mt.GradientTape() as tape:\n        tape.watch(x)\n        y = model(x)\n    dx, dw, dv = tape.gradient(y, [x, W, V])",
          "    with mt.GradientTape(persistent=True) as tape:\n        tape.watch(x)\n        y = model(x)\n"
          "    dx = tape.gradient(y, x)\n    dw = tape.gradient(y, W)\n    dv = tape.gradient(y, V)\n    tape.release()"),),
        (("    with mt.GradientTape() as tape:\n        tape.watch(x)  # a plain tensor is recorded only when watched\n        y = model(x)\n"
          "    return tape.gradient(y, x)",
          "    return mt.grad(model)(x)"),),
    ),
    "ex04_softplus_vjp": (
        (("[dy * mt.sigmoid(x)]", "[dy * mt.exp(x) / (1.0 + mt.exp(x))]"),),
        (("[dy * mt.sigmoid(x)]", "[dy / (1.0 + mt.exp(-x))]"), ("mt.tensor([-3.0, -1.0, 0.0, 0.5, 2.0])", "mt.tensor([-1.0, 0.25, 1.5])")),
    ),
    "ex04b_find_the_bug": (
        (('CULPRIT = "custom_grad(swish)"', 'CULPRIT = "swish"'), ("[dy * (s + x * s * (1.0 - s))]", "[dy * s * (1.0 + x * (1.0 - s))]")),
        (('CULPRIT = "custom_grad(swish)"', "CULPRIT = \"'custom_grad(swish)'\""),
         ("[dy * (s + x * s * (1.0 - s))]", "[dy * (saved[0] + x * saved[0] * (1.0 - saved[0]))]")),
    ),
    "ex04c_broadcast_vjp": (
        (("[dy, -dy.sum(axis=0)]", "[dy, mt.neg(dy).sum(axis=0)]"),),
        (("[dy, -dy.sum(axis=0)]", "[dy * 1.0, -(dy.sum(axis=0, keepdims=True).reshape(b.shape))]"),),
    ),
    "ex04d_nan_hunt": (
        (("    top = z.max(axis=-1, keepdims=True)\n    return top + mt.log(mt.exp(z - top).sum(axis=-1, keepdims=True))",
          "    return mt.logsumexp(z, axis=-1, keepdims=True)"),),
        (("    top = z.max(axis=-1, keepdims=True)\n    return top + mt.log(mt.exp(z - top).sum(axis=-1, keepdims=True))",
          "    top = mt.max(z, axis=-1, keepdims=True)\n    return mt.log(mt.sum(mt.exp(z - top), axis=-1, keepdims=True)) + top"),),
    ),
    "ex04e_wrong_factor": (
        (('WRONG_OP = "custom_grad(cube)"', 'WRONG_OP = "custom_grad(cube)[2]"'), ("WRONG_FACTOR = -6.0", "WRONG_FACTOR = -6"),
         ("lambda dy: dy * 3.0 * x * x", "lambda dy: dy * 3.0 * x ** 2")),
        (('WRONG_OP = "custom_grad(cube)"', 'WRONG_OP = "cube"'), ("lambda dy: dy * 3.0 * x * x", "lambda dy: 3.0 * mt.square(x) * dy")),
    ),
    "ex05_stop_the_leak": (
        (("    return mt.tidy(lambda: mse(predict(w, X), Y).item())",
          "    def value() -> float:\n        return mse(predict(w, X), Y).item()\n\n    return mt.tidy(value)"),),
        (("        w.assign(w - lr * grads[w])\n        return loss.item()  # a float: every tensor made in here is disposed",
          "        w.assign_sub(grads[w] * lr)\n        return float(loss.item())"),),
    ),
    "ex05b_tidy_too_eager": (
        (("        self.mean, self.std = mt.tidy(compute)  # returned from tidy: they survive it",
          "        found = mt.tidy(compute)\n        self.mean = found[0]\n        self.std = found[1]"),),
        (("        def compute() -> tuple[mt.Tensor, mt.Tensor]:\n            mean = data.mean(axis=0)\n"
          "            return mean, mt.sqrt(((data - mean) ** 2).mean(axis=0))\n\n"
          "        self.mean, self.std = mt.tidy(compute)  # returned from tidy: they survive it",
          "        def compute() -> None:\n            self.mean = mt.keep(data.mean(axis=0))\n"
          "            self.std = mt.keep(mt.sqrt(mt.square(data - self.mean).mean(axis=0)))\n\n        mt.tidy(compute)"),),
    ),
    "ex05c_leaky_loop": (
        (("w.assign_sub(grads[w] * lr)  # a float: no tensor made outside the tidy", "w.assign(w - lr * grads[w])"),),
        (("            return loss.item()  # a float survives the tidy; the loss tensor does not",
          "            value = loss.item()\n            return value"),
         ("        history.append(mt.tidy(step))\n    return history", "        history.append(float(mt.tidy(step)))\n    return list(history)")),
    ),
    "ex06_exploding_rnn": (
        (("    clipped, _ = mt.clip_by_global_norm(grads, max_norm)\n    return clipped",
          "    total = mt.sqrt(mt.stack([mt.sum(g * g) for g in grads]).sum()).item()\n"
          "    scale = 1.0 if total <= max_norm else max_norm / total\n    return [g * scale for g in grads]"),),
        (("    clipped, _ = mt.clip_by_global_norm(grads, max_norm)\n    return clipped",
          "    return list(mt.clip_by_global_norm(grads, max_norm)[0])"),
         ('monitor.record({"w": raw[0], "u": raw[1]})', "monitor.record({'w': grads[w], 'u': grads[u]})")),
    ),
    "ex06b_learning_rate": (
        (("LR = 0.08  # below the limit 0.0845", "LR = 0.082"),
         ("    lam_max = (trace + math.sqrt(trace * trace - 4.0 * det)) / 2.0\n    return 2.0 / lam_max",
          "    lam_min = (trace - math.sqrt(trace * trace - 4.0 * det)) / 2.0\n    return 2.0 / (trace - lam_min)")),
        (("LR = 0.08  # below the limit 0.0845", "LR = 0.0835"),
         ("a, c = 2.0 * sum(x * x for x in XS) / n, 2.0 * sum(XS) / n", "a, c = 2.0 * math.fsum(x**2 for x in XS) / n, 2.0 * math.fsum(XS) / n"),
         ("trace, det = a + 2.0, a * 2.0 - c * c", "trace, det = 2.0 + a, 2.0 * a - c**2")),
    ),
    "ex06c_rescue_the_run": (
        (("gs, _ = mt.clip_by_global_norm([grads[w], grads[u]], 1.0)  # each step at most lr long",
          "gs = [mt.clip_by_value(grads[w], -1.0, 1.0), mt.clip_by_value(grads[u], -1.0, 1.0)]"),),
        (("gs, _ = mt.clip_by_global_norm([grads[w], grads[u]], 1.0)  # each step at most lr long",
          "gs = [mt.clip_by_norm(grads[w], 0.5), mt.clip_by_norm(grads[u], 0.5)]"),),
    ),
    "ex07_profile_memory": (
        (("    before = mt.memory().num_tensors\n    fn()\n    return mt.memory().num_tensors - before",
          "    start = mt.memory()\n    fn()\n    return int(mt.memory().num_tensors - start.num_tensors)"),
         ("return mt.profile(lambda: mt.tidy(lambda: layer(x, w)))", "return mt.profile(lambda: mt.tidy(layer, x, w))")),
        (("    before = mt.memory().num_bytes\n    return mt.profile(fn).peak_bytes - before",
          "    alive = mt.memory().num_bytes\n    info = mt.profile(fn)\n    return info.peak_bytes - alive"),),
    ),
    "ex07b_trace_the_nan": (
        (("return mt.sqrt(((points - center) ** 2.0).sum(axis=1) + 1e-14)",
          "return mt.sqrt(mt.maximum(((points - center) ** 2.0).sum(axis=1), mt.fill((points.shape[0],), 1e-300)))"),
         ('FIRST_OP = "sqrt"', 'FIRST_OP = " sqrt "'), ('FIRST_PASS = "backward"', "FIRST_PASS = 'Backward'")),
        (("return mt.sqrt(((points - center) ** 2.0).sum(axis=1) + 1e-14)",
          "return mt.sqrt(mt.square(points - center).sum(axis=1) + 1e-16)"),),
    ),
    "ex08a_masked_sqrt": (
        (("safe = mt.where(x.greater(0.0), x, mt.ones_like(x))", "safe = mt.where(x.greater(0.0), x, mt.ones_like(x) * 4.0)"),),
        (("return mt.where(x.greater(0.0), mt.sqrt(safe), mt.zeros_like(x))", "return mt.where(x.less_equal(0.0), mt.zeros_like(x), safe ** 0.5)"),),
    ),
    "ex08b_log_of_softmax": (
        (("return -(labels * mt.log_softmax(z)).sum(axis=-1).mean()",
          "return -(labels * (z - mt.logsumexp(z, axis=-1, keepdims=True))).sum(axis=-1).mean()"),),
        (("return -(labels * mt.log_softmax(z)).sum(axis=-1).mean()", "return mt.softmax_cross_entropy(labels, z)"),),
    ),
    "ex08c_dead_relu": (
        (("ZERO_SHARE = 100.0", "ZERO_SHARE = 100"), ("return x @ w", "return mt.matmul(x, w)")),
        (("ZERO_SHARE = 100.0", "ZERO_SHARE = 1e2"), ("return x @ w", "return (x @ w) * 1.0")),
    ),
    "ex08d_second_derivative": (
        (("lambda dy: dy * 3.0 * x * x", "lambda dy: 3.0 * mt.square(x) * dy"),),
        (("lambda dy: dy * 3.0 * x * x", "lambda dy: dy * (x * x * 3.0)"),),
    ),
    "ex08e_masked_softmax": (
        (("zeros_like(scores) - 1e9)", "zeros_like(scores) - 1e30)"),),
        (("bias = mt.where(keep.greater(0.5), mt.zeros_like(scores), mt.zeros_like(scores) - 1e9)", "bias = (1.0 - keep) * -1e9"),),
    ),
    "ex08f_optimizer_state": (
        (("    mt.dispose(w)\n    OPTIMIZER.dispose()", "    OPTIMIZER.dispose()\n    w.dispose()"),),
        (("    w = mt.variable([[0.0], [0.0]])\n", "    w = mt.variable([[0.0], [0.0]])\n    OPTIMIZER = mt.train.momentum(LR, 0.9)  # one per run\n"),
         ("    OPTIMIZER.dispose()", "    OPTIMIZER.dispose()  # frees the slot now, not when the optimizer is collected")),
    ),
    "ex09_dot_product_test": (
        (("    _, jv = mt.jvp(f, [x], [v])", "    _, f_jvp = mt.linearize(f, [x])\n    jv = f_jvp([v])"),
         ("[dy * x / mt.sqrt(x * x + 1.0)]", "[x * dy / mt.sqrt(mt.square(x) + 1.0)]")),
        (("    jtu = mt.grad(lambda t: (f(t) * u).sum())(x)",
          "    with mt.GradientTape() as tape:\n        tape.watch(x)\n        y = f(x)\n    jtu = tape.gradient(y, x, output_gradients=u)"),
         ("return (u * jv).sum().item(), (jtu * v).sum().item()", "return float((jv * u).sum().item()), float(mt.sum(v * jtu).item())")),
    ),
    "ex09b_stable_loss": (
        (("return (mt.softplus(logits) - logits * labels).mean()", "return mt.sigmoid_cross_entropy(labels, logits)"),),
        (("return (mt.softplus(logits) - logits * labels).mean()",
          "return (mt.maximum(logits, 0.0) - logits * labels + mt.log1p(mt.exp(-mt.abs(logits)))).mean()"),),
    ),
}


def spelled(name: str, edits: Edits) -> str:
    """The worked solution of ``name`` with ``edits`` applied (each must match)."""
    source = (SOLUTIONS / f"{name}.py").read_text(encoding="utf-8")
    for old, new in edits:
        assert old in source, f"the solution of {name} no longer contains {old!r}: update tests/classroom/spellings.py"
        source = source.replace(old, new, 1)
    return source
