"""The package's version, in one place below everything that reports it (``__init__``, the grader's JSON).

``pyproject.toml`` repeats it for the build; ``tests/test_api.py`` checks that the two agree.
"""

__version__ = "0.1.0"
