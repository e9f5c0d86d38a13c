"""The engine: tensors, the arena, the op table, the tape and the backward loop.

This is what a reader of microtape came for, and nothing else: it imports
nothing of microtape but ``errors.py``, and its lines of code are counted
against a budget (``tests/test_layering.py``). Everything that prints, draws
or explains is installed on it from above (``views/``). This list is *the*
reading order of the engine; the README and the book's "How the engine
works" page link here. Each file imports only files listed before it:

1. ``types.py``: the type aliases that do not mention tensors (``Shape``, ``Flat``).
2. ``shape.py``: what a shape is, its size, the largest tensor memory allows.
3. ``user_line.py``: which line of the user's code is running (what tapes and errors point at).
4. ``arena.py``: the only global mutable state: live tensors, tidy scopes,
   the open tapes and observers; ``new``, the one constructor.
5. ``formatting.py``: how numbers and nested values print (``repr`` of a tensor).
6. ``convert.py``: Python values (numbers, nested lists) into a tensor's flat data.
7. ``tensor.py``: ``Tensor``, immutable data plus shape; its operators call ops by name.
8. ``primitive.py``: ``Op``, the op table, ``@primitive`` and ``emit``, the one
   path every op takes (make the output, show it to observers, let tapes record it).
9. ``variable.py``: ``Variable``, the one tensor whose values change (``assign``).
10. ``memory.py``: ``tidy``, ``keep``, ``dispose`` and ``memory``.
11. ``backward.py``: the backward loop: each record's VJP, in reverse, once.
12. ``tape.py``: ``Tape``: recording while open, then the gradients and the Jacobian
    (``GradientTape`` in ``autodiff/`` checks what it is given first).

The ops themselves (``ops/``) stand on top of this folder: each registers its
forward and its one VJP in the table of ``primitive.py``.
"""
