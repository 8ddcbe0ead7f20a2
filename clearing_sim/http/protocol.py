"""The shim's HTTP/1.1 protocol: the guarded one of every server (``clearing_sim.serving``:
the header deadline, the connection cap), with uvicorn's own refusals in the API's error
envelope.

Public names: ``EnvelopeH11Protocol``, ``NIL_COMMAND_ID``.

A request line or header that h11 cannot parse never reaches the application: uvicorn
answers it itself, as ``text/plain``. This subclass answers the same 400 as every other
refusal of the shim, ``{errors: [{type, code, message}], meta: {commandId}}`` with code
``malformed_http_request``. No world saw the request, so ``meta.commandId`` is the nil UUID
(docs/semantics.md).
"""

from __future__ import annotations

from clearing_sim.domain.errors import InvalidRequest
from clearing_sim.service import envelope
from clearing_sim.service.messages import encode_json
from clearing_sim.serving.guard import GuardedH11Protocol

__all__ = ["NIL_COMMAND_ID", "EnvelopeH11Protocol"]

NIL_COMMAND_ID = "00000000-0000-0000-0000-000000000000"


def _envelope(message: str) -> bytes:
    error = InvalidRequest.one(None, "malformed_http_request", message)
    return encode_json(envelope.failure(error, NIL_COMMAND_ID))


class EnvelopeH11Protocol(GuardedH11Protocol):
    def send_400_response(self, msg: str) -> None:
        body = _envelope("the request is not valid HTTP/1.1: " + msg.rstrip("."))
        head = (b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
                b"connection: close\r\ncontent-length: %d\r\n\r\n" % len(body))
        self.transport.write(head + body)
        self.transport.close()
