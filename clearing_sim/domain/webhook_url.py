"""Webhook URLs: HTTPS to public addresses only (spec, Webhooks; Limits, "Webhook URL").

Public names: ``url_problem``, ``relaxed_url_problem``, ``address_class``, ``Resolver``,
``URL_LENGTH_MAX``.

Pure: a host's addresses come from the caller's ``resolve`` (the world's simulated DNS),
never from the network. ``url_problem`` answers the first problem of a URL, in this order
(docs/semantics.md):

1. ``invalid_url``, the URL is malformed or not HTTPS: longer than ``URL_LENGTH_MAX``; a
   character RFC 3986 does not allow (spaces, controls, non-ASCII, ``\\``); a scheme other
   than exactly ``https``; no ``//`` authority or no host; userinfo (``user:pass@``, credentials
   in URLs are refused); a port that is not 1–65535; a host that is neither an IP literal
   nor a name of letter-digit-hyphen labels; a host ending in a number that is not a
   dotted-quad IPv4 address (``2130706433`` and ``0x7f.1`` are 127.0.0.1 to other parsers);
   a name that resolves to no address.
2. ``url_not_public``: an address the host is or resolves to is not public. Every address
   must be public, not just one, since a sender may connect to any of them. The message
   names the first such address and its class (``address_class``).

``relaxed_url_problem`` is the rule the HTTP shim's ``--allow-private-webhook-urls`` asks the
API to apply instead: ``http`` is accepted as well as ``https``, and any address, so that a
receiver on the developer's machine can subscribe; every other check stands.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network
from urllib.parse import urlsplit

from clearing_sim.domain.errors import Problem

__all__ = ["URL_LENGTH_MAX", "Resolver", "address_class", "relaxed_url_problem", "url_problem"]

URL_LENGTH_MAX = 2048
_Address = IPv4Address | IPv6Address

#: A host name → the addresses it resolves to (possibly none).
Resolver = Callable[[str], Sequence[_Address]]

_URI_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?")
_NUMBER = re.compile(r"[0-9]+|0[xX][0-9A-Fa-f]*")
_NAME_LENGTH_MAX = 253

# Special-purpose ranges (IANA's IPv4 and IPv6 special-purpose registries), first match wins.
# Written out rather than left to ``is_global`` alone, whose tables differ between Python
# versions (3.11 calls 224.0.0.1 and fec0::1 global) and which names no class.
_V4: tuple[tuple[IPv4Network, str], ...] = tuple((IPv4Network(net), reason) for net, reason in (
    ("0.0.0.0/32", "the unspecified address"),
    ("0.0.0.0/8", "a 'this network' address"),
    ("10.0.0.0/8", "a private address"),
    ("100.64.0.0/10", "a shared address (carrier-grade NAT)"),
    ("127.0.0.0/8", "a loopback address"),
    ("169.254.0.0/16", "a link-local address"),
    ("172.16.0.0/12", "a private address"),
    ("192.0.0.0/24", "a reserved address (IETF protocol assignments)"),
    ("192.0.2.0/24", "a documentation address"),
    ("192.168.0.0/16", "a private address"),
    ("198.18.0.0/15", "a benchmarking address"),
    ("198.51.100.0/24", "a documentation address"),
    ("203.0.113.0/24", "a documentation address"),
    ("224.0.0.0/4", "a multicast address"),
    ("255.255.255.255/32", "the broadcast address"),
    ("240.0.0.0/4", "a reserved address"),
))
_V6: tuple[tuple[IPv6Network, str], ...] = tuple((IPv6Network(net), reason) for net, reason in (
    ("::/128", "the unspecified address"),
    ("::1/128", "a loopback address"),
    ("64:ff9b:1::/48", "a local-use NAT64 address"),
    ("2001::/23", "a reserved address (IETF protocol assignments)"),
    ("2001:db8::/32", "a documentation address"),
    ("3fff::/20", "a documentation address"),
    ("fc00::/7", "a private (unique local) address"),
    ("fe80::/10", "a link-local address"),
    ("fec0::/10", "a site-local address"),
    ("ff00::/8", "a multicast address"),
))
_V6_GLOBAL_UNICAST = IPv6Network("2000::/3")  # everything else is reserved by the IETF
_NAT64 = IPv6Network("64:ff9b::/96")


def _embedded(address: IPv6Address) -> tuple[str, IPv4Address] | None:
    """An IPv6 form that carries an IPv4 address a sender would reach: which form, and it."""
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", address.ipv4_mapped
    if address in _NAT64:
        return "NAT64", IPv4Address(int(address) & 0xFFFF_FFFF)
    if address.sixtofour is not None:
        return "6to4", address.sixtofour
    return None


def address_class(address: _Address) -> str | None:
    """Why ``address`` is not public (``"a private address"``, …), or ``None`` if it is."""
    if isinstance(address, IPv6Address):
        embedded = _embedded(address)
        if embedded is not None:
            form, inner = embedded
            reason = address_class(inner)
            return None if reason is None else f"the {form} form of {inner}, {reason}"
        table: Sequence[tuple[IPv4Network | IPv6Network, str]] = _V6
    else:
        table = _V4
    for network, reason in table:
        if address in network:
            return reason
    if isinstance(address, IPv6Address) and address not in _V6_GLOBAL_UNICAST:
        return "a reserved address"
    if not address.is_global:  # a range a later Python knows and the tables above do not
        return "a reserved address"
    return None


class _Malformed(ValueError):
    """What is wrong with a URL's syntax, phrased to follow the field's name."""


def _port(text: str) -> None:
    if not (text.isascii() and text.isdigit() and len(text) <= 5 and 1 <= int(text) <= 65535):
        raise _Malformed(f"has port {text[:20]!r}; a port is a number from 1 to 65535")


def _host(text: str) -> tuple[str, _Address | None]:
    """The host as given (lower-cased, no brackets) and its address if it is an IP literal."""
    if text.startswith("["):
        inner = text[1:-1] if text.endswith("]") else ""
        try:
            return inner.lower(), IPv6Address(inner)
        except ValueError:
            raise _Malformed(f"has host {text[:80]}, not an IPv6 address") from None
    name = text.lower()
    try:
        return name, IPv4Address(name)
    except ValueError:
        pass
    labels = (name[:-1] if name.endswith(".") else name).split(".")
    if _NUMBER.fullmatch(labels[-1]):
        raise _Malformed(f"has host {text[:80]}, which is not a valid IPv4 address; write "
                         "IPv4 addresses as four decimal numbers (93.184.215.14)")
    if len(name) > _NAME_LENGTH_MAX or not all(_LABEL.fullmatch(label) for label in labels):
        raise _Malformed(f"has host {text[:80]}, which is not a valid host name")
    return name, None


def _parse(url: str) -> tuple[str, _Address | None]:
    """The URL's host and, for an IP literal, its address; ``_Malformed`` otherwise."""
    if len(url) > URL_LENGTH_MAX:
        raise _Malformed(f"is {len(url)} characters; at most {URL_LENGTH_MAX}")
    if not _URI_CHARACTERS.fullmatch(url):
        raise _Malformed("has a character a URL may not contain (a space, a control or "
                         "non-ASCII character, a backslash); percent-encode it")
    scheme = url.partition(":")[0] if ":" in url else ""
    if scheme != "https":
        shown = f"the scheme {scheme!r}" if _SCHEME.fullmatch(scheme) else "no scheme"
        raise _Malformed(f"must be an https:// URL (scheme exactly https); it has {shown}")
    try:
        netloc = urlsplit(url).netloc if url.startswith("https://") else ""
    except ValueError as exc:
        raise _Malformed(f"is malformed: {exc}") from None
    if "@" in netloc:
        raise _Malformed("must not carry credentials (user:password@host); authenticate "
                         "deliveries with the signing secret")
    host, colon, port = netloc.rpartition(":") if ":" in netloc.rpartition("]")[2] \
        else (netloc, "", "")
    if not host:
        raise _Malformed("has no host; it must look like https://host/path")
    if colon:
        _port(port)
    return _host(host)


def url_problem(url: str, resolve: Resolver, param: str = "url") -> Problem | None:
    """The first problem of a webhook URL (see the module docstring), or ``None``."""
    try:
        host, literal = _parse(url)
    except _Malformed as malformed:
        return Problem(param, "invalid_url", f"{param} {malformed}")
    addresses = (literal,) if literal is not None else tuple(resolve(host))
    if not addresses:
        return Problem(param, "invalid_url", f"{param} has host {host}, which resolves to no "
                                             "address")
    for address in addresses:
        reason = address_class(address)
        if reason is not None:
            where = (f"has host {host}, which is" if literal is not None
                     else f"has host {host}, which resolves to {address},")
            return Problem(param, "url_not_public",
                           f"{param} {where} {reason}; webhook URLs must resolve only to "
                           "public addresses")
    return None


def relaxed_url_problem(url: str, resolve: Resolver, param: str = "url") -> Problem | None:
    """The URL's problem when ``http`` and non-public addresses are allowed, or ``None``."""
    https = "https" + url[len("http"):] if url.startswith("http://") else url
    problem = url_problem(https, resolve, param)
    return None if problem is None or problem.code == "url_not_public" else problem
