"""The dashboard layer of microtape."""
