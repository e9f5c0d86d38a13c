"""Classroom exercises: starter files graded by ``python -m microtape grade PATH``.

Not part of the book's gallery. Each starter ``exNN_name.py`` has its checks
in ``checks/exNN_name.py`` (installed with the package) and a worked
solution in ``solutions/exNN_name.py`` (in the repository only).
"""
