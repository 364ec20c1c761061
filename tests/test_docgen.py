"""docs/reference.md is what tfprof_shell.docgen makes from the tables, so the page cannot drift."""

from __future__ import annotations

import os

from conftest import ROOT
from tfprof_shell import docgen
from tfprof_shell.commands import COMMANDS
from tfprof_shell.metrics import ATTRIBUTES
from tfprof_shell.options import OPTION_SPECS


def test_the_committed_page_is_what_the_tables_give() -> None:
    with open(os.path.join(ROOT, docgen.PAGE), encoding="utf-8") as f:
        committed = f.read()
    assert committed == docgen.reference_page(), (
        "docs/reference.md is stale: run python -m tfprof_shell.docgen")


def test_the_page_names_every_command_option_flag_and_attribute() -> None:
    page = docgen.reference_page()
    for name in COMMANDS:
        assert "| `%s`" % name in page, name
    for spec in OPTION_SPECS.values():
        assert "| `%s`" % spec.repl_name in page, spec.name
        if spec.is_flag:
            assert "| `%s`=" % spec.cli_name in page, spec.name
    for name in ATTRIBUTES:
        assert "| `%s` |" % name in page, name
    assert "| `--profile_path`=" in page and "| `--dask_scheduler`=" in page


def test_check_mode_reports_a_stale_page(tmp_path) -> None:
    page = tmp_path / "reference.md"
    assert docgen.main([str(page)]) == 0
    assert docgen.main(["--check", str(page)]) == 0
    page.write_text(page.read_text().replace("-max_depth", "-max_deep", 1))
    assert docgen.main(["--check", str(page)]) == 1
