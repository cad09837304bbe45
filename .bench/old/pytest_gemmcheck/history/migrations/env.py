"""Alembic environment for the history schema. Run through `gemmcheck db upgrade` or
automatically on the embedded SQLite default; a connection is handed in through
``config.attributes["connection"]``."""

from alembic import context
from sqlalchemy import create_engine

from pytest_gemmcheck.history.schema import metadata as target_metadata


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(context.config.get_main_option("sqlalchemy.url"))
    with engine.begin() as connection:
        _run(connection)


def run_offline() -> None:
    context.configure(
        url=context.config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata, literal_binds=True
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
