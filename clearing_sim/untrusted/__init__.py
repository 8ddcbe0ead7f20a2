"""What comes into the process from outside it over HTTP, read within bounds: a real peer's
answer (``answers``: bounded in bytes and in time, never inflated) and a request's body on
the project's own servers (``bodies``: at most a bound, never the whole of what a client
sends). JSON from outside is parsed by ``clearing_sim.domain.jsontext.parse_untrusted``;
connections are guarded by ``clearing_sim.serving``.

Public modules: ``answers``, ``bodies``.

Importing this package imports none of its modules.
"""
