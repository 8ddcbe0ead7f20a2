"""Scenario files: a world, a script of API calls and faults, and expectations, in YAML.

The format is the JSON Schema ``schema.json`` beside this module (``schema``,
``schema_check``), explained in docs/scenarios.md. ``loader`` reads a file (``source`` keeps
each node's line and column, most files read in ``one_pass`` over libyaml's events, with
``yaml_scalars``) into typed values (``model``, ``expectations``, ``fieldpath``):
``read_world``, ``read_gateway``, ``read_steps`` and ``read_expect`` read its parts against a
shared ``reading.Reader`` and a step's ``scope.Scope``, every problem located in the file
(``errors``). ``runner`` runs it on a fresh ``World`` behind a ``ServiceAPI`` (``stage``,
``channel``, ``templates``; ``wait_until`` for those steps), and ``batch`` loads and
plays many files over forked workers (``run --jobs``); ``checks``, ``matchers`` and
``timing`` judge each expectation, and ``results`` and ``reports`` answer one result per
expectation, as text, JSON or JUnit XML;
``pytest_plugin`` makes each file a test item.
"""
