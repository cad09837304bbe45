"""Probing a revision: a git worktree checked out at it, the probe command run there with the
user's history database, and the case's bad and total launches read back from the history."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Integer, and_, func, or_, select

from ..history.schema import case_table, launch_table, result_table, results_joined, run_table


class GitError(Exception):
    """A revision that git cannot resolve, or a range with nothing to bisect."""


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise GitError(
            f"git {' '.join(args)}: {(done.stderr or done.stdout).strip().splitlines()[-1:] or ['failed']}".replace(
                "['", ""
            ).replace("']", "")
        )
    return done.stdout.strip()


def toplevel(path: Path) -> Path:
    """The top folder of the git repository ``path`` is in; GitError in our words where there is none."""
    if not path.is_dir():
        raise GitError(f"--repo {path}: no such folder")
    found = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if found.returncode != 0:
        raise GitError(f"--repo {path}: not in a git repository (give the kernel repository's folder with --repo)")
    return Path(found.stdout.strip())


def resolve(repo: Path, rev: str, option: str) -> str:
    """The commit ``rev`` names in ``repo``; GitError naming ``option`` where it names none."""
    sha = git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", check=False)
    if not rev.strip() or not sha:
        raise GitError(f"{option} {rev!r}: no such commit in {repo} (a branch, tag, commit id or HEAD~N)")
    return sha


def commits_between(repo: Path, good: str, bad: str) -> list[str]:
    """The commits after ``good`` up to and including ``bad`` on the ancestry path, oldest first."""
    if subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", good, bad]).returncode != 0:
        raise GitError(f"--good {good[:10]} is not an ancestor of --bad {bad[:10]}")
    listed = git(repo, "rev-list", "--ancestry-path", "--reverse", f"{good}..{bad}").split()
    if not listed:
        raise GitError("nothing to bisect: --good and --bad are the same commit")
    return listed


def subject(repo: Path, sha: str) -> str:
    return git(repo, "log", "-1", "--format=%s", sha, check=False)


class Worktrees:
    """Detached worktrees of the repository under one temporary folder, removed on exit (the
    user's own tree is never touched)."""

    def __init__(self, repo: Path):
        self.repo = repo
        self.folder = Path(tempfile.mkdtemp(prefix="gemmcheck-bisect-"))
        self.paths: dict[str, Path] = {}

    def __enter__(self) -> "Worktrees":
        return self

    def get(self, sha: str) -> Path:
        if sha not in self.paths:
            path = self.folder / sha[:12]
            git(self.repo, "worktree", "add", "--detach", "--force", str(path), sha)
            self.paths[sha] = path
        return self.paths[sha]

    def __exit__(self, *exc) -> None:
        for path in self.paths.values():
            git(self.repo, "worktree", "remove", "--force", str(path), check=False)
        git(self.repo, "worktree", "prune", check=False)
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class Counts:
    bad: int = 0  # bad units
    units: int = 0
    launches: int = 0
    runs: int = 0


def _conditions(sha: str, key: str | None, nodeid: str | None, after: int | None, tag: str | None):
    conditions = [run_table.c.revision == sha, or_(run_table.c.dirty.is_(None), run_table.c.dirty.is_(False))]
    if key:
        conditions.append(case_table.c.key.like(key.replace("%", r"\%").replace("_", r"\_") + "%", escape="\\"))
    if nodeid:
        conditions.append(result_table.c.nodeid == nodeid)
    if after is not None:
        conditions.append(run_table.c.id > after)
    if tag:
        conditions.append(run_table.c.tag == tag)
    return and_(*conditions)


def count(
    engine,
    sha: str,
    *,
    key: str | None,
    nodeid: str | None,
    unit: str = "launch",
    after: int | None = None,
    tag: str | None = None,
) -> Counts:
    """The case's recorded counts at ``sha`` (clean trees only): launches, or (unit 'process')
    the processes with a bad launch of all processes (one per host and pid in a run)."""
    where = _conditions(sha, key, nodeid, after, tag)
    result = result_table.c
    base = (
        select(
            func.coalesce(func.sum(result.bad_launches), 0),
            func.coalesce(func.sum(result.launches), 0),
            func.count(func.distinct(result.run_id)),
        )
        .select_from(results_joined(case_table, run_table))
        .where(where)
    )
    with engine.connect() as connection:
        bad, launches, runs = connection.execute(base).one()
        if unit != "process":
            return Counts(int(bad), int(launches), int(launches), int(runs))
        per_process = (
            select(func.sum(func.cast(launch_table.c.kinds != "", Integer())))
            .select_from(results_joined(case_table, run_table, launches=True))
            .where(where)
            .group_by(result.run_id, launch_table.c.host, launch_table.c.pid)
        )
        flags = [int(value or 0) for (value,) in connection.execute(per_process)]
    return Counts(sum(1 for value in flags if value > 0), len(flags), int(launches), int(runs))


def last_run_id(engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(func.coalesce(func.max(run_table.c.id), 0))).scalar() or 0)


def nodeid_of(engine, key: str) -> str | None:
    """The test that last recorded the case ``key`` (a key or its prefix)."""
    query = (
        select(result_table.c.nodeid)
        .select_from(results_joined(case_table))
        .where(case_table.c.key.like(key + "%"), result_table.c.nodeid.is_not(None))
        .order_by(result_table.c.id.desc())
        .limit(1)
    )
    with engine.connect() as connection:
        return connection.execute(query).scalar()


@dataclass
class Ran:
    returncode: int | None
    seconds: float
    tail: str


def default_command(nodeid: str, *, launches: int, processes: int, db: str, tag: str) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "pytest",
        nodeid,
        "-q",
        "-p",
        "no:cacheprovider",
        f"--gemmcheck-repeat={launches}",
        "--gemmcheck-stop-on-bad",
        f"--gemmcheck-db={db}",
        f"--gemmcheck-tag={tag}",
    ]
    if processes > 1:
        command.append(f"--gemmcheck-processes={processes}")
    return command


def fill(command: list[str], values: dict[str, str]) -> list[str]:
    """A user's probe command with {rev}, {launches}, {units}, {db}, {tag} and {nodeid} filled in."""
    out = []
    for word in command:
        for name, value in values.items():
            word = word.replace("{" + name + "}", value)
        out.append(word)
    return out


def run_command(command: list[str], cwd: Path, env: dict[str, str], timeout: float | None) -> Ran:
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return Ran(None, time.monotonic() - started, f"timed out after {timeout:g} s")
    except OSError as exc:
        return Ran(None, time.monotonic() - started, f"{shlex.join(command[:1])}: {exc.strerror or exc}")
    text = (done.stdout + done.stderr).strip().splitlines()
    return Ran(done.returncode, time.monotonic() - started, text[-1] if text else "")
