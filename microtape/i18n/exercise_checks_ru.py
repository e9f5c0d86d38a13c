"""The shipped checks' failure messages with values, as patterns the grader translates.

``PATTERNS_CHECKS`` holds each message with values as a regular expression
over the English line (a msgid of the package's catalog); its msgstr in
``microtape/locale/ru/LC_MESSAGES/microtape.po`` is the Russian template
(``{name}`` is a group kept as it is; a group whose name starts with ``p``
is a phrase translated again). The checks' names, hints, titles and
messages without values are msgids of the catalog as they stand. Keep the
patterns exactly as the check files (``tutorials/exercises/checks/``) write
their messages: ``tests/classroom/test_grade_russian.py`` checks that every
name, hint and message there has its Russian.
"""

from __future__ import annotations

from typing import Final

__all__ = ["PATTERNS_CHECKS"]

PATTERNS_CHECKS: Final[tuple[str, ...]] = (
    r"dot_test\(\.\.\.\) returned (?P<t>\w+), expected a tuple of two floats\.",
    r"dot_test of x² with a VJP that ignores dy gave (?P<a>.+) and (?P<b>.+), at x = (?P<x>.+), u = (?P<u>.+), v = (?P<v>.+): the two sides must differ there\.",
    r"bce\(labels, (?P<z>.+)\) = (?P<v>.+): an overflow \(or a log of 0\) on the way\.",
    r"the gradient of bce with respect to the logits is None: the path from the logits is cut\.",
    r"the gradient of bce at the logits (?P<z>.+) has (?P<n>\d+) non-finite entries \(the first is (?P<v>.+)\)\.",
    r"with f replaced by sin, df_with_mt\(x\) does not give cos\(x\) at x = (?P<x>.+): it does not differentiate f\.",
    r"(?P<what>df_by_hand\(.*\)) is wrong: (?P<p>.+) from the finite differences of f\.",
    r"make_weights returned (?P<a>\w+) and (?P<b>\w+), not variables\.",
    r"(?P<what>.+) returned (?P<t>\w+), not a Variable\.",
    r"make_step_counter\(\) has shape (?P<s>.+), expected a scalar, shape \(\)\.",
    r"make_step_counter\(\) does not start at 0: (?P<p>.+)\.",
    r"(?P<what>.+) has shape (?P<s>.+), expected (?P<e>\(.*\))\.",
    r"after sgd_step\(w, grad, (?P<lr>.+)\), w still holds (?P<v>.+): the variable was not updated\.",
    r"w after sgd_step\((?P<a>.+)\) moved up the gradient\.",
    r"sgd_step made (?P<n>\d+) new variable\(s\); an SGD step assigns to the existing one\.",
    r"after (?P<n>\d+) calls of count_step\(counter\), starting at 0, the counter is wrong: (?P<p>.+)\.",
    r"one call of gradients\(w, b\) left (?P<n>\d+) new tensor\(s\) alive, expected exactly 2 \(dw and db\)\.",
    r"(?P<what>.+) left (?P<n>\d+) tensor\(s\) alive; memory must stay flat\.",
    r"(?P<what>.+) left (?P<n>\d+) tensor\(s\) alive; training must leave memory flat\.",
    r"another (?P<what>.+) leaves (?P<p>.+)",
    r"one more call leaves (?P<p>.+)",
    r"(?P<what>.+) returned (?P<t>\w+), expected a pair \((?P<e>.+)\)\.",
    r"(?P<what>.+) returned (?P<t>\w+), expected a pair of floats \((?P<e>.+)\)\.",
    r"the (?P<v>\w+) that (?P<what>train\(.+\)) returns is not that of (?P<n>\d+) SGD steps from (?P<s>.+): (?P<p>.+)\.",
    r"(?P<what>.+) is None: the tape has no record of how the output depends on (?P<w>.+)\.",
    r"(?P<what>.+) returned (?P<t>\w+), expected \((?P<e>.+)\)\.",
    r"the tape recorded (?P<n>.+), expected one op named 'custom_grad\(\.\.\.\)'\.",
    r"prove\(\) returned (?P<t>\w+), not the report of mt\.check_grads\.",
    r"prove\(\) checked order=(?P<o>\d+); the second derivative must be checked too\.",
    r"prove\(\) checked softplus at (?P<n>\d+) point\(s\) in mode=(?P<m>.+); check at least 3 points in full mode\.",
    r"prove\(\) returned a failing report: (?P<r>.*)",
    r"CULPRIT is (?P<a>.+), expected a str such as 'custom_grad\(some_op\)'\.",
    r"CULPRIT = (?P<a>.+): the culprit line of check_grads\(model, \[W, X\]\) on the starter names another op, whose VJP is the wrong one\.",
    r"CULPRIT = (?P<a>.+?) is not an op of the model: its ops are (?P<ops>.+)\.",
    r"CULPRIT = (?P<a>.+) is not an op of the model\.",
    r"(?P<n>\d+) of the 3 custom ops \w+ with finite differences when checked alone; the culprit finder tells you which\.",
    r"WRONG_OP is (?P<a>.+), expected a str such as 'custom_grad\(some_op\)'\.",
    r"WRONG_OP = (?P<a>.+): in the starter's table that step's factor is the true derivative of its op; another step's is wrong\.",
    r"WRONG_OP = (?P<a>.+?) is not an op of this table: the table's names are (?P<ops>.+)\.",
    r"WRONG_OP = (?P<a>.+) is not an op of this table\.",
    r"WRONG_FACTOR = (?P<v>.+) is the right derivative of x³ at X\[2\]; the table showed what the wrong VJP gives\.",
    r"WRONG_FACTOR = (?P<v>.+) is not the local derivative the table shows for the wrong step \(rounded as the table rounds it\)\.",
    r"the gradient of center\(x, b\) cannot be computed: (?P<e>.*)",
    r"(?P<what>\w+) uses your (?P<n>\w+)\(\), whose gradient does not reach w \(the check above\): fix that first\.",
    r"the gradient of log_sum_exp at the rows (?P<r>.+) has (?P<n>\d+) non-finite entries \(the first is (?P<v>.+)\)\.",
    r"log_sum_exp\((?P<r>.+)\) = (?P<v>.+): an overflow \(or underflow\) on the way\.",
    r"(?P<what>.+) returned (?P<t>\w+), expected a list of (?P<n>\d+) (?P<k>losses|floats)\.",
    r"(?P<what>train\(.+\)): the loss became (?P<v>.+) at step (?P<i>\d+)\.",
    r"(?P<what>.+): the loss of step (?P<i>\d+) is wrong: (?P<p>.+) from plain SGD on loss_fn\.",
    r"(?P<what>.+): the loss of step (?P<i>\d+) is wrong: (?P<p>.+) from SGD with clipped gradients\.",
    r"after each of 5 calls of (?P<n>.+), (?P<c>.+) more tensors were alive than before the first: (?P<k>\S+) tensor\(s\) leak per call\.",
    r"one fit left (?P<n>\d+) new tensor\(s\) alive, expected at most 2 \(the mean and the std\)\.",
    r"XS is (?P<v>.+), expected the list of inputs\.",
    r"clipped_grads\(grads, (?P<m>.+)\) returned (?P<t>\w+) (?P<v>.*), expected a list of (?P<n>\d+) tensors\.",
    r"train_rnn\((?P<s>\d+), \.\.\.\) returned (?P<t>\w+) of (?P<c>\d+) losses, expected a list of (?P=s) floats\.",
    r"train_rnn\(\.\.\.\) returned (?P<t>\w+) as the monitor, expected an mt\.GradientMonitor\.",
    r"the loss became (?P<v>.+) at step (?P<i>\d+) \(losses: (?P<l>.+)\): the gradients exploded\.",
    r"(?P<what>.+): first loss (?P<a>\S+), best of the last 10 (?P<b>\S+); expected a drop of more than 1000x\.",
    r"train_rnn\((?P<s>\d+), \.\.\.\) recorded (?P<n>\d+) steps in the monitor, expected one per step \((?P=s)\)\.",
    r"the monitor's first global norm is (?P<v>\S+), not the raw gradient norm at (?P<at>.+?): (?P<p>.+?)( \(were the gradients clipped before recording\?\))?\.",
    r"monitor\.exploding is False although the raw norm was (?P<v>\S+)\.",
    r"after clipped_grads\(grads, (?P<m>.+)\) the global norm is (?P<v>\S+), above max_norm\.",
    r"(?P<what>.+): the gradients were not all scaled by the same positive factor, so their direction changed\.",
    r"(?P<what>.+): the global norm after clipping should be max_norm exactly, and it is (?P<p>.+)\.",
    r"train_rnn\((?P<a>.+)\) did not return \(losses, monitor\) with (?P<n>\d+) losses\.",
    r"fit\(LR, 300\) returned (?P<t>\w+) (?P<v>.*), expected 300 losses\.",
    r"with LR = (?P<lr>\S+) the loss went from (?P<a>\S+) to (?P<b>\S+) in 300 steps, not below 1e-3: the rate is (?P<p>.+)\.",
    r"stability_limit\(\) with XS = (?P<x>.+) is not 2 / λ_max: (?P<p>.+)\.",
    r"the first loss of (?P<what>train\(.+\)) is not the loss at the starting point \(1\.2, 0\.3\): (?P<p>.+); keep the start\.",
    r"the first loss is not the loss at the starting point \(1\.2, 0\.3\): (?P<p>.+); keep the start\.",
    r"(?P<what>train\(.+\)): the loss became (?P<v>.+) at step (?P<i>\d+): the run still explodes\.",
    r"the loss became (?P<v>.+) at step (?P<i>\d+) \(losses: (?P<l>.+)\): the run still explodes\.",
    r"(?P<what>train\(.+\)): the loss went from (?P<a>\S+) to (?P<b>\S+); a rescued run falls\.",
    r"(?P<n>FIRST_OP|FIRST_PASS) = (?P<q>[\"'])(?P<ptodo>TODO.*)(?P=q)",
    r"(?P<n>\w+) is (?P<a>.+), expected a str\.",
    r"FIRST_OP = (?P<a>.+), but the trace names another op first\.",
    r"FIRST_PASS = (?P<a>.+): (?P<op>\S+) made its non-finite value in the other pass\.",
    r"distance from (?P<a>.+) to (?P<c>.+) is (?P<v>\S+): (?P<p>.+) from the exact distance, more than the (?P<t>\S+) allowed\.",
    r"with the center (?P<c>.+) on one of the points (?P<a>.+), the gradient is (?P<g>.+): not finite\.",
    r"entry (?P<k>\S+) of the center's gradient is (?P<v>\S+): (?P<p>.+) from the sum of unit vectors\.",
    r"(?P<what>fit\(.+\)): the loss became (?P<v>.+) at step (?P<i>\d+)\.",
    r"(?P<what>.+): the loss of step (?P<i>\d+) is wrong: (?P<p>.+) from plain gradient descent\.",
    r"leftover_tensors\((?P<l>.+)\) is wrong: it counts (?P<p>too many|too few) tensors\.",
    r"profile_layer\(x, w\) returned (?P<t>\w+), not what mt\.profile returns\.",
    r"the profile saw the kernels (?P<k>.+), expected \['matmul', 'relu', 'sum'\] \(one call of layer\)\.",
    r"the profile reports new_tensors=(?P<n>\d+), expected 1: only layer's result should survive\.",
    r"extra_peak_bytes\((?P<l>.+)\) is wrong: it counts (?P<p>too many|too few) bytes\.",
)
"""The shipped checks' messages with values, as English patterns over a whole line, in order of trial."""
