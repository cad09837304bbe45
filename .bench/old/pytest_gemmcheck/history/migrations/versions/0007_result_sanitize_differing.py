"""result: the compute-sanitizer runs of a case's launch and their hazards; the worst launch's
elements that differ from the consensus; launch: its error measures may be NULL (a NaN is stored
as NULL, and a launch whose reference was not a number is still a launch)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


LAUNCH_MEASURES = ("max_abs_err", "max_rel_err", "rel_l2", "max_diff_rel", "elapsed_s")


def upgrade() -> None:
    with op.batch_alter_table("launch", schema=None) as batch_op:
        for column in LAUNCH_MEASURES:
            batch_op.alter_column(column, existing_type=sa.Float(), nullable=True)
    with op.batch_alter_table("result", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sanitize", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("hazards", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True))
        batch_op.add_column(
            sa.Column("worst_differing", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("result", schema=None) as batch_op:
        batch_op.drop_column("worst_differing")
        batch_op.drop_column("hazards")
        batch_op.drop_column("sanitize")
    with op.batch_alter_table("launch", schema=None) as batch_op:
        for column in LAUNCH_MEASURES:
            batch_op.alter_column(column, existing_type=sa.Float(), nullable=False)
