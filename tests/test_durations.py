"""One duration parser for every setting: ``1s``, ``90s``, ``2m`` … ``1y``, or plain seconds."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pawflow.durations import setting_duration, setting_seconds
from pawflow.errors import InvalidDuration, InvalidInput
from pawflow.server.settings import ServerSettings


@pytest.mark.parametrize(
    ("spec", "seconds"),
    [("1s", 1), ("90s", 90), ("2m", 120), ("12h", 43_200), ("15", 15), (" 0.5 ", 0.5), (3, 3)],
)
def test_a_setting_takes_a_unit_or_plain_seconds(spec: str | int, seconds: float) -> None:
    assert setting_seconds(spec) == seconds
    assert setting_duration(spec) == timedelta(seconds=seconds)


@pytest.mark.parametrize("spec", ["0", "0s", "-1", "soon", "1x", "", -2, True, 1e300, "1e5"])
def test_a_setting_refuses_what_is_not_a_positive_duration(spec: object) -> None:
    with pytest.raises(InvalidDuration):
        setting_duration(spec)  # type: ignore[arg-type]


def test_every_duration_setting_reads_the_same_forms() -> None:
    env = {
        "PAWFLOW_SWEEP_INTERVAL": "1s",
        "PAWFLOW_KEEPALIVE": "2m",
        "PAWFLOW_LIVE_TTL": "90",
        "PAWFLOW_EVENT_RETENTION": "1mo",
    }
    settings = ServerSettings.from_env(env)
    assert (settings.sweep_interval, settings.keepalive) == (1.0, 120.0)
    assert settings.live_ttl == timedelta(seconds=90)
    assert settings.event_retention == timedelta(days=31)  # January, from a fixed day
    assert ServerSettings.from_env({"PAWFLOW_SWEEP_INTERVAL": "15"}).sweep_interval == 15.0
    assert settings.replace(keepalive="0.5").keepalive == 0.5
    with pytest.raises(InvalidInput, match="sweep_interval"):
        ServerSettings.from_env({"PAWFLOW_SWEEP_INTERVAL": "fast"})
    with pytest.raises(InvalidInput, match="session_ttl"):
        ServerSettings.from_env({"PAWFLOW_SESSION_TTL": "0"})


def test_the_lease_time_to_live_leaves_a_third_for_clocks_that_disagree() -> None:
    settings = ServerSettings.from_env({"PAWFLOW_LEASE_TTL": "1m", "PAWFLOW_MAX_CLOCK_SKEW": "5"})
    assert (settings.lease_ttl, settings.max_clock_skew) == (60.0, 5.0)
    assert (ServerSettings().lease_ttl, ServerSettings().max_clock_skew) == (10.0, 2.0)
    with pytest.raises(InvalidInput, match="three times max_clock_skew"):
        ServerSettings.from_env({"PAWFLOW_LEASE_TTL": "6s"})
