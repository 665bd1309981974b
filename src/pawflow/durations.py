"""Durations (``90s`` … ``2y``) and absolute deadlines, as every API and setting accepts them.

Months and years are calendar-aware: ``1mo`` from January 31st is February 28th (or 29th).
An absent duration, or ``0``, means *never*. Settings (intervals, time-to-lives, retention)
read through :func:`setting_duration`, which also takes plain seconds (``15``, ``0.5``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from dateutil.relativedelta import relativedelta

from pawflow.errors import InvalidDuration

ACCEPTED_FORMS = (
    "a number followed by s, m, h, d, w, mo or y (90s, 5m, 12h, 3d, 2w, 1mo, 1y), or 0 for never"
)

_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_PLAIN_SECONDS = re.compile(r"^\s*\d+(\.\d*)?\s*$")
_DURATION = re.compile(r"^\s*(\d+)\s*(s|m|h|d|w|mo|y)?\s*$")
_UNITS: dict[str, relativedelta] = {
    "s": relativedelta(seconds=1),
    "m": relativedelta(minutes=1),
    "h": relativedelta(hours=1),
    "d": relativedelta(days=1),
    "w": relativedelta(weeks=1),
    "mo": relativedelta(months=1),
    "y": relativedelta(years=1),
}


def parse_duration(spec: str | int | timedelta | None) -> relativedelta | None:
    """Read a duration; ``None`` means never. Bare integers are seconds."""
    if spec is None:
        return None
    if isinstance(spec, timedelta):
        return None if spec == timedelta(0) else relativedelta(seconds=int(spec.total_seconds()))
    if isinstance(spec, bool):
        raise InvalidDuration(f"invalid duration {spec!r}: expected {ACCEPTED_FORMS}")
    if isinstance(spec, int):
        if spec < 0:
            raise InvalidDuration(f"invalid duration {spec!r}: it must not be negative")
        return None if spec == 0 else relativedelta(seconds=spec)
    if not isinstance(spec, str):
        raise InvalidDuration(f"invalid duration {spec!r}: expected {ACCEPTED_FORMS}")
    match = _DURATION.match(spec)
    if match is None:
        raise InvalidDuration(f"invalid duration {spec!r}: expected {ACCEPTED_FORMS}")
    count = int(match.group(1))
    unit = match.group(2)
    if count == 0:
        return None
    if unit is None:
        raise InvalidDuration(f"invalid duration {spec!r}: give a unit, {ACCEPTED_FORMS}")
    step = _UNITS[unit]
    return relativedelta(
        years=step.years * count,
        months=step.months * count,
        days=step.days * count,
        hours=step.hours * count,
        minutes=step.minutes * count,
        seconds=step.seconds * count,
    )


def setting_duration(spec: str | float | timedelta) -> timedelta:
    """A setting's duration: ``90s`` … ``1y``, or plain seconds (``15``, ``"0.5"``); above 0."""
    if isinstance(spec, bool) or not isinstance(spec, str | int | float | timedelta):
        raise InvalidDuration(f"invalid duration {spec!r}: expected {ACCEPTED_FORMS}")
    try:
        if isinstance(spec, timedelta):
            span = spec
        elif isinstance(spec, int | float):
            span = timedelta(seconds=spec)
        elif _PLAIN_SECONDS.match(spec):
            span = timedelta(seconds=float(spec))
        else:
            step = parse_duration(spec)
            if step is None:
                raise InvalidDuration(f"invalid duration {spec!r}: it must be more than 0")
            span = (_EPOCH + step) - _EPOCH  # months and years counted from a fixed day
    except (OverflowError, ValueError) as exc:  # huge, or not a number (nan)
        raise InvalidDuration(f"invalid duration {spec!r}: it is out of range") from exc
    if span <= timedelta(0):
        raise InvalidDuration(f"invalid duration {spec!r}: it must be more than 0")
    return span


def setting_seconds(spec: str | float | timedelta) -> float:
    """:func:`setting_duration` in seconds, for intervals that a timer waits on."""
    return setting_duration(spec).total_seconds()


def deadline_after(now: datetime, spec: str | int | timedelta | None) -> datetime | None:
    """The moment ``spec`` after ``now``, or ``None`` for never."""
    step = parse_duration(spec)
    if step is None:
        return None
    try:
        return now + step
    except (OverflowError, ValueError) as exc:  # relativedelta says ValueError past 9999
        raise InvalidDuration(f"invalid duration {spec!r}: it reaches past the year 9999") from exc


def parse_deadline(value: str | datetime) -> datetime:
    """An absolute ISO-8601 deadline; it must carry a timezone. Returned in UTC."""
    if isinstance(value, datetime):
        when = value
    elif isinstance(value, str):
        try:
            when = datetime.fromisoformat(
                value.strip().replace("Z", "+00:00").replace("z", "+00:00")
            )
        except ValueError as exc:
            raise InvalidDuration(
                f"invalid deadline {value!r}: expected ISO-8601 with a timezone, "
                "such as 2026-12-01T09:00:00Z"
            ) from exc
    else:
        raise InvalidDuration(f"invalid deadline {value!r}: expected an ISO-8601 string")
    if when.tzinfo is None or when.utcoffset() is None:
        raise InvalidDuration(
            f"invalid deadline {value!r}: it must carry a timezone, such as Z or +02:00"
        )
    try:
        return when.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:00-01:00 is past the last representable moment,
        return datetime.max.replace(tzinfo=UTC)  # which is as good as never
