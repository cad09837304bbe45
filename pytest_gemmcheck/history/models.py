"""The history schema (SQLAlchemy 2 ORM). Users query these tables directly: the names and
columns are documented in docs/schema.md and change only through a migration."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (JSON, BigInteger, Boolean, DateTime, Float, ForeignKey, Index, Integer, MetaData,
                        String, Text)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

# Stable constraint names, so that migrations can refer to them on every backend.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


# Counts and seeds take 64 bits (an 8192x8192 output wrong on 33 launches is 2.2e9 wrong
# elements), and free text any length. SQLite's INTEGER already holds 64 bits and its VARCHAR(n)
# any length, so there the types 0001 made stay: migration 0006 copies no SQLite table.
COUNT = BigInteger().with_variant(Integer(), "sqlite")


def free_text(sqlite_length: int):
    """Text of any length; on SQLite the VARCHAR the table was made with (which holds any length)."""
    return Text().with_variant(String(sqlite_length), "sqlite")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Stack(Base):
    """Where results were produced. One row per distinct fingerprint."""

    __tablename__ = "stack"
    id: Mapped[int] = mapped_column(primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(32), unique=True)
    host: Mapped[str | None] = mapped_column(free_text(255))
    os: Mapped[str | None] = mapped_column(free_text(255))
    python: Mapped[str | None] = mapped_column(free_text(64))
    torch: Mapped[str | None] = mapped_column(free_text(64))
    cuda: Mapped[str | None] = mapped_column(free_text(64))
    hip: Mapped[str | None] = mapped_column(free_text(64))
    gpu_name: Mapped[str | None] = mapped_column(free_text(255))
    gpu_arch: Mapped[str | None] = mapped_column(free_text(64), index=True)
    gpu_count: Mapped[int | None] = mapped_column(COUNT)
    driver: Mapped[str | None] = mapped_column(free_text(64))
    triton: Mapped[str | None] = mapped_column(free_text(64))
    flydsl: Mapped[str | None] = mapped_column(free_text(64))
    extra: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Run(Base):
    """One pytest session (however many xdist workers)."""

    __tablename__ = "run"
    id: Mapped[int] = mapped_column(primary_key=True)
    stack_id: Mapped[int | None] = mapped_column(ForeignKey("stack.id"))
    status: Mapped[str] = mapped_column(String(16), default="running")  # running/complete/interrupted/unrecorded
    exit_status: Mapped[int | None] = mapped_column(COUNT)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    tag: Mapped[str | None] = mapped_column(free_text(255), index=True)
    revision: Mapped[str | None] = mapped_column(free_text(64))
    dirty: Mapped[bool | None] = mapped_column(Boolean)
    command: Mapped[str | None] = mapped_column(Text)
    rootdir: Mapped[str | None] = mapped_column(Text)
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    host: Mapped[str | None] = mapped_column(free_text(255))
    pid: Mapped[int | None] = mapped_column(COUNT)
    pid_start: Mapped[str | None] = mapped_column(free_text(32))  # process start time: pid reuse guard
    workers: Mapped[int] = mapped_column(COUNT, default=0)
    version: Mapped[str | None] = mapped_column(free_text(32))  # pytest-gemmcheck's
    # the session's own id, known before its row exists: xdist workers judge against the
    # history without this run's own results by it
    token: Mapped[str | None] = mapped_column(String(32), index=True)

    stack: Mapped[Stack | None] = relationship()


class Case(Base):
    """A kernel configuration, identified by its key (a hash of the other columns)."""

    __tablename__ = "case"
    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(32), unique=True)
    kernel: Mapped[str] = mapped_column(free_text(255), index=True)
    m: Mapped[int] = mapped_column(COUNT)
    n: Mapped[int] = mapped_column(COUNT)
    k: Mapped[int] = mapped_column(COUNT)
    quant: Mapped[str] = mapped_column(free_text(32))
    tile: Mapped[str | None] = mapped_column(free_text(32))
    out_dtype: Mapped[str] = mapped_column(String(32))
    fp8: Mapped[str | None] = mapped_column(String(16))
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class Result(Base):
    """A case within one run: its launches summed up, and the verdict."""

    __tablename__ = "result"
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"))
    case_id: Mapped[int] = mapped_column(ForeignKey("case.id"))
    stack_id: Mapped[int | None] = mapped_column(ForeignKey("stack.id"))
    nodeid: Mapped[str | None] = mapped_column(Text)
    seed: Mapped[int] = mapped_column(COUNT)
    device: Mapped[str | None] = mapped_column(free_text(64))
    deterministic: Mapped[bool] = mapped_column(Boolean)
    rtol: Mapped[float] = mapped_column(Float)
    floor: Mapped[float] = mapped_column(Float)
    launches: Mapped[int] = mapped_column(COUNT)
    bad_launches: Mapped[int] = mapped_column(COUNT)
    worst_wrong: Mapped[int] = mapped_column(COUNT)
    total_wrong: Mapped[int] = mapped_column(COUNT)
    kinds: Mapped[str] = mapped_column(free_text(255), default="")  # comma-separated failure kinds
    consensus_size: Mapped[int] = mapped_column(COUNT, default=0)
    verdict: Mapped[str] = mapped_column(String(16))
    baseline_source: Mapped[str | None] = mapped_column(Text)
    message: Mapped[str | None] = mapped_column(Text)
    stress: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # the background load as it ran
    check_backend: Mapped[str | None] = mapped_column(String(16))
    static: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # compiled kernels: metrics and lint
    elapsed_min_s: Mapped[float | None] = mapped_column(Float)  # over its timed launches
    elapsed_median_s: Mapped[float | None] = mapped_column(Float)
    contended: Mapped[bool | None] = mapped_column(Boolean)  # NULL: not known (no GPU monitor)
    contention: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # what was seen on its GPU, start and end
    worst_tiles: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # the worst launch's wrong elements per tile
    # one launch under each compute-sanitizer tool (records.sanitize.SanitizerRun), and the error-severity
    # reports on the kernel under test among them: shown, or counted past --print-limit
    sanitize: Mapped[list[Any] | None] = mapped_column(JSON)
    hazards: Mapped[int | None] = mapped_column(COUNT)
    worst_differing: Mapped[int | None] = mapped_column(COUNT)  # most elements of one launch off the consensus
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # given when recorded (32 hex digits): `gemmcheck db import` leaves out results stored already
    uid: Mapped[str | None] = mapped_column(String(32))

    case: Mapped[Case] = relationship()
    run: Mapped[Run] = relationship()

    __table_args__ = (
        Index("ix_result_case_id_run_id", "case_id", "run_id"),
        Index("ix_result_run_id", "run_id"),
        Index("ix_result_uid", "uid", unique=True),
    )


class Launch(Base):
    """One launch of a case: one poisoned output, one check."""

    __tablename__ = "launch"
    id: Mapped[int] = mapped_column(COUNT, primary_key=True)  # a fleet's launches outgrow 2**31 ids
    result_id: Mapped[int] = mapped_column(ForeignKey("result.id", ondelete="CASCADE"))
    launch_index: Mapped[int] = mapped_column(COUNT)  # 1-based, in launch order
    kinds: Mapped[str] = mapped_column(free_text(255), default="")  # empty: clean
    wrong: Mapped[int] = mapped_column(COUNT, default=0)
    nonfinite: Mapped[int] = mapped_column(COUNT, default=0)
    differing: Mapped[int | None] = mapped_column(COUNT)  # NULL: differs, count unknown
    max_abs_err: Mapped[float | None] = mapped_column(Float, default=0.0)  # NULL: not a number
    max_rel_err: Mapped[float | None] = mapped_column(Float, default=0.0)  # NULL: not a number
    rel_l2: Mapped[float | None] = mapped_column(Float, default=0.0)  # NULL: not a number
    wrong_rows: Mapped[int] = mapped_column(COUNT, default=0)
    wrong_tiles: Mapped[int | None] = mapped_column(COUNT)
    differing_rows: Mapped[int] = mapped_column(COUNT, default=0)
    differing_tiles: Mapped[int | None] = mapped_column(COUNT)
    max_diff_rel: Mapped[float | None] = mapped_column(Float, default=0.0)  # NULL: not a number
    elapsed_s: Mapped[float | None] = mapped_column(Float, default=0.0)  # NULL: not a number
    poisoned: Mapped[bool] = mapped_column(Boolean, default=True)
    error: Mapped[str | None] = mapped_column(Text)
    pid: Mapped[int | None] = mapped_column(COUNT)
    device: Mapped[str | None] = mapped_column(free_text(64))
    host: Mapped[str | None] = mapped_column(free_text(255))
    device_uuid: Mapped[str | None] = mapped_column(free_text(64))  # the physical GPU

    __table_args__ = (Index("ix_launch_result_id", "result_id"),)
