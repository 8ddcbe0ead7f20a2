"""Real issuers on the other side: the HTTP issuer gateway, the reference gateway, the kit.

This package sits above ``conformance`` (its kit writes ``conformance.report``) and below
``scenario`` (a scenario may name a real gateway) and ``http``: it speaks to real gateways
over real sockets and measures wall time (a real issuer answers in real time), which
``domain``, ``sim`` and ``service`` never do. ``client`` is the engine's HTTP gateway (behind
``sim.gateway``), over ``transport`` (mTLS, bearer or OAuth, bounded, recorded) and
``answers`` (strict reading of what a gateway says); ``reference`` is the reference issuer
gateway (``clearing-sim issuer serve``); ``kit`` the issuer conformance kit (``clearing-sim
conformance issuer``), with ``evidence`` (what it holds against a gateway) and ``callbacks``
(where the gateway's status webhooks arrive); ``serving`` runs an ASGI app on loopback in a
thread, optionally over (m)TLS, through ``clearing_sim.serving``; ``cli`` holds the commands.
"""
