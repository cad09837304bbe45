"""64-bit counts and seeds, text of any length, launch ids past 2**31; result.uid

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 09:00:00

On SQLite the column types stay as they are: INTEGER already holds 64 bits and VARCHAR(n) any
length (the schema says so with a SQLite variant), so no SQLite table is copied; only result.uid
is added there.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

# table -> columns: Integer -> BigInteger
COUNTS = {
    "stack": ["gpu_count"],
    "run": ["exit_status", "pid", "workers"],
    "case": ["m", "n", "k"],
    "result": ["seed", "launches", "bad_launches", "worst_wrong", "total_wrong", "consensus_size"],
    "launch": [
        "id",
        "launch_index",
        "wrong",
        "nonfinite",
        "differing",
        "wrong_rows",
        "wrong_tiles",
        "differing_rows",
        "differing_tiles",
        "pid",
    ],
}
# table -> {column: its VARCHAR length}: -> Text
TEXTS = {
    "stack": {
        "host": 255,
        "os": 255,
        "python": 64,
        "torch": 64,
        "cuda": 64,
        "hip": 64,
        "gpu_name": 255,
        "gpu_arch": 64,
        "driver": 64,
        "triton": 64,
        "flydsl": 64,
    },
    "run": {"tag": 255, "revision": 64, "host": 255, "pid_start": 32, "version": 32},
    "case": {"kernel": 255, "quant": 32, "tile": 32},
    "result": {"device": 64, "kinds": 255},
    "launch": {"kinds": 255, "device": 64, "host": 255, "device_uuid": 64},
}


def _widen(to_wide: bool) -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    for table in sorted(set(COUNTS) | set(TEXTS)):
        with op.batch_alter_table(table, schema=None) as batch_op:
            for column in COUNTS.get(table, []):
                narrow, wide = sa.Integer(), sa.BigInteger()
                batch_op.alter_column(
                    column, type_=wide if to_wide else narrow, existing_type=narrow if to_wide else wide
                )
            for column, length in TEXTS.get(table, {}).items():
                narrow, wide = sa.String(length=length), sa.Text()
                batch_op.alter_column(
                    column, type_=wide if to_wide else narrow, existing_type=narrow if to_wide else wide
                )
    if op.get_bind().dialect.name == "postgresql":  # the id sequence has a type of its own
        op.execute(f"ALTER SEQUENCE launch_id_seq AS {'bigint' if to_wide else 'integer'}")


def upgrade() -> None:
    with op.batch_alter_table("result", schema=None) as batch_op:
        batch_op.add_column(sa.Column("uid", sa.String(length=32), nullable=True))
        batch_op.create_index(batch_op.f("ix_result_uid"), ["uid"], unique=True)
    _widen(True)


def downgrade() -> None:
    _widen(False)
    with op.batch_alter_table("result", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_result_uid"))
        batch_op.drop_column("uid")
