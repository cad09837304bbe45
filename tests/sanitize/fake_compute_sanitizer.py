"""A stand-in for compute-sanitizer that replays output recorded on an H200 (data/README.md).

Called as compute-sanitizer is (``--tool T --xml --save FILE [flags] CHILD...``), it takes what
to do from the environment:

* ``FAKE_SANITIZER_RECORDING=STEM``: replay ``data/STEM.*``: write ``STEM.xml`` to the --save
  path, print ``STEM.out`` and ``STEM.err``, exit with the recorded status. It refuses (exit 99)
  a command whose tool or flags are not the recording's, so that no test passes on output
  recorded for another command.
* ``FAKE_SANITIZER_MODE``: ``replay`` (the default); ``hang`` (start a grandchild that writes
  its pid to ``FAKE_SANITIZER_PIDFILE``, then both sleep); ``garbage`` (print and save bytes
  that are no report); ``truncate:N`` (save only the first N bytes of the recorded XML);
  ``no-save`` (replay, but save nothing); ``run-child`` (run CHILD as compute-sanitizer would,
  passing its output and exit status through, and save an empty report); ``run-child-then-replay``
  (run CHILD so, then replay the recording, which must be of the tool and racecheck report
  mode asked for: a case's whole sanitized launch, its report as recorded).
* ``FAKE_SANITIZER_RECORDING_<TOOL>=STEM``: the recording for that tool (upper case), before
  ``FAKE_SANITIZER_RECORDING``.
* ``FAKE_SANITIZER_CHILD_SAYS=LINE``: print LINE first, as the child would.
* ``FAKE_SANITIZER_LOG=PATH``: write the arguments and the child's environment there (JSON).

``--version`` prints the recorded ``compute-sanitizer --version``.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
EMPTY_REPORT = '<?xml version="1.0" encoding="utf-8"?>\n<ComputeSanitizerOutput/>\n'


def refuse(message: str) -> None:
    print(f"fake compute-sanitizer: {message}", file=sys.stderr)
    sys.exit(99)


def parse(argv: list[str]) -> tuple[dict, list[str], list[str]]:
    """Options with their values, the flags as given, and the child command."""
    options, flags, index = {}, [], 0
    takes_value = {
        "--tool",
        "--save",
        "--racecheck-report",
        "--print-limit",
        "--kernel-name-exclude",
        "--show-backtrace",
    }
    while index < len(argv) and argv[index].startswith("--"):
        name = argv[index]
        if name in takes_value:
            options.setdefault(name, []).append(argv[index + 1])
            if name not in ("--tool", "--save"):
                flags += [name, argv[index + 1]]
            index += 2
        elif name == "--xml":
            options[name] = True
            index += 1
        else:
            refuse(f"an option this stand-in does not know: {name}")
    return options, flags, argv[index:]


def main() -> None:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        sys.stdout.write((DATA / "version.txt").read_text())
        return
    options, flags, child = parse(argv)
    if log := os.environ.get("FAKE_SANITIZER_LOG"):
        Path(log).write_text(json.dumps({"argv": argv, "child": child, "environ": dict(os.environ)}))
    save = Path(options["--save"][0].replace("%%", "%")) if "--save" in options else None
    mode = os.environ.get("FAKE_SANITIZER_MODE", "replay")
    if says := os.environ.get("FAKE_SANITIZER_CHILD_SAYS"):
        print(says, flush=True)
    if mode == "hang":
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        Path(os.environ["FAKE_SANITIZER_PIDFILE"]).write_text(str(grandchild.pid))
        print("========= COMPUTE-SANITIZER", flush=True)
        time.sleep(3600)
    if mode == "garbage":
        sys.stdout.write("\x00\x1b[31m==== ??? \ufffd not a sanitizer line\n")
        save.write_bytes(b"\x00\xff<record><kind>Hazard</k")
        sys.exit(3)
    if mode == "run-child":
        print("========= COMPUTE-SANITIZER", flush=True)
        status = subprocess.run(child).returncode
        save.write_text(EMPTY_REPORT)
        print("========= ERROR SUMMARY: 0 errors", flush=True)
        sys.exit(status)
    tool = (options.get("--tool") or [""])[0]
    stem = os.environ.get(f"FAKE_SANITIZER_RECORDING_{tool.upper()}") or os.environ["FAKE_SANITIZER_RECORDING"]
    index = {entry["stem"]: entry for entry in json.loads((DATA / "index.json").read_text())["recordings"]}
    if stem not in index:
        refuse(f"no recording {stem!r}")
    recorded = index[stem]
    if options.get("--tool") != [recorded["tool"]]:
        refuse(f"{stem} was recorded with --tool {recorded['tool']}, asked for {options.get('--tool')}")
    if mode == "run-child-then-replay":

        def mode_of(given):
            return given[given.index("--racecheck-report") + 1] if "--racecheck-report" in given else None

        if mode_of(flags) != mode_of(recorded["flags"]):
            refuse(
                f"{stem} was recorded with --racecheck-report {mode_of(recorded['flags'])}, asked for {mode_of(flags)}"
            )
        if subprocess.run(child).returncode:
            refuse("the child failed")
    elif flags != recorded["flags"] or (recorded["xml"] and not options.get("--xml")):
        refuse(f"{stem} was recorded with flags {recorded['flags']}, asked for {flags}")
    xml = DATA / f"{stem}.xml"
    if save is not None and xml.exists() and mode != "no-save":
        data = xml.read_bytes()
        if mode.startswith("truncate:"):
            data = data[: int(mode.split(":", 1)[1])]
        save.write_bytes(data)
    sys.stdout.write((DATA / f"{stem}.out").read_text())
    sys.stderr.write((DATA / f"{stem}.err").read_text())
    sys.exit(recorded["rc"])


if __name__ == "__main__":
    main()
