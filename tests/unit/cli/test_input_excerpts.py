"""Any file can be named where the tool expects one of its own (`simulate --workload
/etc/passwd`); a message about it quotes at most the offending token, never a line of it.

Each command that reads a file gets files that are not its kind: a password file, a shadow
file (every line ends in ':', so YAML reads each as a key), an env file, a private key, a
kubeconfig whose keys a workload file also has. No line of any of them may reach the output.
"""

from __future__ import annotations

import pytest
from gpu_platform import excerpt
from gpu_platform.cli import main
from support.repo import REPO

KIND = str(REPO / "values" / "kind.yaml")
SECRET = "Zm9vYmFyLXNlY3JldC10b2tlbi12YWx1ZQ"

FILES = {
    "passwd": "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
    "alice:x:1000:1000:Alice Example,,,:/home/alice:/bin/bash\n",
    "shadow": f"root:$y$j9T${SECRET}$abcdefghijklmnopq:19000:0:99999:7:::\n"
    "alice:$6$saltsalt$0123456789abcdefABCDEF:19000:0:99999:7:::\n",
    "env": f"API_TOKEN={SECRET}\nDB_PASSWORD=correct-horse-battery-staple\n",
    "key": "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    f"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ{SECRET}\n"
    "-----END OPENSSH PRIVATE KEY-----\n",
    # A workload file has `users` and `name`: the model meets known keys holding a secret.
    "kubeconfig": "apiVersion: v1\nkind: Config\nname: prod-admin-context\n"
    f"users:\n  - name: admin\n    user: {{token: {SECRET}}}\n",
}


def _lines(text: str) -> list[str]:
    """The lines a leak would show (short ones, like `users:`, are the tool's words too)."""
    return [line.strip() for line in text.splitlines() if len(line.strip()) >= 12]


def _commands(path: str, tenant: str) -> list[list[str]]:
    return [
        ["validate", "-f", path],
        ["values", "-f", path],
        ["render", "--check", "-f", path],
        ["nodepool", "--cloud", "gke", "-f", path],
        ["template", "-f", path],
        ["template", "--set-file", f"platform.monitoring.scrapeInterval={path}"],
        ["diff", "--from-values", path, "-f", KIND],
        ["lint", path],
        ["lint", "--crd", path, KIND],
        ["simulate", "--workload", path],
        ["simulate", "--settings", path],
        ["simulate", "--compare", path, KIND],
        ["values", "-f", tenant, "--discover-from", path],
    ]


@pytest.mark.parametrize("kind", sorted(FILES))
def test_no_line_of_a_foreign_file_reaches_a_message(kind, tmp_path, capsys):
    path = tmp_path / kind
    path.write_text(FILES[kind])
    tenant = tmp_path / "tenant.yaml"  # a tenant without API server addresses to discover
    tenant.write_text("platform:\n  tenants:\n    - name: team-a\n")
    for argv in _commands(str(path), str(tenant)):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code in (1, 2), (argv, out, err)
        assert "Traceback" not in err
        leaked = [line for line in _lines(FILES[kind]) if line in out + err]
        assert leaked == [], (argv, err)
        assert SECRET not in out + err, (argv, err)


def test_the_reported_case_names_the_file_and_its_shape(tmp_path, capsys):
    path = tmp_path / "passwd"
    path.write_text(FILES["passwd"])
    assert main(["simulate", "--workload", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"{path}:1:1: (top level): a workload file must be a mapping of keys, got text of "
        f"{len(' '.join(FILES['passwd'].split(chr(10))).strip())} characters and no `key: "
        "value` line (is it the workload file you meant?)\n"
    ), err


def test_a_shadow_line_is_cut_to_its_first_name(tmp_path, capsys):
    path = tmp_path / "shadow"
    path.write_text(FILES["shadow"])
    assert main(["validate", "-f", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[1] for line in lines] == ['["root..."]', '["alice..."]']


class TestTokens:
    """The rule itself, one case per clause of excerpt's docstring."""

    def test_one_short_line_a_number_or_a_boolean_is_quoted_whole(self):
        assert excerpt.token("500 ms") == "'500 ms'"
        assert [excerpt.token(v) for v in (3, 2.5, True, None)] == ["3", "2.5", "True", "None"]

    def test_longer_text_keeps_its_first_characters_and_says_how_long(self):
        assert excerpt.token("x" * 41) == f"'{'x' * excerpt.CUT}...' (41 characters)"

    def test_text_of_several_lines_shows_only_its_leading_name(self):
        assert excerpt.token("nvidia-t4\ntouch pwned") == (
            "text of 2 lines (21 characters) starting 'nvidia-t4'"
        )
        assert excerpt.token("root:x:0:0\nbin:x") == (
            "text of 2 lines (16 characters) starting 'root'"
        )

    def test_lists_and_mappings_are_described_not_quoted(self):
        assert excerpt.token([{"token": SECRET}]) == "a list of 1 item"
        assert excerpt.token({}) == "an empty mapping"

    def test_keys_that_look_like_keys_are_whole_others_cut(self):
        for whole in ("platform", "nvidia.com/gpu", "app.kubernetes.io/name", "<<", "tëam"):
            assert excerpt.key(whole) == whole
        assert excerpt.key("root:x:0:0:root") == "root..."
        assert excerpt.key("a" * 64) == "a" * excerpt.CUT + "..."
