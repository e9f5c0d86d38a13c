"""The classroom layer of microtape."""
