"""The checks of each exercise (same file names as the starters), run by ``python -m microtape grade``."""
