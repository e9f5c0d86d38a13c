"""The debug layer of microtape."""
