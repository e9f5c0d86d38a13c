"""The autodiff layer of microtape."""
