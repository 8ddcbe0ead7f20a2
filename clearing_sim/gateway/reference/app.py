"""The reference gateway's HTTP routes (Starlette): the issuer-side contract, the provider-
state set-up URL and an OAuth 2.0 client-credentials token endpoint.

Public names: ``Auth``, ``create_app``.

Routes, under the server's root (its ``apiBaseUrl``):

    POST /burn-instructions, /mint-instructions   → 201 {instructionId, status} (200 on replay)
    GET  /instructions/{id}                       → {instructionId, status, reference,
                                                     onchain {txHash, ledgerSequence},
                                                     finalizedAt}
    POST /instructions/{id}/execute               → the instruction (Mode 2's signal)
    POST /treasury/refunds                        → {transactionId, status, refundTxHash,
                                                     refundedAt}
    POST /_pact/provider-states                   → {state, params} (Pact's set-up call)
    POST /oauth/token                             → {access_token, token_type, expires_in}

With ``Auth.bearer`` or OAuth credentials, the contract routes and the provider-state route
need ``Authorization: Bearer`` with the static token or a token this server issued and not
yet expired (the provider-state route arms outcomes: open, anyone could make the next burn
REJECTED; the kit sends its bearer there too); the token route never does. Every refusal
is ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import base64
import datetime as dt
import random
from typing import Any
from urllib.parse import parse_qs

from attrs import define, field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from clearing_sim.domain.jsontext import parse_untrusted
from clearing_sim.gateway.reference.state import ReferenceIssuer, StateProblem
from clearing_sim.untrusted.bodies import read_body

__all__ = ["Auth", "create_app"]

BODY_LIMIT = 65_536


@define
class Auth:
    bearer: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    token_ttl_s: int = 300
    issued: dict[str, float] = field(factory=dict)  # token → expiry (unix seconds)
    rng: random.Random = field(factory=lambda: random.Random(7))

    @property
    def required(self) -> bool:
        return self.bearer is not None or self.client_id is not None

    def allows(self, header: str | None) -> bool:
        if not self.required:
            return True
        scheme, _, token = (header or "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return False
        if self.bearer is not None and token == self.bearer:
            return True
        expiry = self.issued.get(token)
        return expiry is not None and _now_s() < expiry

    def issue(self) -> dict[str, Any]:
        token = f"ref_{self.rng.getrandbits(128):032x}"
        self.issued[token] = _now_s() + self.token_ttl_s
        return {"access_token": token, "token_type": "Bearer", "expires_in": self.token_ttl_s}


def _now_s() -> float:
    return dt.datetime.now(dt.UTC).timestamp()


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status)


async def _json(request: Request) -> dict[str, Any]:
    raw = await read_body(request, BODY_LIMIT)
    if raw is None:
        raise StateProblem(413, "body_too_large", f"bodies are limited to {BODY_LIMIT} bytes")
    try:
        body = parse_untrusted(raw or b"{}")
    except ValueError:
        raise StateProblem(400, "invalid_json", "the body is not JSON") from None
    if not isinstance(body, dict):
        raise StateProblem(400, "invalid_json", "the body is not a JSON object")
    return body


def create_app(issuer: ReferenceIssuer, auth: Auth | None = None) -> Starlette:
    auth = auth or Auth()

    def guarded(handler: Any) -> Any:
        async def endpoint(request: Request) -> JSONResponse:
            if not auth.allows(request.headers.get("authorization")):
                return _error(401, "unauthorized", "a valid bearer token is required")
            try:
                status, body = await handler(request)
            except StateProblem as problem:
                return _error(problem.status, problem.code, str(problem))
            return JSONResponse(body, status)
        return endpoint

    async def burn(request: Request) -> tuple[int, dict[str, Any]]:
        return issuer.create("burn", await _json(request))

    async def mint(request: Request) -> tuple[int, dict[str, Any]]:
        return issuer.create("mint", await _json(request))

    async def read(request: Request) -> tuple[int, dict[str, Any]]:
        return 200, issuer.read(request.path_params["id"])

    async def execute(request: Request) -> tuple[int, dict[str, Any]]:
        await _json(request)
        return 200, issuer.execute(request.path_params["id"])

    async def refund(request: Request) -> tuple[int, dict[str, Any]]:
        return issuer.refund(await _json(request))

    async def provider_state(request: Request) -> tuple[int, dict[str, Any]]:
        body = await _json(request)
        if body.get("action", "setup") == "teardown":
            return 200, {}
        state, params = body.get("state"), body.get("params") or {}
        if not isinstance(state, str) or not isinstance(params, dict):
            raise StateProblem(400, "invalid_state", "give state (string), params (object)")
        return 200, issuer.set_state(state, params)

    async def token(request: Request) -> JSONResponse:
        if auth.client_id is None:
            return _error(404, "not_found", "this gateway has no OAuth token endpoint")
        raw = await read_body(request, BODY_LIMIT)
        if raw is None:
            return _error(413, "body_too_large", f"bodies are limited to {BODY_LIMIT} bytes")
        form = {k: v[0] for k, v in parse_qs(raw.decode(errors="replace")).items()}
        client_id, client_secret = form.get("client_id"), form.get("client_secret")
        basic = request.headers.get("authorization", "")
        if basic.lower().startswith("basic "):
            try:
                decoded = base64.b64decode(basic[6:], validate=True).decode(errors="replace")
            except ValueError:  # binascii.Error: not base64
                decoded = ""
            client_id, _, client_secret = decoded.partition(":")
        if form.get("grant_type") != "client_credentials":
            return _error(400, "unsupported_grant_type", "only client_credentials")
        if client_id != auth.client_id or client_secret != auth.client_secret:
            return _error(401, "invalid_client", "unknown client or wrong secret")
        return JSONResponse(auth.issue(), headers={"Cache-Control": "no-store"})

    routes = [
        Route("/burn-instructions", guarded(burn), methods=["POST"]),
        Route("/mint-instructions", guarded(mint), methods=["POST"]),
        Route("/instructions/{id}", guarded(read), methods=["GET"]),
        Route("/instructions/{id}/execute", guarded(execute), methods=["POST"]),
        Route("/treasury/refunds", guarded(refund), methods=["POST"]),
        Route("/_pact/provider-states", guarded(provider_state), methods=["POST"]),
        Route("/oauth/token", token, methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.state.issuer = issuer
    return app
