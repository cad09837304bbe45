"""``--gemmcheck-processes=N``: a test's launches spread over N fresh processes.

Kernel authors see races decided per process (at load or JIT time) and per GPU: a racing
process races on most launches, a clean one stays clean, so launches in one process are weak
evidence. The parent runs the test itself in N child pytest processes, started fresh
(``subprocess``, the equivalent of spawning: nothing is forked after the GPU is initialised),
each doing its share of the launches and writing its results to a file instead of judging
them. The parent merges each case's launches into one result, compares the children's
consensus outputs (by checksum) so that a process whose every launch agrees with itself but
not with the other processes still shows as inconsistent, then judges and records the
aggregate as if it had run here. With --gemmcheck-devices naming several GPUs, child i runs on
GPU i mod count; children on different GPUs run at the same time, those sharing one in turn.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from ..config.pytest_adapter import CHILD_SETTINGS
from ..config.table import AUTO, Settings, child_settings
from ..records.result import INCONSISTENT, CaseResult
from .state import CHILD_OUTPUT, is_child

CHILD_DEVICE = "GEMMCHECK_CHILD_DEVICE"  # the GPU index a child uses
CHILD_INDEX = "GEMMCHECK_CHILD_INDEX"


def shares(repeat: int, processes: int) -> list[int]:
    """Launches per child: as even as possible, every child at least one."""
    processes = max(1, min(processes, repeat))
    return [repeat // processes + (1 if i < repeat % processes else 0) for i in range(processes)]


def child_command(config, nodeid: str) -> list[str]:
    """The command that runs the test ``nodeid`` again in a child (its settings come through
    CHILD_SETTINGS, resolved: no option of the child's own to parse)."""
    # a plugin loaded with -p (not installed through its entry point) must be loaded so in the children too
    plugin_args = [] if config.pluginmanager.has_plugin("gemmcheck") else ["-p", "pytest_gemmcheck.plugin"]
    return [
        sys.executable,
        "-m",
        "pytest",
        "--rootdir",
        str(config.rootpath),
        *plugin_args,
        nodeid,
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
    ]


def sanitize_in_child(config, nodeid: str, settings: Settings, key: str, device) -> list:
    """--gemmcheck-sanitize: the case ``key`` of the test ``nodeid``, launched once under each
    tool in a child that runs the test again (case/sanitized.py)."""
    from ..case.sanitized import sanitize

    with tempfile.TemporaryDirectory(prefix="gemmcheck-sanitize-") as folder:
        environ = dict(
            os.environ,
            **{CHILD_OUTPUT: str(Path(folder) / "child.json"), CHILD_SETTINGS: child_settings(settings, repeat=1)},
        )
        if getattr(device, "index", None) is not None:
            environ[CHILD_DEVICE] = str(device.index)
        # -s: the child's marker line goes to its own stdout, where the sanitizer's output is read
        return sanitize(
            key,
            device,
            settings,
            child=[*child_command(config, nodeid), "-s"],
            environ=environ,
            cwd=config.invocation_params.dir,
        )


class ChildFailure(Exception):
    """A child process that produced no results; the message says how it ended."""


def run_children(
    nodeid: str,
    settings: Settings,
    *,
    command: list[str],
    invocation_dir: Path,
    devices: list[int | None],
    env: dict[str, str] | None = None,
) -> tuple[list[list[CaseResult]], list[str]]:
    """Run the test in ``settings.processes`` children: their results, child by child, and how
    the test itself failed in those that recorded results and then failed (an assertion of the
    test's own after its case.run: the test fails here too). ``env``: variables the children get
    besides this process's."""
    repeat = settings.repeat
    if repeat == AUTO:
        plan = [AUTO] * settings.processes
    else:
        plan = shares(int(repeat), settings.processes)
    budget = settings.budget / len(plan) if repeat == AUTO else settings.budget
    outputs: list[list[CaseResult] | None] = [None] * len(plan)
    errors: list[str | None] = [None] * len(plan)
    test_failures: list[str | None] = [None] * len(plan)
    by_device: dict[object, list[int]] = {}
    for index in range(len(plan)):
        by_device.setdefault(devices[index % len(devices)] if devices else None, []).append(index)

    with tempfile.TemporaryDirectory(prefix="gemmcheck-processes-") as folder:

        def run(index: int, device) -> None:
            out_file = Path(folder) / f"child-{index}.json"
            child_env = dict(
                os.environ,
                **(env or {}),
                **{
                    CHILD_OUTPUT: str(out_file),
                    CHILD_INDEX: str(index),
                    CHILD_SETTINGS: child_settings(settings, repeat=plan[index], budget=budget),
                },
            )
            if device is not None:
                child_env[CHILD_DEVICE] = str(device)
            done = subprocess.run(command, cwd=invocation_dir, env=child_env, capture_output=True, text=True)
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            if out_file.exists():
                outputs[index] = read_child_output(out_file)[0]
                if done.returncode != 0:
                    test_failures[index] = (
                        f"the test failed in process {index + 1} of {len(plan)} (exit status "
                        f"{done.returncode}):\n{tail}"
                    )
            else:
                errors[index] = (
                    f"process {index + 1} of {len(plan)} exited with status {done.returncode} and "
                    f"recorded nothing:\n{tail}"
                )

        seen_bad = threading.Event()  # --gemmcheck-stop-on-bad: start no more children

        def run_group(indices: list[int], device) -> None:
            for index in indices:
                if seen_bad.is_set():
                    return
                run(index, device)
                if settings.stop_on_bad and any(
                    launch.bad for result in outputs[index] or [] for launch in result.launches
                ):
                    seen_bad.set()

        threads = [threading.Thread(target=run_group, args=(indices, device)) for device, indices in by_device.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    failed = [error for error in errors if error]
    if failed:
        raise ChildFailure("\n".join(failed))
    return [output or [] for output in outputs], [failure for failure in test_failures if failure]


def write_child_results(results: list[CaseResult], failures: list[str]) -> None:
    """A child's results, and the one-line reasons its tests failed (pytest's crash lines)."""
    path = os.environ[CHILD_OUTPUT]
    Path(path).write_text(json.dumps({"results": [result.to_dict() for result in results], "failures": failures}))


def read_child_output(path: Path) -> tuple[list[CaseResult], list[str]]:
    """What :func:`write_child_results` wrote."""
    data = json.loads(path.read_text())
    return [CaseResult.from_dict(result) for result in data["results"]], data["failures"]


def aggregate(children: list[list[CaseResult]]) -> list[CaseResult]:
    """One result per case (in order of first appearance), launches renumbered in child order."""
    merged: dict[str, list[CaseResult]] = {}
    for results in children:
        for result in results:
            merged.setdefault(result.key, []).append(result)
    return [merge_parts(parts) for parts in merged.values()]


def _merge_tile_maps(merged: dict, part: dict, offset: int) -> None:
    """A child's tile maps into the merged ones, the worst of each kind kept (wrong elements at
    the top level, elements off the consensus under "differing"), launches renumbered."""
    if "grid" in part and part["wrong"] > merged.get("wrong", 0):
        merged.update({key: value for key, value in part.items() if key != "differing"}, launch=offset + part["launch"])
    differing = part.get("differing")
    if differing and differing["elements"] > merged.get("differing", {}).get("elements", 0):
        merged["differing"] = dict(differing, launch=offset + differing["launch"])


def merge_parts(parts: list[CaseResult]) -> CaseResult:
    """One case's results from several processes as one, launches renumbered in process order,
    a process whose consensus output is not the majority's marked inconsistent."""
    first = parts[0]
    data = first.to_dict()
    data.update(
        launches=[],
        consensus_size=0,
        consensus_note="",
        verdict="",
        message="",
        baseline={},
        stopped="",
        worst_tiles={},
    )
    result = CaseResult.from_dict(data)
    majority = _majority_checksum(parts)
    notes = []
    for part in parts:
        agrees = part.consensus_checksum == majority or not first.deterministic
        _merge_tile_maps(result.worst_tiles, part.worst_tiles or {}, offset=len(result.launches))
        for launch in part.launches:
            launch.index = len(result.launches) + 1
            if not agrees and not launch.bad:
                launch.add_kind(INCONSISTENT)
                launch.differing = None  # another process's output: the count is not known here
            result.launches.append(launch)
        if agrees:
            result.consensus_size += part.consensus_size
        else:
            notes.append(
                f"the launches of process {part.launches[0].pid if part.launches else '?'} agree with each "
                "other but not with the other processes' consensus"
            )
        if part.consensus_note:
            notes.append(part.consensus_note)
        if part.stopped:
            result.stopped = part.stopped
    result.consensus_note = "; ".join(notes)
    result.consensus_checksum = majority
    result.contention = _merged_contention([part.contention for part in parts])
    return result


def _merged_contention(records: list[dict]) -> dict:
    """The children's contention as one: contended when any child was, unknown when any child
    could not tell (and none was contended), quiet only when every child was."""
    known = [record.get("contended") for record in records]
    contended = True if True in known else (None if None in known or not known else False)
    notes = [f"process {index + 1}: {record['note']}" for index, record in enumerate(records) if record.get("note")]
    return {"contended": contended, "note": "; ".join(notes), "processes": records}


def _majority_checksum(parts: list[CaseResult]):
    counts: dict[object, int] = {}
    for part in parts:
        counts[part.consensus_checksum] = counts.get(part.consensus_checksum, 0) + part.consensus_size
    return max(counts, key=lambda checksum: counts[checksum]) if counts else None


def run_in_processes(session, item, overrides, sink: list) -> bool:
    """--gemmcheck-processes=N for one test: run it in N children, then judge and record the
    aggregate here, as case.run would have (a test of --gemmcheck-world-size=W runs as its W
    ranks instead: rank_processes.py). False when the test runs here as usual."""
    __tracebackhide__ = True  # a failure points at the test, not at the plugin's spawning
    from .rank_processes import run_in_ranks

    if run_in_ranks(session, item, overrides, sink):  # --gemmcheck-world-size: the test's ranks run it
        return True
    settings = overrides.settings
    if settings.processes <= 1 or is_child() or "gemmcheck" not in item.fixturenames:
        return False  # before the imports below: a plain session imports no search or judging here
    from ..errors import GemmcheckFailure, LaunchError
    from ..judging.conclude import conclude
    from .search_in_test import calls_search

    if calls_search(getattr(item, "function", None)):  # runs here, and spreads each of its probes itself
        return False
    devices = child_devices(settings)
    config = session.config
    try:
        children, test_failures = run_children(
            item.nodeid,
            settings,
            command=child_command(config, item.nodeid),
            invocation_dir=config.invocation_params.dir,
            devices=devices,
        )
    except ChildFailure as exc:
        raise GemmcheckFailure(f"gemmcheck: --gemmcheck-processes={settings.processes}: {exc}") from None
    failures = []
    for result in aggregate(children):
        result.nodeid = item.nodeid
        if settings.sanitize:
            import torch

            from ..case.sanitized import not_launched

            result.sanitize = not_launched(result, settings.sanitize) or sanitize_in_child(
                config, item.nodeid, settings, result.key, torch.device(result.device)
            )
        conclusion = conclude(result, settings, session.history.baseline_for)
        config.hook.pytest_gemmcheck_result(result=result)
        sink.append(result)
        if conclusion.failure is not None:
            failures.append(conclusion.failure)
    if failures:
        kind = LaunchError if any(isinstance(failure, LaunchError) for failure in failures) else GemmcheckFailure
        raise kind("\n".join(str(failure) for failure in failures + test_failures))
    if test_failures:  # the results are recorded; the test's own failure is still its outcome
        raise AssertionError(f"gemmcheck: --gemmcheck-processes={settings.processes}: " + "\n".join(test_failures))
    return True


def child_devices(settings: Settings) -> list[int | None]:
    """The GPUs children run on in turn (None: the child's default device)."""
    from ..config.devices import parse_devices

    devices: list[int | None] = [None]
    if settings.devices is not None:  # spread the children over the named (or all) GPUs
        named = parse_devices(settings.devices)
        devices = list(named) if named is not None else (list(range(_visible_gpus())) or [None])
    return devices


def _visible_gpus() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0
