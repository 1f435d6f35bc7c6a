"""README.md as the package index shows it (it is the project's description on PyPI, where a
relative link leads nowhere): every link is absolute, and each one into this repository names a
file that exists and, with a #fragment, a heading of that file. Its install lines name the
repository pyproject.toml names."""

from __future__ import annotations

import re
import tomllib
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
REPOSITORY = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
LINK = re.compile(r"\]\(([^)\s]+)\)|\b(?:href|src)=\"([^\"]+)\"")


def _links(text: str) -> list[str]:
    return [a or b for a, b in LINK.findall(text)]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.

    >>> slug("Which devices.db a command reads")
    'which-devicesdb-a-command-reads'
    >>> slug("The 4 KiB sweep: region, search and step windows")
    'the-4-kib-sweep-region-search-and-step-windows'
    """
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip()).lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def _anchors(markdown: str) -> set[str]:
    return {slug(m) for m in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", markdown, re.M)}


def test_every_link_in_readme_is_absolute():
    links = _links(README)
    assert len(links) > 20
    relative = [link for link in links if not re.match(r"(https?|mailto):", link)]
    assert relative == [], f"relative links break on the package index page: {relative}"


def test_every_link_into_the_repository_names_a_file_and_a_heading_that_exist():
    missing = []
    for link in _links(README):
        if not link.startswith(REPOSITORY):
            continue
        rest = link[len(REPOSITORY) :]
        path, _, fragment = rest.partition("#")
        path = path.removeprefix("/blob/main/").removeprefix("/tree/main/").strip("/")
        target = ROOT / path if path else ROOT / "README.md"
        if not target.exists():
            missing.append(link)
        elif fragment and target.suffix == ".md" and fragment not in _anchors(target.read_text()):
            missing.append(link)
    assert missing == [], missing


def test_the_check_finds_a_relative_link_and_a_missing_heading():
    assert _links('see [x](docs/x.md) and <img src="a.png">') == ["docs/x.md", "a.png"]
    assert "installing" in _anchors(README) and "no-such-heading" not in _anchors(README)


def test_the_install_lines_name_the_repository_and_a_wheel_built_in_a_checkout():
    blocks = "\n".join(re.findall(r"```sh\n(.*?)```", README, re.S))
    installs = re.findall(r"pipx install (\S+)", blocks)
    assert f"git+{REPOSITORY}" in installs, installs
    assert "dist/diskq_ceph-*.whl" in installs and "pipx run build --wheel" in blocks
    # the name on the package index works once a release is published: never offered before that
    assert "diskq-ceph" not in installs
