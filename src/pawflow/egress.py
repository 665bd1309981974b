"""The egress rule: what the server may call when a user chooses where.

Every outbound call a user can aim (a webhook, a notification URL of any Apprise scheme, an
A2A push config, a Web Push endpoint) goes through one :class:`EgressRule`:

- the host is resolved **once**, and every address it resolves to is judged: a loopback,
  link-local, private, shared (``100.64.0.0/10``), multicast, unspecified or reserved address
  is *inward* and refused, and so is an IPv6 address that wraps one (IPv4-mapped
  ``::ffff:a.b.c.d``, IPv4-compatible ``::a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4
  ``2002::/16``, Teredo);
- the call then connects to the very address that was checked, never to a second answer of
  the DNS (a name that resolves outward once and inward the next time cannot slip through):
  :meth:`EgressRule.client` is an ``httpx`` client whose connections go to the checked
  address while the ``Host`` header and the TLS name stay the URL's, and
  :meth:`EgressRule.resolving` holds a library that resolves names itself (Apprise, smtplib)
  to the same rule on the calling thread;
- ``PAWFLOW_EGRESS_ALLOWED_HOSTS`` (the older ``PAWFLOW_WEBHOOK_ALLOWED_HOSTS`` is still
  read) names the exceptions, for every kind of call alike: host names, addresses, networks
  (``10.1.0.0/16``) and schemes (``mailto://``) that may be called although inward.

An HTTP client of the rule also bounds each attempt as a whole: connecting, sending and
reading the whole answer end by one deadline, so a receiver that trickles its answer a byte
at a time fails at the deadline like one that never answers.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

from pawflow.errors import EgressRefused

__all__ = [
    "AllowedHosts",
    "EgressRule",
    "Target",
    "inward",
]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
ENV_NAMES = ("PAWFLOW_EGRESS_ALLOWED_HOSTS", "PAWFLOW_WEBHOOK_ALLOWED_HOSTS")
"""Where the exceptions are read, the first one set winning (the second is the old name)."""

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_COMPATIBLE = ipaddress.ip_network("::/96")


def _wrapped(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4, Teredo)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64 or ip in _COMPATIBLE:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def inward(address: str | Address) -> bool:
    """Whether ``address`` is inside: not a public unicast address, or one wrapping one."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        carried = _wrapped(ip)
        if carried is not None:
            return inward(carried)
    return not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_unspecified


@dataclass(frozen=True)
class AllowedHosts:
    """The exceptions: names, addresses, networks and schemes that may be called though
    inward (or, for a scheme, though the rule cannot judge it)."""

    names: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()
    schemes: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, value: str | None) -> AllowedHosts:
        """From ``hooks.internal, 10.20.0.0/16, [fd00::1], mailto://``."""
        names: set[str] = set()
        schemes: set[str] = set()
        networks: list[Network] = []
        for part in (value or "").split(","):
            item = part.strip().lower()
            if item.endswith("://"):
                schemes.add(item[:-3])
            elif item:
                try:
                    networks.append(ipaddress.ip_network(item.strip("[]"), strict=False))
                except ValueError:
                    names.add(item.rstrip("."))
        return cls(frozenset(names), tuple(networks), frozenset(schemes))

    def allows(self, host: str, addresses: Iterable[str]) -> bool:
        """Whether ``host`` is named, or all its ``addresses`` lie in listed networks."""
        if host.lower().rstrip(".") in self.names:
            return True
        found = [ipaddress.ip_address(a) for a in addresses]
        return bool(found) and all(any(ip in net for net in self.networks) for ip in found)


@dataclass(frozen=True)
class Target:
    """A checked URL: its host and port, and the addresses that may be called for it."""

    url: str
    host: str
    port: int
    addresses: tuple[str, ...]

    @property
    def address(self) -> str:
        """The address a call connects to (the first checked)."""
        return self.addresses[0]


@dataclass(frozen=True)
class EgressRule:
    """Which outbound addresses a user-aimed call may reach (see the module)."""

    allowed: AllowedHosts = field(default_factory=AllowedHosts)

    @classmethod
    def parse(cls, value: str | None) -> EgressRule:
        return cls(AllowedHosts.parse(value))

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> EgressRule:
        """From ``PAWFLOW_EGRESS_ALLOWED_HOSTS``, else ``PAWFLOW_WEBHOOK_ALLOWED_HOSTS``."""
        return cls.parse(next((env[name] for name in ENV_NAMES if name in env), None))

    def allows_scheme(self, scheme: str) -> bool:
        return scheme.lower() in self.allowed.schemes

    def addresses(self, host: str, port: int) -> tuple[str, ...]:
        """Resolve ``host`` once and judge every address; raises :class:`EgressRefused`."""
        name = host.strip("[]")
        try:
            found = {str(info[4][0]) for info in _getaddrinfo(name, port, 0, socket.SOCK_STREAM)}
        except (OSError, UnicodeError) as exc:
            raise EgressRefused(f"cannot resolve {name}: {exc}") from exc
        addresses = tuple(sorted(found, key=lambda a: (":" in a, a)))  # IPv4 first
        if not addresses:
            raise EgressRefused(f"cannot resolve {name}")
        self.judge(name, addresses)
        return addresses

    def judge(self, host: str, addresses: Iterable[str]) -> None:
        """Refuse an inward address of ``host`` unless the exceptions allow it."""
        addresses = list(addresses)
        if self.allowed.allows(host, addresses):
            return
        for address in addresses:
            if inward(address.split("%", 1)[0]):
                raise EgressRefused(
                    f"{host} is a private or loopback address ({address});"
                    " list it in PAWFLOW_EGRESS_ALLOWED_HOSTS to allow it"
                )

    def check_url(self, url: str) -> Target:
        """An ``http``/``https`` URL with a host and no credentials, its host resolved once
        and judged; raises :class:`EgressRefused` with the reason."""
        try:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError as exc:
            raise EgressRefused(f"cannot be read: {exc}") from exc
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EgressRefused("must be an http:// or https:// URL with a host")
        if parts.username or parts.password:
            raise EgressRefused("must not carry a user name or password")
        return Target(url, parts.hostname, port, self.addresses(parts.hostname, port))

    def client(self, timeout: float, target: Target | None = None) -> httpx.Client:
        """An ``httpx`` client whose every connection is judged by the rule and goes to the
        checked address (``target``'s, already checked, without resolving again), and whose
        use ends by ``timeout`` seconds from now: connect, send and the whole answer.
        Redirects are not followed and no proxy of the environment is used."""
        pins = {} if target is None else {target.host.lower(): target.addresses}
        backend = _Backend(self, time.monotonic() + timeout, pins)
        return httpx.Client(
            transport=_Transport(backend),
            timeout=timeout,
            follow_redirects=False,
            trust_env=False,
        )

    @contextlib.contextmanager
    def resolving(self, pins: Mapping[str, Iterable[str]] | None = None) -> Iterator[Refusals]:
        """While the block runs, every name this thread resolves (``socket.getaddrinfo``,
        which ``requests``, ``urllib3`` and ``smtplib`` use) is resolved once and judged by
        the rule, and the library connects to what was judged; a name in ``pins`` is not
        resolved again but given its checked addresses. What was refused is listed in the
        :class:`Refusals` yielded."""
        _install()
        refusals = Refusals()
        pinned = {host.lower(): tuple(found) for host, found in (pins or {}).items()}
        previous = getattr(_guard, "active", None)
        _guard.active = (self, pinned, refusals)
        try:
            yield refusals
        finally:
            _guard.active = previous


@dataclass
class Refusals:
    """The reasons the rule refused names during :meth:`EgressRule.resolving`."""

    reasons: list[str] = field(default_factory=list)


# -- the pinned, deadline-bound HTTP connections ------------------------------------------------


class _Backend(httpcore.NetworkBackend):
    """Connects to the judged address of a host, and bounds every step by one deadline."""

    def __init__(self, rule: EgressRule, deadline: float, pins: dict[str, tuple[str, ...]]):
        self._rule = rule
        self._deadline = deadline
        self._pins = pins
        self._inner = httpcore.SyncBackend()

    def left(self, error: type[Exception], timeout: float | None = None) -> float:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise error("the attempt's deadline passed")
        return remaining if timeout is None else min(timeout, remaining)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = self._pins.get(host.lower()) or self._rule.addresses(host, port)
        failure: Exception | None = None
        for address in addresses:
            try:
                stream = self._inner.connect_tcp(
                    address,
                    port,
                    timeout=self.left(httpcore.ConnectTimeout, timeout),
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            return _BoundStream(stream, self)
        assert failure is not None
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("no Unix socket is an outbound address")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _BoundStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, backend: _Backend) -> None:
        self._inner = inner
        self._backend = backend

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._backend.left(httpcore.ReadTimeout, timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._backend.left(httpcore.WriteTimeout, timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bound = self._backend.left(httpcore.ConnectTimeout, timeout)
        return _BoundStream(
            self._inner.start_tls(ssl_context, server_hostname, bound), self._backend
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Transport(httpx.HTTPTransport):
    def __init__(self, backend: _Backend) -> None:
        super().__init__(trust_env=False)
        # httpx's transport takes no network backend; the pool under it (httpcore's) does.
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            network_backend=backend,
        )


# -- names resolved by libraries, on a guarded thread ----------------------------------------

_guard = threading.local()
_install_lock = threading.Lock()
_getaddrinfo = socket.getaddrinfo


def _guarded_getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    active: tuple[EgressRule, dict[str, tuple[str, ...]], Refusals] | None = getattr(
        _guard, "active", None
    )
    if active is None:
        return _getaddrinfo(host, port, *args, **kwargs)
    rule, pins, refusals = active
    name = (host.decode() if isinstance(host, bytes) else str(host or "")).strip("[]")
    pinned = pins.get(name.lower())
    if pinned is not None:  # checked already: given again, without asking the DNS
        return [info for a in pinned for info in _getaddrinfo(a, port, *args, **kwargs)]
    try:
        found = _getaddrinfo(name, port, *args, **kwargs)
        rule.judge(name, [str(info[4][0]) for info in found])
    except EgressRefused as exc:
        refusals.reasons.append(exc.message)
        raise socket.gaierror(socket.EAI_FAIL, exc.message) from exc
    return found


def _install() -> None:
    with _install_lock:
        if socket.getaddrinfo is not _guarded_getaddrinfo:
            socket.getaddrinfo = _guarded_getaddrinfo
