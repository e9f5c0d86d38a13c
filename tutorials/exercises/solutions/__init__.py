"""Worked solutions of the classroom exercises (same file names as the starters)."""
