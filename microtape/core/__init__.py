"""The ground floor: tensors, the arena, the op table and the kernels.

Everything else stands on this folder, and it imports nothing above it (only
``errors.py``). Read its files in this order: ``types.py``, ``shape.py``,
``floats.py``, ``formatting.py`` (numbers and shapes, no tensors yet),
``kernels.py`` (the loops over flat lists), ``runtime.py`` (the arena, the
open tapes and scopes, the observers), ``habits.py``, ``convert.py``,
``tensor.py``, ``creation.py`` (the ``Tensor`` and how one is made),
``registry.py`` (``@primitive`` and ``emit``, the one path of every op),
``variable.py`` and ``memory.py`` (``tidy``, ``keep``, ``dispose``,
``memory``, ``profile``, ``leak_check``).
"""
