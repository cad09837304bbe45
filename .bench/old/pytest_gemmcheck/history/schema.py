"""The history schema, as SQLAlchemy Core tables (no ORM: reading the history then costs no
more than SQLAlchemy's own import). Users query these tables directly: the names and columns
are documented in docs/schema.md and change only through a migration."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

# Stable constraint names, so that migrations can refer to them on every backend.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)

# Counts and seeds take 64 bits (an 8192x8192 output wrong on 33 launches is 2.2e9 wrong
# elements), and free text any length. SQLite's INTEGER already holds 64 bits and its VARCHAR(n)
# any length, so there the types 0001 made stay: migration 0006 copies no SQLite table.
COUNT = BigInteger().with_variant(Integer(), "sqlite")


def free_text(sqlite_length: int):
    """Text of any length; on SQLite the VARCHAR the table was made with (which holds any length)."""
    return Text().with_variant(String(sqlite_length), "sqlite")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def _required(name: str, type_, **options) -> Column:
    return Column(name, type_, nullable=False, **options)


def _key() -> Column:
    return Column("id", Integer, primary_key=True)


# Where results were produced. One row per distinct fingerprint.
stack_table = Table(
    "stack",
    metadata,
    _key(),
    _required("fingerprint", String(32), unique=True),
    Column("host", free_text(255)),
    Column("os", free_text(255)),
    Column("python", free_text(64)),
    Column("torch", free_text(64)),
    Column("cuda", free_text(64)),
    Column("hip", free_text(64)),
    Column("gpu_name", free_text(255)),
    Column("gpu_arch", free_text(64), index=True),
    Column("gpu_count", COUNT),
    Column("driver", free_text(64)),
    Column("triton", free_text(64)),
    Column("flydsl", free_text(64)),
    _required("extra", JSON, default=dict),
    _required("created_at", DateTime(timezone=True), default=utcnow),
)

# One pytest session (however many xdist workers).
run_table = Table(
    "run",
    metadata,
    _key(),
    Column("stack_id", ForeignKey("stack.id")),
    _required("status", String(16), default="running"),  # running/complete/interrupted/unrecorded
    Column("exit_status", COUNT),
    _required("started_at", DateTime(timezone=True), default=utcnow, index=True),
    Column("ended_at", DateTime(timezone=True)),
    Column("heartbeat_at", DateTime(timezone=True)),
    Column("tag", free_text(255), index=True),
    Column("revision", free_text(64)),
    Column("dirty", Boolean),
    Column("command", Text),
    Column("rootdir", Text),
    _required("options", JSON, default=dict),
    Column("host", free_text(255)),
    Column("pid", COUNT),
    Column("pid_start", free_text(32)),  # process start time: pid reuse guard
    _required("workers", COUNT, default=0),
    Column("version", free_text(32)),  # pytest-gemmcheck's
    # the session's own id, known before its row exists: xdist workers judge against the
    # history without this run's own results by it
    Column("token", String(32), index=True),
)

# A kernel configuration, identified by its key (a hash of the other columns).
case_table = Table(
    "case",
    metadata,
    _key(),
    _required("key", String(32), unique=True),
    _required("kernel", free_text(255), index=True),
    _required("m", COUNT),
    _required("n", COUNT),
    _required("k", COUNT),
    _required("quant", free_text(32)),
    Column("tile", free_text(32)),
    _required("out_dtype", String(32)),
    Column("fp8", String(16)),
    _required("params", JSON, default=dict),
    # a collective case's (all_reduce / reduce_scatter / all_gather) and its ranks; NULL outside one
    Column("collective", String(32)),
    Column("world_size", COUNT),
)

# A case within one run: its launches summed up, and the verdict.
result_table = Table(
    "result",
    metadata,
    _key(),
    _required("run_id", ForeignKey("run.id", ondelete="CASCADE")),
    _required("case_id", ForeignKey("case.id")),
    Column("stack_id", ForeignKey("stack.id")),
    Column("nodeid", Text),
    _required("seed", COUNT),
    Column("device", free_text(64)),
    _required("deterministic", Boolean),
    _required("rtol", Float),
    _required("floor", Float),
    _required("launches", COUNT),
    _required("bad_launches", COUNT),
    _required("worst_wrong", COUNT),
    _required("total_wrong", COUNT),
    _required("kinds", free_text(255), default=""),  # comma-separated failure kinds
    _required("consensus_size", COUNT, default=0),
    _required("verdict", String(16)),
    Column("baseline_source", Text),
    Column("message", Text),
    Column("stress", JSON),  # the background load as it ran
    Column("check_backend", String(16)),
    Column("static", JSON),  # compiled kernels: metrics and lint
    Column("elapsed_min_s", Float),  # over its timed launches
    Column("elapsed_median_s", Float),
    Column("contended", Boolean),  # NULL: not known (no GPU monitor)
    Column("contention", JSON),  # what was seen on its GPU, start and end
    Column("worst_tiles", JSON),  # the worst launch's wrong elements per tile
    # one launch under each compute-sanitizer tool (records.sanitize.SanitizedLaunch), and the error-severity
    # reports on the kernel under test among them: shown, or counted past --print-limit
    Column("sanitize", JSON),
    Column("hazards", COUNT),
    Column("worst_differing", COUNT),  # most elements of one launch off the consensus
    # a collective case's ranks, each {rank, launches, bad_launches, device, device_uuid}; NULL outside one
    Column("per_rank", JSON(none_as_null=True)),  # NULL in SQL, not JSON null: `per_rank IS NULL` finds them
    _required("recorded_at", DateTime(timezone=True), default=utcnow),
    # given when recorded (32 hex digits): `gemmcheck db import` leaves out results stored already
    Column("uid", String(32)),
    Index("ix_result_case_id_run_id", "case_id", "run_id"),
    Index("ix_result_run_id", "run_id"),
    Index("ix_result_uid", "uid", unique=True),
)

# One launch of a case: one poisoned output, one check.
launch_table = Table(
    "launch",
    metadata,
    Column("id", COUNT, primary_key=True),  # a fleet's launches outgrow 2**31 ids
    _required("result_id", ForeignKey("result.id", ondelete="CASCADE")),
    _required("launch_index", COUNT),  # 1-based, in launch order
    _required("kinds", free_text(255), default=""),  # empty: clean
    _required("wrong", COUNT, default=0),
    _required("nonfinite", COUNT, default=0),
    Column("differing", COUNT),  # NULL: differs, count unknown
    Column("max_abs_err", Float, default=0.0),  # NULL: not a number
    Column("max_rel_err", Float, default=0.0),  # NULL: not a number
    Column("rel_l2", Float, default=0.0),  # NULL: not a number
    _required("wrong_rows", COUNT, default=0),
    Column("wrong_tiles", COUNT),
    _required("differing_rows", COUNT, default=0),
    Column("differing_tiles", COUNT),
    Column("max_diff_rel", Float, default=0.0),  # NULL: not a number
    Column("elapsed_s", Float, default=0.0),  # NULL: not a number
    _required("poisoned", Boolean, default=True),
    Column("error", Text),
    Column("pid", COUNT),
    Column("device", free_text(64)),
    Column("host", free_text(255)),
    Column("device_uuid", free_text(64)),  # the physical GPU
    Column("rank", Integer),  # its process's rank in a collective case's group; NULL outside one
    Index("ix_launch_result_id", "result_id"),
)


def results_joined(*tables: Table, launches: bool = False):
    """What most reads select from: the result table (or the launch table joined to it) joined to
    each of ``tables`` (case, run, stack) by the result's own foreign key, the stack by an outer
    join since a result may have none. The key is named: the run has a stack of its own."""
    joined = (
        launch_table.join(result_table, result_table.c.id == launch_table.c.result_id) if launches else result_table
    )
    for table in tables:
        on = table.c.id == result_table.c[f"{table.name}_id"]
        joined = joined.outerjoin(table, on) if table is stack_table else joined.join(table, on)
    return joined
