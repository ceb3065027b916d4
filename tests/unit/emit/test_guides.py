"""The guides hold together: every relative link in the repository's Markdown lands (on a file
that exists and, with a #fragment, on a heading it has), the README stays a user's guide that
links every doc, and `render` finds each generated block in exactly one guide."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gpu_platform import checkout
from gpu_platform.cli import readme
from gpu_platform.errors import GpuPlatformError
from support.repo import REPO, tracked

# Markdown the project vendors from upstream, not its own.
VENDORED = ("generator/gpu_platform/upstream/", "charts/gpu-platform/charts/")
README_MOST_LINES = 350  # issue 26: the README is the user's guide; the rest lives in docs/

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^#{1,6} (.+?)\s*$")
_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)\)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_HTML_ANCHOR = re.compile(r"<a (?:id|name)=\"([^\"]+)\"")


def markdown_files() -> list[str]:
    return [rel for rel in tracked() if rel.endswith(".md") and not rel.startswith(VENDORED)]


def prose(text: str) -> str:
    """``text`` without fenced code blocks and code spans, where brackets are not links."""
    kept, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        kept.append("" if fenced else line)
    return _CODE_SPAN.sub("", "\n".join(kept))


def slug(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := _HEADING.match(line)):
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            out.add(base if count == 0 else f"{base}-{count}")
        elif not fenced:
            out.update(_HTML_ANCHOR.findall(line))
    return out


def broken_links(path: Path, rel: str) -> list[str]:
    problems = []
    for target in _LINK.findall(prose(path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        name, _, fragment = target.partition("#")
        dest = (path.parent / name).resolve() if name else path
        if not dest.exists():
            problems.append(f"{rel}: {target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            problems.append(f"{rel}: {target}: no heading #{fragment} there")
    return problems


def test_every_relative_link_lands():
    files = markdown_files()
    assert "README.md" in files and "docs/guarantees.md" in files
    problems = [problem for rel in files for problem in broken_links(REPO / rel, rel)]
    assert problems == []


def test_the_link_check_sees_a_broken_link_and_a_missing_heading(tmp_path):
    guide = tmp_path / "guide.md"
    guide.write_text(
        "# Title\n\n[ok](#title) [gone](missing.md) [no heading](#nowhere)\n"
        "`[code](nowhere.md)`\n\n```\n[fenced](nowhere.md)\n```\n"
    )
    assert broken_links(guide, "guide.md") == [
        "guide.md: missing.md: no such file",
        "guide.md: #nowhere: no heading #nowhere there",
    ]


def test_slugs_follow_github():
    assert slug("The API server's addresses") == "the-api-servers-addresses"
    assert slug("What `template` costs over Helm") == "what-template-costs-over-helm"
    assert slug("Flow 2: a site chart (`render --out`)") == "flow-2-a-site-chart-render---out"


def test_the_readme_is_a_users_guide_that_links_every_doc():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MOST_LINES
    linked = set(_LINK.findall(prose(text)))
    for path in checkout.guides(REPO)[1:]:
        assert f"docs/{path.name}" in linked, f"README's More section does not link {path.name}"


def test_the_guides_are_the_readme_and_docs():
    guides = checkout.guides(REPO)
    assert guides[0] == REPO / "README.md"
    assert {p.parent for p in guides[1:]} == {REPO / "docs"}


def _guides(tmp_path: Path, **texts: str) -> list[Path]:
    (tmp_path / "docs").mkdir()
    paths = []
    for name, text in texts.items():
        path = tmp_path / ("README.md" if name == "README" else f"docs/{name}.md")
        path.write_text(text)
        paths.append(path)
    return paths


def _markers(*names: str) -> str:
    return "".join(f"<!-- generated: {n} -->\nOLD TEXT\n<!-- /generated: {n} -->\n" for n in names)


def test_render_fills_each_block_where_it_stands(tmp_path):
    names = list(readme.BLOCKS)
    readme_file, doc = _guides(tmp_path, README=_markers(*names[:3]), a=_markers(*names[3:]))
    out = readme.rewrite_guides([readme_file, doc], tmp_path)
    assert "OLD TEXT" not in out[readme_file] + out[doc]
    assert readme.block_text(out[doc], names[3]) == readme.BLOCKS[names[3]]()


@pytest.mark.parametrize(
    ("texts", "error"),
    [
        ({"a": "nothing generated here\n"}, "no <!-- generated: "),
        ({"a": _markers("cli"), "b": _markers("cli")}, "stands in docs/a.md and docs/b.md"),
        ({"a": _markers("cli", "cli")}, "docs/a.md: <!-- generated: cli --> stands 2 times"),
        ({"a": "<!-- generated: clii -->\n<!-- /generated: clii -->\n"}, "names no block"),
        ({"a": "<!-- generated: cli -->\nopen\n"}, "has no <!-- /generated: cli -->"),
    ],
    ids=["missing", "in-two-guides", "twice-in-one", "unknown-name", "unclosed"],
)
def test_render_refuses_a_block_missing_doubled_unknown_or_open(tmp_path, texts, error):
    paths = _guides(tmp_path, **texts)
    with pytest.raises(GpuPlatformError, match=re.escape(error)):
        readme.rewrite_guides(paths, tmp_path)


def test_every_test_path_a_tracked_file_names_exists():
    """A test file named in the guides, CONTRIBUTING or the code (``tests/....py``) is where
    the text says: moving or folding a test updates what names it."""
    pattern = re.compile(r"\btests/[A-Za-z0-9_/]+\.py\b")
    missing = []
    for rel in tracked():
        path = REPO / rel
        if path.suffix not in {".md", ".py", ".yaml", ".toml", ".txt"} and path.name != "Makefile":
            continue
        if rel.startswith(("charts/gpu-platform/charts/", "generator/gpu_platform/upstream/")):
            continue
        for name in pattern.findall(path.read_text(encoding="utf-8", errors="replace")):
            if not (REPO / name).is_file():
                missing.append(f"{rel}: {name}")
    assert not missing, "\n".join(missing)


def test_the_readme_values_section_names_every_subchart_and_profile():
    """The README's Values section lists the subcharts' blocks and the profiles in values/ in
    prose; a subchart or a profile added, renamed or removed must show there."""
    from gpu_platform.pipeline import registry
    from support import docs

    text = docs.section("Values")
    blocks = set(re.findall(r"`([a-z][a-z-]*):`", text)) - {"platform"}
    assert blocks == set(registry.NAMES), "the subcharts' blocks named in the README's Values"
    named = set(re.findall(r"`([a-z0-9-]+\.yaml)`", text))
    profiles = {path.name for path in (REPO / "values").glob("*.yaml")}
    assert named == profiles, "the profiles in values/ named in the README's Values"
