"""The public API layer: wire forms of the resources (more routes arrive with the API issue)."""
