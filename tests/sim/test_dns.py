"""The world's simulated name resolution (runs offline; spec, Limits "Webhook URL")."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address, ip_address

import pytest

from clearing_sim.sim.dns import DEFAULT_PUBLIC_ADDRESS, DnsTable
from clearing_sim.sim.world import World

LOOPBACK = (IPv4Address("127.0.0.1"), IPv6Address("::1"))


def test_a_name_not_in_the_table_resolves_to_the_one_public_default() -> None:
    assert IPv4Address("93.184.215.14") == DEFAULT_PUBLIC_ADDRESS
    assert DEFAULT_PUBLIC_ADDRESS.is_global
    assert DnsTable().resolve("hooks.example.com") == (DEFAULT_PUBLIC_ADDRESS,)


@pytest.mark.parametrize("host", ["localhost", "LocalHost", "localhost.", "api.localhost",
                                  "a.b.localhost."])
def test_localhost_names_resolve_to_loopback(host: str) -> None:
    assert DnsTable().resolve(host) == LOOPBACK


@pytest.mark.parametrize(("host", "address"), [
    ("10.0.0.5", "10.0.0.5"), ("93.184.215.14", "93.184.215.14"), ("::1", "::1"),
    ("[::1]", "::1"), ("[2606:4700::1]", "2606:4700::1"), ("[FE80::1]", "fe80::1"),
    ("10.0.0.5.", "10.0.0.5"),
])
def test_ip_literals_resolve_to_themselves(host: str, address: str) -> None:
    assert DnsTable().resolve(host) == (ip_address(address),)


def test_set_adds_and_replaces_entries_in_the_order_given() -> None:
    dns = DnsTable()
    dns.set("hooks.example.com", ["10.0.0.5", "2606:4700::1"])
    assert dns.resolve("hooks.example.com") == (IPv4Address("10.0.0.5"),
                                                IPv6Address("2606:4700::1"))
    dns.set("hooks.example.com", ["198.51.100.7"])
    assert dns.resolve("hooks.example.com") == (IPv4Address("198.51.100.7"),)
    assert dns.resolve("other.example.com") == (DEFAULT_PUBLIC_ADDRESS,)


def test_names_are_case_insensitive_and_a_trailing_dot_is_tolerated() -> None:
    dns = DnsTable()
    dns.set("Hooks.Example.COM.", ["10.0.0.5"])
    for host in ("hooks.example.com", "HOOKS.EXAMPLE.COM", "hooks.example.com."):
        assert dns.resolve(host) == (IPv4Address("10.0.0.5"),)


def test_a_name_set_with_no_addresses_does_not_resolve() -> None:
    dns = DnsTable()
    dns.set("gone.example.com", [])
    assert dns.resolve("gone.example.com") == ()


@pytest.mark.parametrize("host", ["localhost", "api.localhost", "10.0.0.5", "[::1]", ""])
def test_names_resolved_by_rule_cannot_be_set(host: str) -> None:
    with pytest.raises(ValueError, match="only names can be set"):
        DnsTable().set(host, ["93.184.215.14"])


def test_an_address_that_is_not_one_is_refused_and_the_entry_kept() -> None:
    dns = DnsTable()
    dns.set("hooks.example.com", ["10.0.0.5"])
    with pytest.raises(ValueError):
        dns.set("hooks.example.com", ["93.184.215.14", "not-an-address"])
    assert dns.resolve("hooks.example.com") == (IPv4Address("10.0.0.5"),)


def test_each_world_has_its_own_table() -> None:
    a, b = World(), World()
    a.dns.set("hooks.example.com", ["10.0.0.5"])
    assert a.dns.resolve("hooks.example.com") == (IPv4Address("10.0.0.5"),)
    assert b.dns.resolve("hooks.example.com") == (DEFAULT_PUBLIC_ADDRESS,)
