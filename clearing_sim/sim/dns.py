"""The world's simulated name resolution, so a world resolves webhook hosts offline.

Public names: ``DnsTable``, ``DEFAULT_PUBLIC_ADDRESS``.

A run never touches the real network: every host name a world meets (a webhook URL's host
today, the delivery channel's target later) resolves through its ``DnsTable``, in this order:

1. an IP literal resolves to itself (``10.0.0.5``, ``::1``, and the bracketed ``[::1]`` of
   a URL's authority);
2. ``localhost`` and every ``*.localhost`` resolve to loopback, ``127.0.0.1`` and ``::1``
   (RFC 6761: these names never leave the host, so the table cannot remap them);
3. a name ``set`` in the table resolves to its addresses, in the order given (possibly none:
   a name that does not resolve);
4. any other name resolves to ``DEFAULT_PUBLIC_ADDRESS``, ``93.184.215.14`` (example.com's
   address, a public one), so a world that says nothing about DNS accepts ordinary names.

Names are matched case-insensitively and with or without one trailing dot (``Example.COM.``
is ``example.com``).
"""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import IPv4Address, IPv6Address, ip_address

__all__ = ["DEFAULT_PUBLIC_ADDRESS", "DnsTable"]

_Address = IPv4Address | IPv6Address

DEFAULT_PUBLIC_ADDRESS: _Address = IPv4Address("93.184.215.14")
_LOOPBACK: tuple[_Address, ...] = (IPv4Address("127.0.0.1"), IPv6Address("::1"))


def _normal(host: str) -> str:
    name = host.lower()
    return name[:-1] if name.endswith(".") and name != "." else name


def _literal(host: str) -> _Address | None:
    text = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return ip_address(text)
    except ValueError:
        return None


def _is_localhost(name: str) -> bool:
    return name == "localhost" or name.endswith(".localhost")


class DnsTable:
    """One world's names → addresses; owned by the world, empty at the start."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[_Address, ...]] = {}

    def set(self, host: str, addresses: Iterable[str]) -> None:
        """Add or replace ``host``'s addresses (IPv4/IPv6 strings; none: it does not resolve).

        ``ValueError`` for an address that is not one, and for a host the table cannot
        remap: an IP literal or a ``localhost`` name."""
        name = _normal(host)
        if not name or _literal(name) is not None or _is_localhost(name):
            raise ValueError(f"{host!r} always resolves by rule; only names can be set")
        self._entries[name] = tuple(ip_address(a) for a in addresses)

    def resolve(self, host: str) -> tuple[_Address, ...]:
        """The addresses ``host`` resolves to, by the rules of the module docstring."""
        name = _normal(host)
        literal = _literal(name)
        if literal is not None:
            return (literal,)
        if _is_localhost(name):
            return _LOOPBACK
        return self._entries.get(name, (DEFAULT_PUBLIC_ADDRESS,))
