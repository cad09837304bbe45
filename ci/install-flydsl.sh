#!/usr/bin/env bash
# Install what compiling FlyDSL kernels for gfx950 without a GPU needs: the flydsl wheel (into the
# active Python environment) and an ld.lld 18+ (FlyDSL's code objects are v6). Idempotent: what is
# already there is kept. Never fails the caller: when something cannot be installed it says so
# on one line and exits 0, and the tests that need it skip with their reason.
set -u

PYTHON="${PYTHON:-python}"
if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "${VIRTUAL_ENV}/bin/python" ]; then
    PYTHON="${VIRTUAL_ENV}/bin/python"
fi

say() { echo "install-flydsl: $*"; }

# by its distribution: find_spec would take a folder named flydsl on sys.path for the package
if "$PYTHON" -c "import importlib.metadata as m; m.distribution('flydsl')" 2>/dev/null; then
    say "flydsl $("$PYTHON" -c 'import importlib.metadata as m; print(m.version("flydsl"))') already installed"
elif "$PYTHON" -m pip install --quiet flydsl; then
    say "installed flydsl $("$PYTHON" -c 'import importlib.metadata as m; print(m.version("flydsl"))')"
else
    say "could not install flydsl with pip; FlyDSL compile tests will skip"
fi

# The same places the compile pipeline looks (pytest_gemmcheck/flydsl/compile.py: find_linker).
have_linker() {
    local candidate major
    for candidate in "${GEMMCHECK_LD_LLD:-}" "${ROCM_PATH:+$ROCM_PATH/llvm/bin/ld.lld}" /opt/rocm/llvm/bin/ld.lld \
        $(ls -d /usr/lib/llvm-*/bin/ld.lld 2>/dev/null | sort -t- -k2 -n -r) "$(command -v ld.lld 2>/dev/null)"; do
        [ -n "$candidate" ] && [ -x "$candidate" ] || continue
        major="$("$candidate" --version 2>/dev/null | sed -n 's/.*LLD \([0-9][0-9]*\).*/\1/p' | head -n1)"
        if [ -n "$major" ] && [ "$major" -ge 18 ]; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if linker="$(have_linker)"; then
    say "ld.lld found: $linker"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    say "no ld.lld 18+ and no apt-get to install one; FlyDSL compile tests will skip"
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
        say "no ld.lld 18+ and not root to install one; FlyDSL compile tests will skip"
        exit 0
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null 2>&1 || say "apt-get update failed; trying the package lists there are"
for package in lld-19 lld-22 lld-18 lld-20 lld-21; do
    if apt-cache show "$package" >/dev/null 2>&1 && $SUDO apt-get install -y -qq "$package" >/dev/null 2>&1; then
        if linker="$(have_linker)"; then
            say "installed $package: $linker"
            exit 0
        fi
    fi
done
say "could not install an ld.lld 18+ (tried lld-19, lld-22, lld-18, lld-20, lld-21); FlyDSL compile tests will skip"
exit 0
