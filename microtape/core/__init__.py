"""The core layer of microtape."""
