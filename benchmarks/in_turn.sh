#!/usr/bin/env bash
# One benchmark run in two trees in turn, on one machine: the numbers before and after a change
# side by side, the machine's load moving both alike. From the repository root:
#
#     bash benchmarks/in_turn.sh OLD [NEW] -- python -m benchmarks.hand_loop cases --shapes 256 --repeat 12
#
# OLD and NEW are commits (NEW left out: the working tree as it is), or folders holding such a
# tree already taken out, named by their file COMMIT where they have one (for a copy of the
# checkout whose .git lacks the commit, as a GPU machine's may):
#
#     mkdir -p .bench/old && git archive REV pytest_gemmcheck benchmarks gemmcheck_dev | tar -x -C .bench/old
#     git rev-parse --short REV > .bench/old/COMMIT
#
# Each commit's pytest_gemmcheck, benchmarks and gemmcheck_dev are taken out (git archive) into a
# folder of their own, and the command runs there with that folder first on PYTHONPATH: old, new, old,
# new, ... IN_TURN_ROUNDS times each (default 3). Everything goes to stdout, each run after a
# line "=== old|new REV, round N". The rounds are separate processes: a benchmark's own rounds
# within each run and its minimum still apply.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
usage() {
    echo "usage: bash benchmarks/in_turn.sh OLD [NEW] -- COMMAND..." >&2
    exit 2
}
{ [ $# -ge 3 ] && [ "$1" != "--" ]; } || usage
OLD=$1
shift
NEW=
if [ "$1" != "--" ]; then
    NEW=$1
    shift
fi
{ [ "${1:-}" = "--" ] && [ $# -ge 2 ]; } || usage
shift
if [[ "$1" == */* && "$1" != /* ]]; then  # a program named from the root (.venv/bin/python): runs from each tree
    set -- "$ROOT/$1" "${@:2}"
fi
PY=${PYTHON:-$(command -v python3 || command -v python)}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

tree_of() {  # REV FOLDER: the commit's modules taken out into FOLDER
    if [ -d "$1/pytest_gemmcheck" ]; then  # taken out already
        ln -s "$(cd "$1" && pwd)" "$2"
        return
    fi
    mkdir -p "$2"
    git -C "$ROOT" archive "$1" pytest_gemmcheck benchmarks gemmcheck_dev | tar -x -C "$2" || {
        echo "in_turn.sh: cannot take $1 out of $ROOT (git archive)" >&2
        exit 2
    }
}
name_of() {  # REV: its short commit, or a folder's COMMIT file (else the folder)
    if [ -d "$1/pytest_gemmcheck" ]; then
        cat "$1/COMMIT" 2>/dev/null || echo "$1"
    else
        git -C "$ROOT" rev-parse --short "$1"
    fi
}
tree_of "$OLD" "$WORK/old"
OLD=$(name_of "$OLD")
if [ -n "$NEW" ]; then
    tree_of "$NEW" "$WORK/new"
    NEW_DIR=$WORK/new
    NEW=$(name_of "$NEW")
    NEW_NAMED=$NEW
else
    NEW_DIR=$ROOT
    NEW="the working tree"
    NEW_NAMED=${GEMMCHECK_COMMIT:-}  # the checkout's own state, unless named
fi

. benchmarks/entry_point.sh
plugin_entry_point "$PY" "$WORK"

status=0
for round in $(seq "${IN_TURN_ROUNDS:-3}"); do
    for side in old new; do
        # a taken-out tree is no checkout: the results' headers name its commit by GEMMCHECK_COMMIT
        if [ $side = old ]; then dir=$WORK/old rev=$OLD named=$OLD; else dir=$NEW_DIR rev=$NEW named=$NEW_NAMED; fi
        echo "=== $side $rev, round $round ($(date -u +%H:%M:%S)): $*"
        (cd "$dir" && PYTHONPATH="$dir${PYTHONPATH:+:$PYTHONPATH}" GEMMCHECK_COMMIT="$named" "$@") || status=$?
    done
done
exit $status
