"""Named random streams and the id factory, both derived from the world's seed.

Public names: ``Streams``, ``IdFactory``.

``Streams.get(name)`` is an independent ``random.Random`` seeded from sha256(seed, name): a
new component draws from its own stream and shifts nobody else's draws. Ids come from one
stream per kind (``ids:transaction``, ``ids:command``, …) for the same reason.

Key material (``IdFactory.key``, ``key_hex``: signing keys, API key secrets, webhook
secrets) is drawn the same way and then, when the factory holds a ``key_secret``, passed
through HMAC-SHA256 under it: the seed alone no longer tells a served world's keys
(docs/semantics.md). Without a secret (in-process runs) it is the draw itself, so those
runs keep their digests; the draws are the same either way, so no other id shifts.
"""

from __future__ import annotations

import hashlib
import hmac
import random

__all__ = ["IdFactory", "Streams"]

#: What ``uuid.UUID(..., version=4)`` does to the bits: variant 10 (RFC 4122), version 4.
_UUID4_KEEP = ~((0xC000 << 48) | (0xF000 << 64))
_UUID4_SET = (0x8000 << 48) | (4 << 76)


class Streams:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._streams: dict[str, random.Random] = {}

    def get(self, name: str) -> random.Random:
        stream = self._streams.get(name)
        if stream is None:
            material = hashlib.sha256(f"{self.seed}\x00{name}".encode()).digest()
            stream = random.Random(int.from_bytes(material[:16], "big"))
            self._streams[name] = stream
        return stream


class IdFactory:
    def __init__(self, streams: Streams, key_secret: bytes = b"") -> None:
        self._streams = streams
        self._key_secret = key_secret
        self._kinds: dict[str, random.Random] = {}  # the ``ids:<kind>`` streams, by kind
        self.draws = 0  # how many ids and keys were drawn: a door can tell a request drew one

    def _stream(self, kind: str) -> random.Random:
        stream = self._kinds.get(kind)
        if stream is None:
            stream = self._kinds[kind] = self._streams.get(f"ids:{kind}")
        return stream

    def uuid(self, kind: str) -> str:
        """A random-looking (version 4 layout) UUID from the ``ids:<kind>`` stream: the text
        ``str(uuid.UUID(int=bits, version=4))`` gives, without building the object."""
        stream = self._kinds.get(kind) or self._stream(kind)  # the lookup inline: ids are hot
        self.draws += 1
        bits = stream.getrandbits(128)
        h = "%032x" % (bits & _UUID4_KEEP | _UUID4_SET)
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def prefixed(self, prefix: str) -> str:
        """``wh_<uuid>``, ``evt_<uuid>``, ``agt_<uuid>``, ``inv_<uuid>``."""
        return f"{prefix}_{self.uuid(prefix)}"

    def hex(self, kind: str, n_bytes: int) -> str:
        self.draws += 1
        return self._stream(kind).randbytes(n_bytes).hex()

    def raw(self, kind: str, n_bytes: int) -> bytes:
        stream = self._kinds.get(kind) or self._stream(kind)
        self.draws += 1
        return stream.randbytes(n_bytes)

    def key(self, kind: str, n_bytes: int) -> bytes:
        """Key material: ``raw(kind, n_bytes)``, sealed with the key secret when there is one."""
        drawn = self.raw(kind, n_bytes)
        if not self._key_secret:
            return drawn
        out = b""
        counter = 0
        while len(out) < n_bytes:
            block = b"%s\x00%s\x00%d" % (kind.encode(), drawn, counter)
            out += hmac.new(self._key_secret, block, hashlib.sha256).digest()
            counter += 1
        return out[:n_bytes]

    def key_hex(self, kind: str, n_bytes: int) -> str:
        return self.key(kind, n_bytes).hex()
