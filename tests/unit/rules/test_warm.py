"""Warm capacity on a schedule (platform.placeholderScaler): the time zone its CronJobs are read
in is one Kubernetes knows, refused where it is written with the nearest name, and the list it
is checked against is the pinned tz database's.

Both install paths in the same words: tests/render/components/test_placeholder_schedule.py.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

import pytest
from gpu_platform.pipeline import timezones
from gpu_platform.pipeline.run import check_files
from packaging.requirements import Requirement
from support.inprocess import cli
from support.repo import REPO
from support.values import problems

WHY = (
    "Kubernetes refuses a CronJob whose spec.timeZone is not in the IANA time zone database "
    "(UTC, or Area/Location such as Europe/Berlin)"
)


class TestTheList:
    def test_it_holds_the_zones_people_schedule_in(self):
        names = timezones.names()
        for zone in ("UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Etc/GMT+5"):
            assert timezones.known(zone), zone
        # links the database keeps for old names load in Go too
        assert timezones.known("Asia/Calcutta") and timezones.known("US/Pacific")
        assert list(names) == sorted(set(names))
        assert 500 < len(names) < 700

    def test_it_holds_only_what_the_schema_pattern_lets_through(self):
        """The one-word legacy names (EST, GMT, Zulu) and Local fail the pattern first."""
        assert all(re.fullmatch(timezones.PATTERN, z) for z in timezones.names())
        for zone in ("EST", "GMT", "Zulu", "Local", "localtime", "posixrules", "Factory"):
            assert not timezones.known(zone), zone

    def test_names_are_matched_exactly(self):
        assert not timezones.known("europe/berlin") and not timezones.known("Europe/Berlin ")

    def test_the_guards_grouped_form_reads_back_as_the_list(self):
        """Decoded as templates/validate.yaml decodes it: groups split at the last '/'."""
        decoded = []
        for group in timezones.grouped().split(" "):
            area, _, places = group.rpartition("/")
            decoded += [f"{area}/{p}" if area else p for p in places.split(",")]
        assert sorted(decoded) == list(timezones.names())
        assert "America/Argentina/Buenos_Aires,Catamarca," in timezones.grouped()

    def test_it_is_the_pinned_tzdata_release(self):
        """The list comes from the tzdata package pyproject.toml pins exactly; an environment
        with another release would render another guard (render --check drifts), so say so
        here first."""
        project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
        (pin,) = [
            Requirement(d) for d in project["dependencies"] if Requirement(d).name == "tzdata"
        ]
        (spec,) = pin.specifier
        assert spec.operator == "=="
        assert metadata.version("tzdata") == spec.version


class TestClosest:
    @pytest.mark.parametrize(
        ("typed", "meant"),
        [
            ("Europe/Berln", "Europe/Berlin"),
            ("europe/berlin", "Europe/Berlin"),
            ("Eurpoe/Berlin", "Europe/Berlin"),
            ("America/New York", "America/New_York"),
            ("America/Los_Angles", "America/Los_Angeles"),
            ("Australia/Sidny", "Australia/Sydney"),
            ("Europe/Zuerich", "Europe/Zurich"),
        ],
    )
    def test_a_misspelling_finds_the_zone_meant(self, typed, meant):
        assert timezones.closest(typed) == meant

    def test_a_tie_goes_to_the_first_name_in_byte_order(self):
        # Knox and Winamac share as much of "America/Indiana"; the list's order does not count
        assert timezones.closest("America/Indiana") == "America/Indiana/Knox"

    def test_nothing_near_enough_gives_no_guess(self):
        assert timezones.closest("Mars/Olympus_Mons") is None
        assert timezones.closest("Xq/Zv") is None


class TestValidate:
    def test_an_unknown_zone_is_refused_where_it_is_written(self, write_values):
        text = "platform:\n  placeholderScaler:\n    timeZone: Europe/Berln\n"
        assert problems(write_values, text) == [
            'F:3:5: platform.placeholderScaler.timeZone: unknown time zone "Europe/Berln": '
            f'{WHY}; did you mean "Europe/Berlin"?'
        ]

    def test_without_a_near_name_the_message_makes_no_guess(self, write_values):
        text = "platform:\n  placeholderScaler: {timeZone: Mars/Olympus_Mons}\n"
        assert problems(write_values, text) == [
            "F:2:23: platform.placeholderScaler.timeZone: unknown time zone "
            f'"Mars/Olympus_Mons": {WHY}'
        ]

    def test_a_known_zone_and_the_default_pass(self, write_values):
        check_files([write_values("platform:\n  placeholderScaler: {timeZone: Asia/Tokyo}\n")])
        check_files([write_values("platform: {}\n")])

    def test_simulate_reads_the_values_through_the_same_checks(self, write_values):
        path = write_values("platform:\n  placeholderScaler: {timeZone: Europe/Berln}\n")
        code, out, err = cli("simulate", "-f", path)
        assert (code, out) == (1, "")
        assert 'platform.placeholderScaler.timeZone: unknown time zone "Europe/Berln"' in err
