"""run token; drop the unused golden table (goldens live in reviewable files under goldens/)

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 12:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("token", sa.String(length=32), nullable=True))
        batch_op.create_index(batch_op.f("ix_run_token"), ["token"], unique=False)
    op.drop_table("golden")


def downgrade() -> None:
    op.create_table(
        "golden",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("scope_value", sa.String(length=255), nullable=False),
        sa.Column("launches", sa.Integer(), nullable=False),
        sa.Column("bad_launches", sa.Integer(), nullable=False),
        sa.Column("worst_wrong", sa.Integer(), nullable=False),
        sa.Column("kinds", sa.String(length=255), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("accepted_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["case.id"], name=op.f("fk_golden_case_id_case")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_golden")),
        sa.UniqueConstraint("case_id", "scope", "scope_value", name=op.f("uq_golden_case_id_scope_scope_value")),
    )
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_token"))
        batch_op.drop_column("token")
