#!/usr/bin/env bash
# Install what the HTML report's browser test needs: Debian's chromium (never a downloaded
# browser build: no `playwright install`) and Playwright for Python (into the active Python
# environment; its driver ships in the wheel). Idempotent: what is already there is kept. Never
# fails the caller: when something cannot be installed it says so on one line and exits 0, and
# the browser tests skip with their reason.
set -u

PYTHON="${PYTHON:-python}"
if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "${VIRTUAL_ENV}/bin/python" ]; then
    PYTHON="${VIRTUAL_ENV}/bin/python"
fi

say() { echo "install-browser: $*"; }

# by its distribution, as install-flydsl.sh does: a folder named playwright is not the package
if "$PYTHON" -c "import importlib.metadata as m; m.distribution('playwright')" 2>/dev/null; then
    say "playwright $("$PYTHON" -c 'import importlib.metadata as m; print(m.version("playwright"))') already installed"
elif "$PYTHON" -m pip install --quiet playwright; then
    say "installed playwright $("$PYTHON" -c 'import importlib.metadata as m; print(m.version("playwright"))')"
else
    say "could not install playwright with pip; the report's browser tests will skip"
fi

if [ -x /usr/bin/chromium ]; then
    say "chromium found: /usr/bin/chromium"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    say "no /usr/bin/chromium and no apt-get to install it; the report's browser tests will skip"
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
        say "no /usr/bin/chromium and not root to install it; the report's browser tests will skip"
        exit 0
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null 2>&1 || say "apt-get update failed; trying the package lists there are"
# without its recommends (udev, upower, a notification daemon): a headless browser needs only
# the package and a font for the page's text
if $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null 2>&1 \
    && [ -x /usr/bin/chromium ]; then
    say "installed chromium: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
else
    say "could not install chromium with apt-get; the report's browser tests will skip"
fi
exit 0
