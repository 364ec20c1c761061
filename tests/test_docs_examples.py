"""Every ```console example in README.md, CONTRIBUTING.md and docs/ runs, and prints what the page shows.

A console block holds one or more examples. An example is a line ``$ tfprof ARGS``
(a trailing backslash continues it on the next line) and the lines after it, up to the
next ``$`` line or the end of the block, which are its expected output. ARGS are split
like a POSIX shell would (quotes, backslashes), and the command runs in-process with the
repository's ``sample_profiles/`` and ``tests/`` visible from the working directory (a
temporary one, so files an example writes land there). Expected and actual output are
compared line by line with trailing spaces dropped and leading and trailing blank lines
ignored; a line holding only ``...`` stands for any run of lines (none included).
Output is stderr and stdout as one stream, in the order they were written.

A shell session is the same with no command after the flags, followed by lines that
start with the prompt ``tfprof> `` (or ``tfprof[NAME]> ``): those lines are the input,
fed to the shell as a script, and every other line is expected output.

Blocks of any other kind (```text, ```sh, ```python) are never run: that is where
machine-dependent output (timings) and examples needing TensorFlow, PyTorch, JAX or a
server belong. CONTRIBUTING.md states these rules for writers.
"""

from __future__ import annotations

import glob
import io
import os
import re
import shlex
from dataclasses import dataclass

import pytest

from conftest import ROOT

#: Files whose console blocks run, relative to the repository root.
PAGES = sorted({"README.md", "CONTRIBUTING.md"}
               | {os.path.relpath(p, ROOT)
                  for p in glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True)})
#: Entries of the repository the examples may name, linked into their working directory.
VISIBLE = ("sample_profiles", "tests")
PROMPT = re.compile(r"^tfprof(\[[^\]]*\])?> ?")
ELLIPSIS = "..."


@dataclass
class Example:
    page: str
    line: int  # 1-based line of the `$` line in the page
    argv: list[str]
    script: list[str]  # shell input lines; empty for a one-shot command
    expected: list[str]

    @property
    def id(self) -> str:
        return "%s:%d" % (self.page, self.line)


class PageError(ValueError):
    """A console block this test cannot run (the message says where and why)."""


def console_blocks(text: str) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of each ```console block of a Markdown text."""
    blocks, current, start = [], None, 0
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if current is None:
            if stripped.startswith("```"):
                fence = stripped[3:].strip()
                current = [] if fence == "console" else False
                start = number + 1
        elif stripped.startswith("```"):
            if current is not False:
                blocks.append((start, current))
            current = None
        elif current is not False:
            current.append(line)
    if current:
        raise PageError("line %d: unclosed ```console block" % (start - 1))
    return blocks


def parse_examples(page: str, text: str) -> list[Example]:
    """The examples of every console block of a page."""
    examples: list[Example] = []
    for start, lines in console_blocks(text):
        i = 0
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            if not line.startswith("$ "):
                raise PageError("%s:%d: a console block must start with '$ tfprof ...'; "
                                "use a ```text block for output that is not run"
                                % (page, start + i))
            first = start + i
            command = line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            i += 1
            words = shlex.split(command)
            if not words or words[0] != "tfprof":
                raise PageError("%s:%d: only 'tfprof' commands run in console blocks, got %r; "
                                "use a ```sh or ```text block" % (page, first, command))
            body = []
            while i < len(lines) and not lines[i].startswith("$ "):
                body.append(lines[i])
                i += 1
            script = [PROMPT.sub("", b) for b in body if PROMPT.match(b)]
            expected = [b for b in body if not PROMPT.match(b)]
            examples.append(Example(page, first, words[1:], script, expected))
    return examples


def _trim(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def output_matches(expected: list[str], actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows, ``...`` lines eliding any run of lines."""
    want, got = _trim(expected), _trim(actual.split("\n"))
    pattern = "".join(r"(?:[^\n]*\n)*?" if line.strip() == ELLIPSIS else re.escape(line) + r"\n"
                      for line in want)
    return re.fullmatch(pattern, "".join(line + "\n" for line in got)) is not None


def run_example(example: Example, workdir: str) -> tuple[int, str]:
    """Run the example's command in ``workdir``: (exit status, stderr and stdout as one)."""
    from tfprof_shell.cli import main

    stream = io.StringIO()
    stdin = io.StringIO("".join(line + "\n" for line in example.script))
    old = os.getcwd()
    os.chdir(workdir)
    try:
        code = main(example.argv, stdin=stdin, stdout=stream, stderr=stream)
    finally:
        os.chdir(old)
    return code, stream.getvalue()


def _collect() -> list[Example]:
    examples = []
    for page in PAGES:
        path = os.path.join(ROOT, page)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                examples += parse_examples(page, f.read())
    return examples


EXAMPLES = _collect()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> str:
    """A working directory where the repository's samples are visible and writes go nowhere."""
    path = tmp_path_factory.mktemp("docs_examples")
    for name in VISIBLE:
        os.symlink(os.path.join(ROOT, name), str(path / name))
    return str(path)


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_example_prints_what_the_page_shows(example: Example, workdir: str) -> None:
    _, actual = run_example(example, workdir)
    assert output_matches(example.expected, actual), (
        "%s: 'tfprof %s' printed:\n%s\nthe page shows:\n%s"
        % (example.id, " ".join(example.argv), actual, "\n".join(example.expected)))


def test_the_guide_has_examples_to_run() -> None:
    pages = {e.page for e in EXAMPLES}
    assert "README.md" in pages and len(pages) >= 5, pages
    assert len(EXAMPLES) >= 30, len(EXAMPLES)


# ---- the rules themselves ----------------------------------------------------------------

PAGE = """\
Some text.

```console
$ tfprof --profile_path=sample_profiles/tiny_mlp/profile op -select micros -max_depth 3 \\
    -order_by micros
...
node name | total execution time | accelerator execution time | cpu execution time
...
```

```text
$ tfprof this is never run
```

```console
$ tfprof --profile_path=sample_profiles/tiny_mlp/profile
tfprof> profiles
    name      kind     steps    nodes    total time    source
*   tiny_mlp  profile  0,1,2    126      178us         sample_profiles/tiny_mlp/profile
tfprof> nosuchcommand
tfprof: unknown command 'nosuchcommand'; commands: scope, graph, op, code, steps, collectives, kernels, critpath, memory, advise, set, profiles, use, load, capture, unload, ui, help, quit, exit
```
"""


def test_blocks_split_into_one_shot_commands_and_shell_sessions() -> None:
    one, shell = parse_examples("page.md", PAGE)
    assert one.line == 4 and one.script == []
    assert one.argv[-4:] == ["-max_depth", "3", "-order_by", "micros"]
    assert one.expected[1].startswith("node name | total execution time")
    assert shell.line == 16 and shell.script == ["profiles", "nosuchcommand"]
    assert len(shell.expected) == 3


def test_a_changed_output_fails(workdir: str) -> None:
    one, shell = parse_examples("page.md", PAGE)
    for example in (one, shell):
        assert output_matches(example.expected, run_example(example, workdir)[1])
    changed = [line.replace("178us", "179us") for line in shell.expected]
    assert not output_matches(changed, run_example(shell, workdir)[1])
    dropped = shell.expected[1:]  # a line missing with no `...` in its place
    assert not output_matches(dropped, run_example(shell, workdir)[1])


def test_ellipsis_elides_runs_of_lines_only_where_it_stands() -> None:
    assert output_matches(["a", "...", "d"], "a\nb\nc\nd\n")
    assert output_matches(["a", "...", "b"], "a\nb\n")
    assert not output_matches(["a", "...", "d"], "a\nb\nc\nd\ne\n")
    assert not output_matches(["a", "d"], "a\nb\nd\n")
    assert output_matches(["", "a  ", ""], "\n\na\n\n")


def test_other_commands_and_loose_text_are_refused() -> None:
    with pytest.raises(PageError, match="only 'tfprof' commands"):
        parse_examples("p.md", "```console\n$ python -c pass\n```\n")
    with pytest.raises(PageError, match="must start with"):
        parse_examples("p.md", "```console\nsome output\n```\n")
    with pytest.raises(PageError, match="unclosed"):
        parse_examples("p.md", "```console\n$ tfprof --help\n")


def test_the_python_api_example_runs(workdir: str, capsys) -> None:
    # docs/api.md's first ```python block runs on the samples; its comments state what it prints.
    with open(os.path.join(ROOT, "docs", "api.md"), encoding="utf-8") as f:
        text = f.read()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    old = os.getcwd()
    os.chdir(workdir)
    try:
        exec(compile(code, "docs/api.md", "exec"), {})
    finally:
        os.chdir(old)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "[0, 1, 2]"
    assert lines[-1] == str(["AcceleratorUtilizationChecker", "OperationChecker",
                             "ExpensiveOperationChecker"])
