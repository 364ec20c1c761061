"""profiler_service.proto against hand-encoded bytes: TSL's field numbers and wire types.

The numbers are those of TensorFlow 2.21's profiler_service.proto and
profiler_options.proto (ProfileRequest.emit_xspace = 9, ProfileResponse.xspace
= 8, ProfileOptions.duration_ms = 9, ...); a wrong one would make a server
ignore the field silently, so each is pinned here.
"""

from __future__ import annotations

from tfprof_shell.proto import profiler_service_pb2 as pb


def _varint_field(number: int, value: int) -> bytes:
    out = bytes([number << 3])
    while True:
        low, value = value & 0x7F, value >> 7
        out += bytes([low | (0x80 if value else 0)])
        if not value:
            return out


def _bytes_field(number: int, data: bytes) -> bytes:
    return bytes([number << 3 | 2, len(data)]) + data


def test_profile_options_numbers():
    opts = pb.ProfileOptions(host_tracer_level=2, device_tracer_level=1, python_tracer_level=1,
                             version=1, start_timestamp_ns=300, duration_ms=2000)
    assert opts.SerializeToString() == (_varint_field(2, 2) + _varint_field(3, 1)
                                        + _varint_field(4, 1) + _varint_field(5, 1)
                                        + _varint_field(8, 300) + _varint_field(9, 2000))


def test_profile_request_numbers():
    req = pb.ProfileRequest(duration_ms=5, max_events=7, tools=["xplane.pb"],
                            opts=pb.ProfileOptions(duration_ms=5), repository_root="r",
                            session_id="s", host_name="h", emit_xspace=True)
    assert req.SerializeToString() == (
        _varint_field(1, 5) + _varint_field(2, 7) + _bytes_field(3, b"xplane.pb")
        + _bytes_field(4, _varint_field(9, 5)) + _bytes_field(5, b"r") + _bytes_field(6, b"s")
        + _bytes_field(7, b"h") + _varint_field(9, 1))


def test_profile_response_numbers():
    wire = (_bytes_field(6, _bytes_field(1, b"xplane.pb") + _bytes_field(2, b"old"))
            + _varint_field(7, 1) + _bytes_field(8, b"space"))
    resp = pb.ProfileResponse.FromString(wire)
    assert (resp.tool_data[0].name, resp.tool_data[0].data) == ("xplane.pb", b"old")
    assert resp.empty_trace and resp.xspace == b"space"


def test_terminate_request_number():
    assert pb.TerminateRequest(session_id="run").SerializeToString() == _bytes_field(1, b"run")
