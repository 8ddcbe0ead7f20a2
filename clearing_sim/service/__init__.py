"""The public API layer: every route of the spec on one ``World``, as plain requests and answers.

``api.ServiceAPI.handle`` is the one way in for every door (the HTTP shim, scenarios, tests):
it reads the request in the documented precedence (``messages``, ``body``, ``versions``,
``auth``, ``idempotency``), finds its row in ``routes.ROUTES`` and calls the handler with a
``context.Context``. The rows and handlers live in the feature modules (``system``,
``onboarding``, ``transactions``, ``reserves``, ``agents``, ``webhooks``, ``issuers``,
``issuer_conformance``, ``conformance``, ``team``); a handler sees the API only through
``context.Host``, so imports run one way: ``api`` → ``routes`` → feature modules →
``context``. Answers are wrapped by ``envelope`` and shaped by ``wire`` and ``cursors``;
``admission`` and ``behaviour`` read what the operator and scenarios add mid-run; ``reference``
renders ``docs/api.md`` and ``docs/errors.md`` from the route table and the error catalogue.
"""
