"""Solution: exercise 8b, the log of a softmax (chapter 8).

``log(softmax(z))`` forms the probabilities first, and e^(−1000) rounds to
0; the epsilon then caps the loss near −log(1e-7) ≈ 16 and makes the slope
of the log tiny, so the gradient is 0 where the model is most wrong.
``mt.log_softmax`` computes z − logsumexp(z), which never forms a zero
probability: the loss is exact, and its gradient is softmax(z) − labels.

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex08b_log_of_softmax.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex08b_log_of_softmax"  # the grader reads this: do not change it

LABELS = mt.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
Z = mt.tensor([[1000.0, 0.0, -1000.0], [0.5, -0.5, 2.0]])  # the first row is far apart


def cross_entropy(labels: mt.Tensor, z: mt.Tensor) -> mt.Tensor:
    """The mean over the rows of -sum(labels * log(softmax(z)))."""
    return -(labels * mt.log_softmax(z)).sum(axis=-1).mean()


if __name__ == "__main__":
    print(mt.value_and_grad(lambda z: cross_entropy(LABELS, z))(Z))
