"""README.md's list of the guide names every page of the guide's navigation."""

from __future__ import annotations

import os
import re

from conftest import ROOT

NAV_PAGE = re.compile(r"^\s*- [^:#]+: (\S+\.md)\s*$")


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav lists (commented-out entries left out)."""
    with open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8") as f:
        return [m.group(1) for m in map(NAV_PAGE.match, f) if m]


def test_readme_links_every_page_of_the_guide():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    pages = nav_pages()
    assert "steps.md" in pages and len(pages) > 10
    missing = [p for p in pages if "(docs/%s)" % p not in readme]
    assert missing == []
