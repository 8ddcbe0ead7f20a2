"""Scenario files: a world, a script of API calls and faults, and expectations, in YAML.

The format is the JSON Schema ``schema.json`` beside this module, explained in
docs/scenarios.md. ``loader`` reads a file into typed values (``model``, ``expectations``)
with every problem located at its line and column (``errors``); ``runner`` runs it on a
fresh ``World`` behind a ``ServiceAPI`` and answers one result per expectation.
"""
