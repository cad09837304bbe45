"""result: launch-time summary, GPU contention, the worst launch's wrong-tile map

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 13:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("result", schema=None) as batch_op:
        batch_op.add_column(sa.Column("elapsed_min_s", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("elapsed_median_s", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("contended", sa.Boolean(), nullable=True))
        batch_op.add_column(sa.Column("contention", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("worst_tiles", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("result", schema=None) as batch_op:
        batch_op.drop_column("worst_tiles")
        batch_op.drop_column("contention")
        batch_op.drop_column("contended")
        batch_op.drop_column("elapsed_median_s")
        batch_op.drop_column("elapsed_min_s")
