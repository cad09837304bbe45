# Sourced by the benchmarks' shell scripts (gpu_run.sh, in_turn.sh):
#
#     plugin_entry_point PYTHON FOLDER
#
# A checkout is not installed: when no installed copy registers the plugin, a dist-info naming
# its entry points is made in FOLDER/site and put first on PYTHONPATH, so that every pytest
# started from here (pytester's subprocesses included) loads the plugin of the tree that comes
# first on PYTHONPATH.
plugin_entry_point() {
    local python=$1 folder=$2
    "$python" -c "
import sys
from importlib import metadata
sys.exit(0 if any(e.name == 'gemmcheck' for e in metadata.entry_points(group='pytest11')) else 1)" && return 0
    local info="$folder/site/pytest_gemmcheck_checkout-0.dist-info"
    mkdir -p "$info"
    printf 'Metadata-Version: 2.1\nName: pytest-gemmcheck-checkout\nVersion: 0\n' > "$info/METADATA"
    printf '[pytest11]\ngemmcheck = pytest_gemmcheck.plugin\n\n[console_scripts]\ngemmcheck = pytest_gemmcheck.cli:main\n' \
        > "$info/entry_points.txt"
    chmod a+rx "$folder" "$folder/site"  # some tests run sessions as an unprivileged user
    export PYTHONPATH="$folder/site${PYTHONPATH:+:$PYTHONPATH}"
}
