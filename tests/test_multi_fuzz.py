"""Property: over sessions holding several profiles, any view line runs or fails cleanly.

Sessions are opened as the command line opens them (TF1 ProfileProto pairs,
the PyTorch rank folder, TF2 and JAX XSpace runs, and one mixing formats).
Lines combine a random view, -select subset, -order_by, -max_depth, steps,
-base/-base_step, -profiles (names, regexes, all), -aggregate, -by_profile,
-code_match and every -output kind (files go to a scratch folder). Each line
must return a reply or raise a UserError with exit status 1 or 2, never any
other exception; a line that fails leaves the session as it was. A few `set`
and `use` lines move the session between lines, as a user would.

Hypothesis runs derandomized (a fixed seed, no example database) so the
suite is repeatable; TFPROF_FUZZ_LINES raises the budget per session.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import sample
from tfprof_shell import metrics
from tfprof_shell.cli import open_session, parse_invocation
from tfprof_shell.errors import EXIT_DATA, EXIT_USAGE, UserError
from tfprof_shell.outputs import OUTPUT_KINDS
from tfprof_shell.render.base import Reply
from tfprof_shell.session import Session

LINES = int(os.environ.get("TFPROF_FUZZ_LINES", "500"))


@dataclass(frozen=True)
class Case:
    """A session to open (the command line's flags) and the regexes its names answer to."""

    argv: tuple[str, ...]
    regexes: tuple[str, ...]


CASES = {
    "tf1_pair": Case(("--profile", "after=" + sample("mlp_after", "profile"),
                      "--profile", "before=" + sample("mlp_before", "profile")),
                     ("af.*", "b.*|a.*")),
    "tf1_workers": Case(("--profile", "w0=" + sample("mlp_worker0", "profile"),
                         "--profile", "w1=" + sample("mlp_worker1", "profile"),
                         "--profile", "tiny=" + sample("tiny_mlp", "profile")),
                        ("w.*", "w[01]", "t.*")),
    "torch_ranks": Case(("--profile_path=" + sample("torch_ranks"),
                         "--profile", "cnn=" + sample("torch_cnn")),
                        ("rank.*", "rank1", "c.*")),
    "tf2_runs": Case(("--profile", "loop=" + sample("tf2", "custom_loop"),
                      "--profile", "loop_py=" + sample("tf2", "custom_loop_py"),
                      "--profile", "fit=" + sample("tf2", "keras_fit")),
                     ("loop.*", "fit")),
    "jax_runs": Case(("--profile", "attn=" + sample("jax_attention"),
                      "--profile", "gpt=" + sample("jax_gpt")),
                     ("attn|gpt", "g.*")),
    "mixed": Case(("--profile", "tf1=" + sample("mlp_worker0", "profile"),
                   "--profile", "tf2=" + sample("tf2", "keras_fit"),
                   "--profile", "torch=" + sample("torch_cnn")),
                  ("tf.*", "torch")),
}

ATTRS = sorted(metrics.ATTRIBUTES)
VIEWS = ("scope", "graph", "op", "code")


def _session(case: Case) -> Session:
    inv = parse_invocation(["--jobs=1"] + list(case.argv))  # loaded here, not in a pool
    return open_session(inv, io.StringIO())


def _lines(names: list[str], steps: list[int], regexes: tuple[str, ...],
           tmp: str) -> st.SearchStrategy[str]:
    """View lines (mostly multi-profile), with a few `set` and `use` lines.

    ``steps`` are the steps the profiles recorded; lines mostly pick one of
    them (or -1, the average), sometimes one no profile has.
    """
    step_values = st.sampled_from([-1] * 4 + steps[:6] + [123456])
    profile_words = names + list(regexes) + ["all", ",".join(names), "nosuch", "[bad"]
    outputs = st.sampled_from(sorted(OUTPUT_KINDS) + ["json:outfile"]).map(
        lambda kind: _output(kind, tmp))

    def maybe(flag: str, values: st.SearchStrategy) -> st.SearchStrategy[list[str]]:
        return st.one_of(st.just([]), values.map(lambda v: [flag, str(v)]))

    parts = st.tuples(
        st.sampled_from(VIEWS),
        st.lists(st.sampled_from(ATTRS), min_size=1, max_size=4, unique=True).map(
            lambda a: ["-select", ",".join(a)]),
        maybe("-order_by", st.sampled_from(sorted(metrics.ORDER_KEYS))),
        maybe("-max_depth", st.sampled_from([0, 1, 2, 4, 100])),
        maybe("-step", step_values),
        st.one_of(
            st.just([]),
            st.tuples(st.sampled_from(names + ["nosuch", "none"]),
                      st.one_of(st.none(), step_values)).map(
                lambda b: ["-base", b[0]] + ([] if b[1] is None else ["-base_step", str(b[1])])),
            st.lists(st.sampled_from(profile_words), min_size=1, max_size=2).map(
                lambda p: ["-profiles", ",".join(p)]),
            st.just(["-profiles", "none"]),
        ),
        maybe("-aggregate", st.sampled_from(["sum", "mean", "max", "min"])),
        st.sampled_from([[], [], ["-by_profile"], ["-by_profile", "false"]]),
        maybe("-code_match", st.sampled_from(["line", "function"])),
        maybe("-min_micros", st.sampled_from([0, 1, 100])),
        maybe("-account_displayed_op_only", st.sampled_from(["true", "false"])),
        maybe("-output", outputs),
    )
    views = parts.map(lambda p: " ".join([p[0]] + [w for part in p[1:] for w in part]))
    moves = st.one_of(
        st.sampled_from(names + ["nosuch"]).map(lambda n: "use " + n),
        st.sampled_from(["set -base " + names[-1], "set -base nosuch", "set -profiles all",
                         "set -profiles nosuch", "set -step %d" % steps[0], "set -step 99",
                         "set -select micros,occurrence", "set -aggregate max -by_profile"]),
        st.just("set -base none -profiles none -step -1 -select micros"),
        st.just("set -base none -profiles none"),
    )
    return st.one_of(views, views, views, views, views, views, views, moves)


def _output(kind: str, tmp: str) -> str:
    if kind == "json:outfile":
        return "json:outfile=" + os.path.join(tmp, "out.json")
    if kind in ("file", "timeline", "pprof"):
        return "%s:outfile=%s" % (kind, os.path.join(tmp, "out." + kind))
    return kind


def _state(session: Session) -> tuple:
    return session.options, session.current, tuple(session.profiles)


@pytest.mark.parametrize("case", sorted(CASES))
def test_multi_profile_lines_run_or_fail_cleanly(case, tmp_path):
    session = _session(CASES[case])
    names = list(session.profiles)
    assert len(names) >= 2, names
    steps = sorted({s for views in session.profiles.values() for s in views.model.steps})
    outcomes = {"ok": 0, "refused": 0}

    @settings(max_examples=LINES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(line=_lines(names, steps, CASES[case].regexes, str(tmp_path)))
    def run(line: str) -> None:
        before = _state(session)
        try:
            reply = session.execute(line)
        except UserError as exc:
            assert exc.exit_code in (EXIT_DATA, EXIT_USAGE), line
            assert "\n" not in exc.message and exc.message, line
            assert _state(session) == before, line
            outcomes["refused"] += 1
            return
        assert isinstance(reply, Reply), line
        if not line.startswith(("set ", "use ")):
            assert _state(session) == before, line
        outcomes["ok"] += 1

    run()
    # The strategy must reach working commands, not only refusals.
    assert outcomes["ok"] > LINES // 10, outcomes
