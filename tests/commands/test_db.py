"""``gemmcheck db``: a question about the schema creates nothing."""


def test_db_current_of_a_missing_file_creates_nothing(tmp_path, cli):
    missing = tmp_path / "missing.db"
    status, out, err = cli("db", "current", "--db", missing)
    assert (status, out) == (1, "") and err == f"gemmcheck: no history database at {missing}\n"
    assert not missing.exists()
    # history on the same path says the same
    assert cli("history", "--db", missing)[2] == err
