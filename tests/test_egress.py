"""The egress rule: which outbound addresses a user-aimed call may reach."""

from __future__ import annotations

import socket

import pytest

from pawflow.channels.apprise import check_notify_url, judge
from pawflow.egress import EgressRule, inward
from pawflow.errors import EgressRefused, InvalidInput

INWARD = [
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",  # shared (carrier-grade NAT)
    "0.0.0.0",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "ff02::1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::127.0.0.1",  # IPv4-compatible
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "2002:a00:1::",  # 6to4 of 10.0.0.1
]
OUTWARD = ["93.184.215.14", "8.8.8.8", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::"]


@pytest.mark.parametrize("address", INWARD)
def test_inward_addresses_are_refused(address: str) -> None:
    assert inward(address)
    with pytest.raises(EgressRefused, match="PAWFLOW_EGRESS_ALLOWED_HOSTS"):
        EgressRule().judge("h", [address])


@pytest.mark.parametrize("address", OUTWARD)
def test_public_addresses_pass(address: str) -> None:
    assert not inward(address)


@pytest.mark.parametrize(
    "url",
    [
        "http://[::127.0.0.1]/",
        "http://[64:ff9b::7f00:1]/",
        "http://127.0.0.1:8/",
        "http://localhost/",
    ],
)
def test_urls_wrapping_loopback_are_refused_like_loopback(url: str) -> None:
    with pytest.raises(EgressRefused):
        EgressRule().check_url(url)


def test_the_exceptions_name_hosts_networks_and_schemes() -> None:
    rule = EgressRule.parse("hooks.internal, 10.0.0.0/8, [::1], mailto://")
    rule.judge("hooks.internal", ["192.168.0.9"])
    rule.judge("other", ["10.9.9.9"])
    rule.judge("other", ["::1"])
    with pytest.raises(EgressRefused):
        rule.judge("other", ["10.9.9.9", "127.0.0.1"])  # every address must be allowed
    assert rule.check_url("http://10.1.2.3:81/x").addresses == ("10.1.2.3",)
    assert rule.allows_scheme("mailto") and not rule.allows_scheme("dbus")


def test_the_old_variable_is_still_read() -> None:
    old = EgressRule.from_env({"PAWFLOW_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1"})
    assert old.check_url("http://127.0.0.1:9/").address == "127.0.0.1"
    new = {"PAWFLOW_EGRESS_ALLOWED_HOSTS": "", "PAWFLOW_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1"}
    with pytest.raises(EgressRefused):
        EgressRule.from_env(new).check_url("http://127.0.0.1:9/")


@pytest.mark.parametrize(
    "url",
    [
        "ntfy://127.0.0.1:9999/x",
        "ntfys://[::127.0.0.1]/topic",
        "gotify://10.0.0.1/token",
        "apprise://169.254.169.254/key",
        "mmost://127.0.0.1/hook",
        "rocket://user:pass@127.0.0.1/room",
        "ncloud://user:pass@192.168.1.1/admin",
        "json://[64:ff9b::7f00:1]/",
        "mailto://u:p@example.org?smtp=127.0.0.1",
    ],
)
def test_every_apprise_scheme_with_a_host_is_judged_at_the_door(url: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        check_notify_url(url, EgressRule())
    assert [e.path for e in refused.value.errors] == ["notify_url"]


def test_apprise_schemes_without_a_host_or_that_cannot_be_judged() -> None:
    rule = EgressRule()
    assert judge("ntfy://my-topic", rule) == {}  # a topic on the public service
    assert judge("discord://123/abc", rule) == {}  # a public service: judged at the send
    with pytest.raises(EgressRefused, match="cannot judge"):
        judge("dbus://", rule)
    assert judge("dbus://", EgressRule.parse("dbus://")) == {}
    with pytest.raises(InvalidInput, match="Apprise"):
        check_notify_url("nosuchscheme://x", rule)


def test_a_library_resolving_names_itself_is_held_to_the_rule() -> None:
    rule = EgressRule()
    with rule.resolving() as refusals, pytest.raises(socket.gaierror):
        socket.getaddrinfo("localhost", 80)
    assert refusals.reasons and "loopback" in refusals.reasons[0]
    # A pinned name is given its checked addresses, without asking the DNS again.
    with rule.resolving({"hooks.pawflow.invalid": ("203.0.113.7",)}):
        found = socket.getaddrinfo("hooks.pawflow.invalid", 443, 0, socket.SOCK_STREAM)
    assert {info[4][0] for info in found} == {"203.0.113.7"}
    # Outside the block, and on other threads, nothing changes.
    assert socket.getaddrinfo("localhost", 80)
