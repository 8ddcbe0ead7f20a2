"""Webhook URL rules (spec, Webhooks: "must resolve to a public address, loopback and private
addresses refused"; Limits: "Webhook URL: HTTPS and public address only")."""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv4Address, IPv6Address, ip_address

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.domain.webhook_url import (
    URL_LENGTH_MAX,
    address_class,
    relaxed_url_problem,
    url_problem,
)

PUBLIC = "93.184.215.14"
NAMES = {
    "localhost": ("127.0.0.1", "::1"),
    "api.localhost": ("127.0.0.1", "::1"),
    "internal.example": ("10.0.0.5",),
    "mixed.example": (PUBLIC, "192.168.1.4"),
    "gone.example": (),
}


def resolve(host: str) -> Sequence[IPv4Address | IPv6Address]:
    """A stand-in for the world's DNS: a fixed table, everything else public."""
    name = host.lower().rstrip(".")
    return tuple(ip_address(a) for a in NAMES.get(name, (PUBLIC,)))


def code_of(url: str) -> str | None:
    problem = url_problem(url, resolve)
    return None if problem is None else problem.code


@pytest.mark.parametrize("url", [
    "https://hooks.example.com/clearing",
    "https://hooks.example.com",
    "https://hooks.example.com:8443/x?y=1#z",
    "https://Hooks.Example.COM./x",
    f"https://{PUBLIC}/hook",
    "https://[2606:4700::1]:443/hook",
    "https://[::ffff:93.184.215.14]/",
    "https://[64:ff9b::5db8:d70e]/",
    "https://xn--bcher-kva.example/",
    "https://" + "a" * 63 + ".example/",
    "https://hooks.example.com/" + "p" * (URL_LENGTH_MAX - len("https://hooks.example.com/")),
])
def test_an_https_url_of_a_public_host_is_accepted(url: str) -> None:
    assert url_problem(url, resolve) is None


@pytest.mark.parametrize(("url", "says"), [
    ("http://hooks.example.com/", "scheme 'http'"),
    ("ftp://hooks.example.com/", "scheme 'ftp'"),
    ("HTTPS://hooks.example.com/", "scheme 'HTTPS'"),
    ("wss://hooks.example.com/", "scheme 'wss'"),
    ("hooks.example.com/path", "no scheme"),
    ("", "no scheme"),
    ("https://", "no host"),
    ("https:///path", "no host"),
    ("https:hooks.example.com", "no host"),
    ("https://:443/", "no host"),
    ("https://user:secret@hooks.example.com/", "credentials"),
    ("https://user@hooks.example.com/", "credentials"),
    ("https://@hooks.example.com/", "credentials"),
    ("https://hooks.example.com\\@127.0.0.1/", "may not contain"),
    ("https://hooks.example.com/a b", "may not contain"),
    ("https://hooks.example.com/\n", "may not contain"),
    ("https://bücher.example/", "may not contain"),
    ("https://hooks.example.com:0/", "port"),
    ("https://hooks.example.com:65536/", "port"),
    ("https://hooks.example.com:/", "port"),
    ("https://hooks.example.com:+443/", "port"),
    ("https://hooks.example.com:https/", "port"),
    ("https://hooks_internal.example/", "not a valid host name"),
    ("https://a..example/", "not a valid host name"),
    ("https://-a.example/", "not a valid host name"),
    ("https://" + "a" * 64 + ".example/", "not a valid host name"),
    ("https://2130706433/", "not a valid IPv4 address"),
    ("https://0x7f.1/", "not a valid IPv4 address"),
    ("https://127.1/", "not a valid IPv4 address"),
    ("https://010.0.0.1/", "not a valid IPv4 address"),
    ("https://1.2.3.4.5/", "not a valid IPv4 address"),
    ("https://[1.2.3.4]/", "malformed"),
    ("https://[::1/", "malformed"),
    ("https://gone.example/", "resolves to no address"),
    ("https://hooks.example.com/" + "p" * (URL_LENGTH_MAX - len("https://hooks.example.com/")
                                           + 1), "at most 2048"),
])
def test_a_malformed_or_non_https_url_is_invalid_url(url: str, says: str) -> None:
    problem = url_problem(url, resolve)
    assert problem is not None
    assert (problem.param, problem.code) == ("url", "invalid_url")
    assert says in problem.message


@pytest.mark.parametrize(("url", "address", "reason"), [
    ("https://127.0.0.1/", "127.0.0.1", "a loopback address"),
    ("https://127.8.9.10/", "127.8.9.10", "a loopback address"),
    ("https://localhost/", "127.0.0.1", "a loopback address"),
    ("https://LOCALHOST.:8443/", "127.0.0.1", "a loopback address"),
    ("https://api.localhost/", "127.0.0.1", "a loopback address"),
    ("https://10.1.2.3/", "10.1.2.3", "a private address"),
    ("https://172.16.0.1/", "172.16.0.1", "a private address"),
    ("https://172.31.255.254/", "172.31.255.254", "a private address"),
    ("https://192.168.1.1/", "192.168.1.1", "a private address"),
    ("https://169.254.169.254/latest/meta-data", "169.254.169.254", "a link-local address"),
    ("https://0.0.0.0/", "0.0.0.0", "the unspecified address"),
    ("https://0.1.2.3/", "0.1.2.3", "a 'this network' address"),
    ("https://100.64.0.1/", "100.64.0.1", "a shared address (carrier-grade NAT)"),
    ("https://100.127.255.254/", "100.127.255.254", "a shared address (carrier-grade NAT)"),
    ("https://224.0.0.251/", "224.0.0.251", "a multicast address"),
    ("https://240.0.0.1/", "240.0.0.1", "a reserved address"),
    ("https://255.255.255.255/", "255.255.255.255", "the broadcast address"),
    ("https://192.0.0.8/", "192.0.0.8", "a reserved address (IETF protocol assignments)"),
    ("https://192.0.2.10/", "192.0.2.10", "a documentation address"),
    ("https://198.18.0.1/", "198.18.0.1", "a benchmarking address"),
    ("https://[::1]/", "::1", "a loopback address"),
    ("https://[::]/", "::", "the unspecified address"),
    ("https://[fe80::1]/", "fe80::1", "a link-local address"),
    ("https://[febf:ffff::1]/", "febf:ffff::1", "a link-local address"),
    ("https://[fe80::1%25eth0]/", "fe80::1%25eth0", "a link-local address"),
    ("https://[fc00::1]/", "fc00::1", "a private (unique local) address"),
    ("https://[fd12:3456::1]/", "fd12:3456::1", "a private (unique local) address"),
    ("https://[fec0::1]/", "fec0::1", "a site-local address"),
    ("https://[ff02::1]/", "ff02::1", "a multicast address"),
    ("https://[2001:db8::1]/", "2001:db8::1", "a documentation address"),
    ("https://[2001::1]/", "2001::1", "a reserved address (IETF protocol assignments)"),
    ("https://[100::1]/", "100::1", "a reserved address"),
    ("https://[::10.0.0.1]/", "::10.0.0.1", "a reserved address"),
    ("https://[64:ff9b:1::1]/", "64:ff9b:1::1", "a local-use NAT64 address"),
    ("https://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1",
     "the IPv4-mapped form of 10.0.0.1, a private address"),
    ("https://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1",
     "the IPv4-mapped form of 127.0.0.1, a loopback address"),
    ("https://[2002:a9fe:a9fe::]/", "2002:a9fe:a9fe::",
     "the 6to4 form of 169.254.169.254, a link-local address"),
    ("https://[64:ff9b::a00:1]/", "64:ff9b::a00:1",
     "the NAT64 form of 10.0.0.1, a private address"),
    ("https://internal.example/", "10.0.0.5", "a private address"),
    ("https://mixed.example/", "192.168.1.4", "a private address"),
])
def test_a_url_that_reaches_a_non_public_address_is_url_not_public(
        url: str, address: str, reason: str) -> None:
    problem = url_problem(url, resolve)
    assert problem is not None
    assert (problem.param, problem.code) == ("url", "url_not_public")
    literal = address in url  # an IP literal is judged as written, a name by its addresses
    said = f"{address}, which is {reason}" if literal else f"resolves to {address}, {reason}"
    assert said in problem.message


def test_the_message_names_the_resolved_address_and_its_class() -> None:
    problem = url_problem("https://internal.example/hook", resolve)
    assert problem is not None
    assert problem.message == ("url has host internal.example, which resolves to 10.0.0.5, "
                               "a private address; webhook URLs must resolve only to public "
                               "addresses")


def test_every_address_must_be_public_not_just_the_first() -> None:
    """A name with one public and one private address is refused: a sender may use either."""
    assert [str(a) for a in resolve("mixed.example")] == [PUBLIC, "192.168.1.4"]
    assert code_of("https://mixed.example/") == "url_not_public"


def test_ip_literals_are_judged_without_asking_the_resolver() -> None:
    def no_lookups(host: str) -> Sequence[IPv4Address | IPv6Address]:
        raise AssertionError(f"resolver asked for {host}")

    assert url_problem("https://93.184.215.14/", no_lookups) is None
    assert url_problem("https://[::1]/", no_lookups) is not None


def test_the_param_names_the_field() -> None:
    problem = url_problem("http://x.example/", resolve, "target.url")
    assert problem is not None and problem.param == "target.url"
    assert problem.message.startswith("target.url must be an https:// URL")


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700::1",
                                     "::ffff:8.8.8.8", "2002:5db8:d70e::"])
def test_public_addresses_have_no_class(address: str) -> None:
    assert address_class(ip_address(address)) is None


_URLISH = st.text(alphabet="https:/[]@.%:0123456789abcdefx-_ \\", max_size=60)


@given(st.one_of(_URLISH, st.text(max_size=80), _URLISH.map(lambda t: "https://" + t)))
def test_any_text_gets_an_answer_never_an_exception(text: str) -> None:
    problem = url_problem(text, resolve)
    assert problem is None or problem.code in ("invalid_url", "url_not_public")


@pytest.mark.parametrize("url", ["http://127.0.0.1:4242/webhooks", "https://localhost/hooks",
                                 "http://10.0.0.7/x", "https://hooks.example/x"])
def test_the_relaxed_rule_accepts_http_and_private_addresses(url: str) -> None:
    """The shim's --allow-private-webhook-urls: only the scheme and address rules relax."""
    assert relaxed_url_problem(url, resolve) is None


@pytest.mark.parametrize(("url", "code"), [("ftp://127.0.0.1/x", "invalid_url"),
                                           ("http://user:pw@127.0.0.1/x", "invalid_url"),
                                           ("http://127.0.0.1:0/x", "invalid_url"),
                                           ("https://gone.example/x", "invalid_url")])
def test_the_relaxed_rule_keeps_every_other_check(url: str, code: str) -> None:
    problem = relaxed_url_problem(url, resolve)
    assert problem is not None and problem.code == code
