"""Solution: exercise 8f, optimizer state that outlives the model (chapter 8).

``leak_check`` counts no leak, and says what is alive: a slot variable of
the ``MomentumOptimizer`` (``w``'s momentum), made in the first step and
kept for the next ones. ``tidy`` does not free a variable, and disposing
``w`` does not free the optimizer's state about it; the optimizer outlives
every run, so each run adds one. ``OPTIMIZER.dispose()`` frees its state
(the optimizer still works: the next run makes a new slot, from 0).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex08f_optimizer_state.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex08f_optimizer_state"  # the grader reads this: do not change it

X = mt.tensor([[1.0, 2.0], [0.5, -1.0], [2.0, 0.5]])
Y = mt.tensor([[1.0], [-0.5], [1.5]])
LR = 0.05
OPTIMIZER = mt.train.momentum(LR, 0.9)  # made once, shared by every run


def loss_fn(w: mt.Tensor) -> mt.Tensor:
    """The mean squared error of X @ w against Y."""
    return (X @ w - Y).square().mean()


def train(steps: int) -> list[float]:
    """Momentum from w = 0; returns the loss of every step, measured before its update."""
    w = mt.variable([[0.0], [0.0]])
    losses: list[float] = []
    for _ in range(steps):

        def step() -> float:
            loss = OPTIMIZER.minimize(lambda: loss_fn(w), return_cost=True, var_list=[w])
            assert loss is not None
            return loss.item()

        losses.append(mt.tidy(step))
    mt.dispose(w)
    OPTIMIZER.dispose()  # its momentum slot for w is a tensor too: the optimizer frees it
    return losses


if __name__ == "__main__":
    before = mt.memory().num_tensors
    for _ in range(3):
        train(5)
    print("tensors left after 3 runs:", mt.memory().num_tensors - before)
