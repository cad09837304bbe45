"""collective cases: case.collective and world_size (part of its key); result.per_rank, each
rank's launches, bad launches and GPU; launch.rank

Revision ID: 0008
Revises: 0007
Create Date: 2027-01-12 10:00:00

Every column is nullable and NULL outside a collective case, so the rows already stored read as
they did: no table is copied on PostgreSQL, and on SQLite only the columns are added.
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("case", schema=None) as batch_op:
        batch_op.add_column(sa.Column("collective", sa.String(length=32), nullable=True))
        batch_op.add_column(
            sa.Column("world_size", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True)
        )
    with op.batch_alter_table("result", schema=None) as batch_op:
        batch_op.add_column(sa.Column("per_rank", sa.JSON(), nullable=True))
    with op.batch_alter_table("launch", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rank", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("launch", schema=None) as batch_op:
        batch_op.drop_column("rank")
    with op.batch_alter_table("result", schema=None) as batch_op:
        batch_op.drop_column("per_rank")
    with op.batch_alter_table("case", schema=None) as batch_op:
        batch_op.drop_column("world_size")
        batch_op.drop_column("collective")
