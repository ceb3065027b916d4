"""``--set``, ``--set-string`` and ``--set-file`` as a values layer, without helm.

Expected trees are written from Helm's documented --set rules (the render tests compare the
same inputs with real ``helm template`` output); every problem must name the flag and path.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gpu_platform.cli import main
from gpu_platform.errors import UsageError, ValuesInvalid
from gpu_platform.pipeline.load import LoadedValues, Origins, load_values
from gpu_platform.pipeline.setvalues import SetArg, apply, ordered, typed


def applied(*args: SetArg, base: dict | None = None, tmp: Path | None = None) -> dict:
    loaded = LoadedValues(base if base is not None else {}, Origins(), [])
    apply(loaded, args, base=tmp)
    return loaded.data


def s(text: str) -> SetArg:
    return SetArg("--set", text)


class TestTyping:
    @pytest.mark.parametrize(
        ("text", "value"),
        [
            ("true", True),
            ("TRUE", True),
            ("False", False),
            ("null", None),
            ("NULL", None),
            ("0", 0),
            ("12", 12),
            ("-5", -5),
            ("+7", 7),
            ("9223372036854775807", 2**63 - 1),
            ("9223372036854775808", "9223372036854775808"),
            ("0012", "0012"),
            ("1.5", "1.5"),
            ("1e3", "1e3"),
            ("0x10", "0x10"),
            ("", ""),
            ("yes", "yes"),
            ("1_000", "1_000"),
        ],
    )
    def test_like_helm(self, text, value):
        got = typed(text)
        assert got == value and type(got) is type(value)


class TestGrammar:
    def test_nested_keys_lists_and_escapes(self):
        data = applied(
            s(
                r"a.b.c=1,list={x,y\,z},idx[2]=q,n[0].o=1,n[1][1]=2,dot\.key=v,"
                "empty="
            )
        )
        assert data == {
            "a": {"b": {"c": 1}},
            "list": ["x", "y,z"],
            "idx": [None, None, "q"],
            "n": [{"o": 1}, [None, 2]],
            "dot.key": "v",
            "empty": "",
        }

    def test_values_are_typed_only_by_set(self, tmp_path):
        (tmp_path / "cert.pem").write_text("-----BEGIN-----\n5\n")
        data = applied(*ordered(["x=5,y=true"], ["x2=5,y2=true"], ["file=cert.pem"]), tmp=tmp_path)
        assert data == {"x": 5, "y": True, "x2": "5", "y2": "true", "file": "-----BEGIN-----\n5\n"}

    def test_files_first_then_set_then_set_string_then_set_file(self, tmp_path):
        (tmp_path / "v.txt").write_text("from-file")
        # Given in the opposite order on purpose: Helm applies them by kind.
        args = [
            SetArg("--set-file", "k=v.txt"),
            SetArg("--set-string", "k=string"),
            SetArg("--set", "k=1"),
        ]
        assert applied(*args, tmp=tmp_path) == {"k": "from-file"}
        assert applied(*args[1:], tmp=tmp_path) == {"k": "string"}

    def test_items_are_set_inside_the_lists_the_files_gave(self):
        base = {"pools": [{"name": "a", "max": 1}, {"name": "b", "max": 2}], "m": {"k": 1}}
        data = applied(s("pools[1].max=5,m.j=2"), base=base)
        assert data == {
            "pools": [{"name": "a", "max": 1}, {"name": "b", "max": 5}],
            "m": {"k": 1, "j": 2},
        }

    def test_a_whole_list_replaces(self):
        assert applied(s("pools={}"), base={"pools": [1, 2]}) == {"pools": [""]}

    def test_null_is_kept_to_delete_a_default(self):
        assert applied(s("a.b=null")) == {"a": {"b": None}}

    def test_a_list_then_another_assignment_without_comma(self):
        assert applied(s("a={1}b=2")) == {"a": [1], "b": 2}

    def test_empty_names_are_ignored(self):
        assert applied(s("=5,.q=1")) == {}

    def test_later_flags_override_earlier(self):
        assert applied(s("a=1"), s("a=2,b=3")) == {"a": 2, "b": 3}


class TestProblems:
    @pytest.mark.parametrize(
        ("arg", "where", "path", "fragment"),
        [
            ("a", "--set a", "a", "`a` has no value"),
            ("x=1,a,b=1", "--set a,b=1", "a", "has no value before the comma"),
            ("a.=1", "--set a.=1", "a", "names no key after the dot"),
            ("a[x]=1", "--set a[x]=1", "a", "not a whole number"),
            ("a[-1]=1", "--set a[-1]=1", "a[-1]", "negative"),
            ("a[0]x=1", "--set a[0]x=1", "a[0]", "unexpected `x`"),
            ("a={1,2", "--set a={1,2", "a", "must end with `}`"),
            ("a[70000]=1", "--set a[70000]=1", "a", "65536"),
            (
                ".".join("abcdefghijklmnopqrstuvwxyzabcdef") + "=1",
                "--set a.b",
                "a.b.c",
                "more than 30 deep",
            ),
        ],
    )
    def test_each_problem_is_located_at_its_assignment(self, arg, where, path, fragment):
        with pytest.raises(ValuesInvalid) as exc:
            applied(s(arg))
        (problem,) = exc.value.problems
        assert str(problem.location).startswith(where), problem.render()
        assert problem.path.startswith(path) and fragment in problem.message, problem.render()

    def test_setting_inside_a_scalar_names_the_file_that_set_it(self, write_values):
        loaded = load_values([write_values("platform:\n  monitoring: 5\n")])
        with pytest.raises(ValuesInvalid) as exc:
            apply(loaded, [s("platform.monitoring.scrapeInterval=2s")])
        text = str(exc.value)
        assert text.startswith(
            "--set platform.monitoring.scrapeInterval=2s: "
            "platform.monitoring: it holds a number (set at "
        )
        assert "site.yaml:2:3" in text and "not a map" in text

    def test_set_file_problems(self, tmp_path):
        with pytest.raises(ValuesInvalid) as exc:
            applied(SetArg("--set-file", "k=https://example.org/x"), tmp=tmp_path)
        (problem,) = exc.value.problems
        assert str(problem.location) == "--set-file k=https://example.org/x"
        assert problem.path == "k" and "not a local file" in problem.message
        # a file that cannot be read is a usage error naming the flag and the file
        (tmp_path / "bin").write_bytes(b"\xff\xfe")
        for arg, message in (
            ("k=missing.txt", f"{tmp_path / 'missing.txt'}: no such file"),
            (
                "k=bin",
                f"{tmp_path / 'bin'}: not UTF-8 text (invalid start byte at byte 0); "
                "save it as UTF-8",
            ),
        ):
            with pytest.raises(UsageError) as usage:
                applied(SetArg("--set-file", arg), tmp=tmp_path)
            assert str(usage.value) == f"--set-file {arg}: {message}"


class TestChecksSeeTheFlag:
    """The merged values go through the model: a bad --set is reported like a bad file line."""

    def test_model_problem_points_at_the_flag(self, capsys):
        code = main(
            [
                "template",
                "--set",
                "platform.monitoring.scrapeInterval=fast",
                "--dependencies",
                "standins",
            ]
        )
        err = capsys.readouterr().err
        assert code == 1
        assert (
            "--set platform.monitoring.scrapeInterval=fast: "
            "platform.monitoring.scrapeInterval: expected a duration"
        ) in err
        assert "$> helm" not in err and "Traceback" not in err

    def test_the_assignment_of_a_several_assignment_flag(self, capsys):
        code = main(
            [
                "template",
                "--set",
                "platform.monitoring.scrapeInterval=2s,platform.prepuller.enabled=maybe",
            ]
        )
        err = capsys.readouterr().err
        assert code == 1
        assert err.startswith(
            "--set platform.prepuller.enabled=maybe: platform.prepuller.enabled:"
        ), err

    def test_set_string_keeps_a_number_a_string_and_the_model_says_so(self, capsys):
        code = main(
            [
                "template",
                "--set-string",
                "platform.nodePools[0].name=gpu,platform.nodePools[0].gpusPerNode=2",
            ]
        )
        err = capsys.readouterr().err
        assert code == 1
        assert (
            "--set-string platform.nodePools[0].name=gpu,platform.nodePools[0]."
            "gpusPerNode=2: platform.nodePools[0].gpusPerNode:" not in err
        )
        assert (
            "--set-string platform.nodePools[0].gpusPerNode=2: "
            "platform.nodePools[0].gpusPerNode: expected a whole number" in err
        )


@pytest.mark.parametrize("flag", ["--set", "--set-string", "--set-file"])
def test_an_argument_that_is_not_utf8_is_a_usage_error(flag):
    """Bytes that are not UTF-8 reach Python as lone surrogates (os.fsdecode): refused at the
    flag, before anything is written for Helm (template used to fail writing the values)."""
    text = "a=b" + bytes([0xFF]).decode("utf-8", "surrogateescape")
    with pytest.raises(UsageError, match=rf"^{flag} a=b\\xff: not UTF-8 text \(byte 0xff\)"):
        apply(LoadedValues({}, Origins(), []), [SetArg(flag, text)])


def test_template_refuses_a_set_value_that_is_not_utf8(tmp_path, capsys):
    value = "x" + bytes([0xFF]).decode("utf-8", "surrogateescape")
    code = main(["template", "--set", f"kube-prometheus-stack.fullnameOverride={value}"])
    assert code == 2
    assert "not UTF-8 text (byte 0xff)" in capsys.readouterr().err
