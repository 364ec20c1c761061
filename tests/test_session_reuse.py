"""A session reuses views and their accounting across commands: that must never show.

Every command's output in a long-lived session must equal the output of the
same command in a fresh session, whatever ran before it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfprof_shell.load.profile import load_profile
from tfprof_shell.session import Session

from conftest import sample

COMMANDS = [
    "scope -max_depth 3 -select micros,bytes,occurrence -order_by micros",
    "scope -account_displayed_op_only -max_depth 2 -select micros,params -order_by micros",
    "scope -account_type_regexes MatMul,Add.* -select micros,float_ops -order_by name",
    "scope -step {last} -select micros,bytes -order_by bytes",
    "scope -start_name_regexes .*dense.* -select micros -max_depth 4",
    "graph -max_depth 4 -select micros,bytes -order_by micros",
    "graph -account_displayed_op_only -max_depth 3 -select micros -order_by micros",
    "graph -step {first} -account_type_regexes .*Variable.* -select params,micros",
    "op -select micros,bytes,occurrence -order_by micros",
    "op -account_displayed_op_only -min_micros 1 -select micros,occurrence",
    "op -step {last} -select micros,bytes -order_by bytes",
    "code -max_depth 5 -select micros -order_by micros",
    "code -step {first} -account_type_regexes MatMul -select micros,occurrence -order_by micros",
    "code -start_name_regexes .*mlp.* -max_depth 3 -select micros,bytes",
    "advise",
]

PROFILES = ["tiny_mlp", "convnet", "while_rnn"]


def _model(name: str):
    return load_profile(sample(name, "profile"))


MODELS = {name: _model(name) for name in PROFILES}


def _command(name: str, template: str) -> str:
    steps = MODELS[name].steps
    return template.format(first=steps[0], last=steps[-1])


def _fresh(name: str, command: str) -> str:
    return Session(MODELS[name]).execute(command).text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(PROFILES),
       sequence=st.lists(st.sampled_from(COMMANDS), min_size=2, max_size=8))
def test_outputs_do_not_depend_on_earlier_commands(name: str, sequence: list[str]) -> None:
    session = Session(MODELS[name])
    for command in (_command(name, t) for t in sequence):
        assert session.execute(command).text == _fresh(name, command), command


@pytest.mark.parametrize("name", PROFILES)
def test_every_pair_of_commands(name: str) -> None:
    commands = [_command(name, t) for t in COMMANDS]
    expected = {c: _fresh(name, c) for c in commands}
    for first in commands:
        session = Session(MODELS[name])
        session.execute(first)
        for second in commands:
            assert session.execute(second).text == expected[second], (first, second)


def test_a_repeated_command_gets_the_last_result_back() -> None:
    session = Session(MODELS["tiny_mlp"])
    command = COMMANDS[0]
    views = session.profile
    first = views.show("scope", session.options)
    views.remember("scope", first)
    assert views.show("scope", session.options) is first
    views.show("code", session.options)  # another view: the kept one stays
    assert views.show("scope", session.options) is first
    views.show("scope", session.options.replace(max_depth=2))  # same view: forgotten
    assert views.show("scope", session.options) is not first
    expected = _fresh("tiny_mlp", command)
    assert session.execute(command).text == session.execute(command).text == expected
