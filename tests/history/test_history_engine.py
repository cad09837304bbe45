"""history/engine.py: the schema revisions read from the migration files are Alembic's."""

from alembic.script import ScriptDirectory

from pytest_gemmcheck.history import engine


def test_the_revisions_and_head_are_alembics():
    scripts = ScriptDirectory.from_config(engine._alembic_config())
    known, head = engine._revisions()
    assert head == scripts.get_current_head()
    assert known == {script.revision for script in scripts.walk_revisions()}


def test_a_revision_not_in_the_chain_is_newer():
    assert not engine.is_newer(None)
    assert not engine.is_newer(engine.head_revision())
    assert not engine.is_newer("0001")
    assert engine.is_newer("9999") and engine.is_newer("")
