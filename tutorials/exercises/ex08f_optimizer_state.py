"""Exercise 8f: tensors that outlive the model.

Chapter 8, "Casebook: real gradient bugs", section "Case 15: optimizer state that outlives the model".

``train`` makes a fresh weight, fits it with the shared momentum optimizer
``OPTIMIZER``, disposes the weight and returns the losses. Every step runs
in ``mt.tidy``, and yet each call of ``train`` leaves a tensor alive: call
it a few times and watch ``mt.memory().num_tensors`` grow.

1. Run one call of ``train`` inside ``mt.leak_check()`` and print the
   report: it says what the tensor that stays alive is, and who keeps it.
2. Repair ``train`` so that it leaves no tensor behind, however many times
   it is called. Keep its losses as they are.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex08f_optimizer_state.py
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
    mt.dispose(w)  # TODO 1: something else still holds a tensor about w
    return losses


if __name__ == "__main__":
    before = mt.memory().num_tensors
    for _ in range(3):
        train(5)
    print("tensors left after 3 runs:", mt.memory().num_tensors - before)
