"""pipeline/cron.py: CronJob schedules as Kubernetes reads them (robfig/cron's standard
parser), one grammar for the schema pattern, the parser and the guard's range check."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from gpu_platform.pipeline import cron

MONDAY = dt.date(2024, 1, 8)
VALID = [
    "0 8 * * 1-5",
    "30 7 * * MON-fri",
    "*/15 9-17 * * *",
    "0 0 1,15 * ?",
    "5/20 * * * *",
    "0 8 * jan-mar sun",
    "00 08 01 01 00",
    "  0 8 * * *  ",
    "0\t8 * * *",
    "@daily",
    "@hourly",
    "0-59/7 0-23/3 1-31/2 1-12/5 0-6/2",
]
# What Kubernetes refuses (and so do we), and what it accepts that we refuse on purpose.
INVALID = [
    "0 8 * * 7",  # robfig's day of week is 0-6
    "60 8 * * *",
    "0 24 * * *",
    "0 8 0 * *",
    "0 8 * 13 *",
    "0 8 * * 1-5 2024",
    "0 8 * *",
    "0 8 * * mon/0",
    "0 8 * * monday",
    "0 8 * * -1",
    "0 8,,9 * * *",  # robfig skips the empty item; we refuse it
    "0 +8 * * *",  # Go's Atoi takes the sign; we refuse it
    "@every 1h",  # names no time of day
    "@Daily",
    "TZ=Europe/Berlin 0 8 * * *",
    "",
]


@pytest.mark.parametrize("text", VALID)
def test_what_kubernetes_reads_parses_and_matches_the_pattern(text):
    assert re.search(cron.PATTERN, text)
    assert cron.syntax_error(text) is None
    cron.parse(text)


@pytest.mark.parametrize("text", INVALID)
def test_the_pattern_and_the_parser_refuse_alike(text):
    assert not re.search(cron.PATTERN, text)
    with pytest.raises(cron.CronError):
        cron.parse(text)
    assert cron.syntax_error(text)


def test_the_pattern_is_anchored_and_bounded():
    assert cron.syntax_error("0 8 * * *" + " " * cron.MAX_LENGTH)


@pytest.mark.parametrize(
    ("text", "field", "body"),
    [
        ("0 22-6 * * *", "hour", "22-6"),
        ("0 8 * * fri-mon", "day of week", "fri-mon"),
        ("0 8 * dec-JAN/2 *", "month", "dec-JAN"),
    ],
)
def test_a_range_that_starts_after_it_ends(text, field, body):
    # the pattern accepts it; the rule (and the parser) refuse it with one message
    assert re.search(cron.PATTERN, text)
    assert cron.reversed_range(text) == (field, body)
    with pytest.raises(cron.CronError, match="starts after it ends"):
        cron.parse(text)


def test_ranges_in_order_are_fine():
    assert cron.reversed_range("0 6-22 * * mon-fri") is None
    assert cron.reversed_range("@daily") is None


class TestTimes:
    def test_weekdays_at_eight(self):
        schedule = cron.parse("0 8 * * 1-5")
        week = [MONDAY + dt.timedelta(days=i) for i in range(7)]
        assert [schedule.times_on(d) for d in week] == [[480]] * 5 + [[], []]

    def test_steps_and_lists(self):
        assert cron.parse("*/20 9,17 * * *").times_on(MONDAY) == [540, 560, 580, 1020, 1040, 1060]
        # N/step runs from N to the end of the field
        assert cron.parse("50/5 23 * * *").times_on(MONDAY) == [23 * 60 + 50, 23 * 60 + 55]

    def test_both_day_fields_restricted_means_either(self):
        # Vixie cron's rule, which robfig keeps: the 1st of the month or a Sunday
        either = cron.parse("0 0 1 * 0")
        assert either.day_matches(dt.date(2024, 1, 1))  # a Monday, the 1st
        assert either.day_matches(dt.date(2024, 1, 7))  # a Sunday
        assert not either.day_matches(dt.date(2024, 1, 8))
        # with one of them a star, both must match
        assert not cron.parse("0 0 * * 0").day_matches(dt.date(2024, 1, 1))
        assert not cron.parse("0 0 1 * *").day_matches(dt.date(2024, 1, 7))

    def test_a_star_with_a_step_is_a_restriction(self):
        # robfig drops the star bit for */2, so the day-of-month field is restricted
        every_other = cron.parse("0 0 */2 * 1")
        assert every_other.day_matches(dt.date(2024, 1, 3))  # odd day, a Wednesday
        assert every_other.day_matches(dt.date(2024, 1, 8))  # even day, a Monday

    def test_descriptors(self):
        assert cron.parse("@daily").times_on(MONDAY) == [0]
        assert cron.parse("@hourly").times_on(MONDAY) == [60 * h for h in range(24)]
        assert cron.parse("@weekly").times_on(MONDAY) == []
        assert cron.parse("@weekly").times_on(MONDAY - dt.timedelta(days=1)) == [0]


def test_the_guard_reads_the_same_names():
    tables = cron.guard_tables()["fields"]
    assert [f["name"] for f in tables] == [f.name for f in cron.FIELDS]
    assert tables[4]["names"]["sun"] == 0 and tables[3]["names"]["dec"] == 12
