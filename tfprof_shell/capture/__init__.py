"""Live capture from a running job's profiler service (needs grpcio: the ``capture`` extra).

flags.py declares every flag once; client.py talks gRPC; grab.py captures and
writes files; cli.py and top.py are the `tfprof capture` and `tfprof top` doors.
"""
