"""Property-based tests of the engine: conservation, determinism, terminal outcomes, a model."""
