"""Classroom exercises: starter files graded by ``python -m microtape grade FILE``.

Not part of the book's gallery. Worked solutions live in ``solutions/``.
"""
