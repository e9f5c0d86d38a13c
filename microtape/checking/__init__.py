"""The checking layer of microtape."""
