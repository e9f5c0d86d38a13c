"""microtape's test suite; run it from the repository root with ``python -m pytest -q``."""
