"""Cron schedules as a Kubernetes CronJob reads them, written once.

The API server parses ``spec.schedule`` with robfig/cron's standard parser: five fields
(minute, hour, day of month, month, day of week) of comma-separated items, each ``*`` or
``?``, a number or name, or a range ``a-b``, optionally ``/step``; or a descriptor such as
``@daily``. Day-of-week runs 0-6 (0 is Sunday; 7 is refused), names are three letters in any
case, and when both day fields are restricted a day matching either fires (Vixie cron's rule).
https://github.com/robfig/cron/blob/v3.0.1/parser.go

From the field table below come the values model's schema pattern (syntax and bounds, so
values.schema.json refuses what cannot parse), the parser ``simulate`` runs schedules with,
and the guard's name tables (through the template context) for the one check a pattern cannot
make: that a range does not start after it ends. We refuse a little more than robfig accepts
(empty list items, a leading ``+``, ``@every``, which names no time of day), never less.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

SOURCE = "https://github.com/robfig/cron/blob/v3.0.1/parser.go"
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


@dataclass(frozen=True)
class CronField:
    """One of the five fields: its name, bounds and the names it accepts."""

    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()  # names[i] means low + i

    def named(self) -> dict[str, int]:
        return {n: self.low + i for i, n in enumerate(self.names)}


FIELDS: tuple[CronField, ...] = (
    CronField("minute", 0, 59),
    CronField("hour", 0, 23),
    CronField("day of month", 1, 31),
    CronField("month", 1, 12, MONTHS),
    CronField("day of week", 0, 6, WEEKDAYS),
)
DESCRIPTORS: dict[str, str] = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
MAX_LENGTH = 200
EXAMPLE = "0 8 * * 1-5"


def _numbers(low: int, high: int) -> str:
    """A regex of the decimal numbers low..high (at most two digits), leading zeros allowed."""
    parts, full = [], []  # full: tens whose every unit digit is in the range
    for tens in range(low // 10, high // 10 + 1):
        first = max(low, tens * 10) % 10
        last = min(high, tens * 10 + 9) % 10
        if tens and (first, last) == (0, 9):
            full.append(tens)
            continue
        units = f"[{first}-{last}]" if first != last else str(first)
        parts.append(units if tens == 0 else f"{tens}{units}")
    if full:
        tens_class = f"[{full[0]}-{full[-1]}]" if len(full) > 1 else str(full[0])
        parts.append(f"{tens_class}[0-9]")
    return "0*(?:" + "|".join(sorted(parts, key=len, reverse=True)) + ")"


def _any_case(name: str) -> str:
    return "".join(f"[{c.upper()}{c}]" for c in name)


def _field_pattern(field: CronField) -> str:
    atom = "|".join([_numbers(field.low, field.high), *(_any_case(n) for n in field.names)])
    item = rf"(?:\*|\?|(?:{atom})(?:-(?:{atom}))?)(?:/0*[1-9][0-9]*)?"
    return rf"{item}(?:,{item})*"


# values.schema.json's and the model's pattern
PATTERN = (
    r"^\s*(?:"
    + "|".join(sorted(DESCRIPTORS))
    + "|"
    + r"\s+".join(_field_pattern(f) for f in FIELDS)
    + r")\s*$"
)
_PATTERN = re.compile(PATTERN)


# The one message for a reversed range, a Go format string: the rule's on both install paths,
# and the parser's (a valid field holds only letters, digits and '-', which %q leaves as they
# are).
RANGE_ORDER = (
    "%s: range %q starts after it ends; split a range that wraps around into two items "
    "(22-23,0-6, not 22-6)"
)


class CronError(ValueError):
    """An expression the API server would refuse (or we do), with what to write instead."""


@dataclass(frozen=True)
class Cron:
    """A parsed schedule: the allowed values of each field."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    days_star: bool  # day of month given as * or ?
    weekdays_star: bool

    def day_matches(self, day: dt.date) -> bool:
        """robfig's rule: with either day field a star, both must match; else either."""
        if day.month not in self.months:
            return False
        in_month = day.day in self.days
        in_week = (day.isoweekday() % 7) in self.weekdays
        if self.days_star or self.weekdays_star:
            return in_month and in_week
        return in_month or in_week

    def times_on(self, day: dt.date) -> list[int]:
        """The minutes after midnight at which it fires on ``day``, in order."""
        if not self.day_matches(day):
            return []
        return sorted(h * 60 + m for h in self.hours for m in self.minutes)


def parse(text: str) -> Cron:
    """The schedule, or CronError naming the field and what was expected."""
    if not isinstance(text, str):
        raise CronError(f"a schedule is text, such as {EXAMPLE!r}")
    spec = text.strip()
    if spec.startswith("@"):
        if spec not in DESCRIPTORS:
            raise CronError(
                f"{spec[:24]!r} is not a descriptor Kubernetes and this chart both read; use "
                f"one of {', '.join(sorted(DESCRIPTORS))} or five fields, e.g. {EXAMPLE!r}"
            )
        spec = DESCRIPTORS[spec]
    parts = spec.split()
    if len(parts) != len(FIELDS):
        raise CronError(
            f"expected 5 fields (minute hour day-of-month month day-of-week), got {len(parts)}; "
            f"e.g. {EXAMPLE!r} is 08:00 on weekdays"
        )
    sets: list[frozenset[int]] = []
    stars: list[bool] = []
    for field, part in zip(FIELDS, parts, strict=True):
        values, star = _field(field, part)
        sets.append(frozenset(values))
        stars.append(star)
    minutes, hours, days, months, weekdays = sets
    return Cron(
        text,
        minutes,
        hours,
        days,
        months,
        weekdays,
        days_star=stars[2],
        weekdays_star=stars[4],
    )


def _field(field: CronField, part: str) -> tuple[set[int], bool]:
    values: set[int] = set()
    star = False
    for item in part.split(","):
        body, slash, step_text = item.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(
                    f"{field.name}: step {step_text[:24]!r} in {item[:40]!r} is not a whole "
                    "number above 0"
                )
            step = int(step_text)
        if body in ("*", "?"):
            low, high = field.low, field.high
            star = star or step == 1
        else:
            first, dash, last = body.partition("-")
            low = _atom(field, first, item)
            high = _atom(field, last, item) if dash else (field.high if slash else low)
            if low > high:
                raise CronError(RANGE_ORDER.replace("%q", '"%s"') % (field.name, body))
        values.update(range(low, high + 1, step))
    return values, star


def _atom(field: CronField, text: str, item: str) -> int:
    named = field.named().get(text.lower())
    if named is not None:
        return named
    if not text.isdigit():
        names = f" or a name ({', '.join(field.names)})" if field.names else ""
        raise CronError(f"{field.name}: {text[:24]!r} in {item[:40]!r} is not a number{names}")
    value = int(text)
    if not field.low <= value <= field.high:
        hint = " (0 is Sunday, as is sun; 7 is refused)" if field.names == WEEKDAYS else ""
        raise CronError(f"{field.name}: {value} is outside {field.low}-{field.high}{hint}")
    return value


def syntax_error(text: str) -> str | None:
    """What the schema pattern refuses in ``text`` (None when it matches): the parser's
    message when it has one, else a general one."""
    if len(text) <= MAX_LENGTH and _PATTERN.match(text):
        return None
    try:
        parse(text)
    except CronError as error:
        return str(error)
    return (
        f"not a schedule Kubernetes reads: five fields of numbers, names, '*', ranges "
        f"'a-b', lists 'a,b' and steps '/n' (e.g. {EXAMPLE!r}), or @daily, @hourly, ..."
    )


def reversed_range(text: str) -> tuple[str, str] | None:
    """The check the pattern cannot make: (field name, range) of the first range that starts
    after it ends, in a schedule the pattern accepts."""
    if not _PATTERN.match(text) or text.strip().startswith("@"):
        return None
    for field, part in zip(FIELDS, text.split(), strict=True):
        named = field.named()
        for item in part.split(","):
            body = item.partition("/")[0]
            first, dash, last = body.partition("-")
            if dash and _value(named, first) > _value(named, last):
                return field.name, body
    return None


def _value(named: dict[str, int], text: str) -> int:
    return named[text.lower()] if text.lower() in named else int(text)


def guard_tables() -> dict[str, object]:
    """The fields in order with their names, for the guard's range check."""
    return {"fields": [{"name": f.name, "names": f.named()} for f in FIELDS]}
