#!/usr/bin/env bash
# Start the local PostgreSQL server the fleet tests use (127.0.0.1:5432) when it is installed
# and not running. Never fails the caller: without a server those tests skip with their reason
# (or fail, under GEMMCHECK_REQUIRE_PG=1, as in CI).
set -u

say() { echo "start-postgres: $*"; }

if ! command -v pg_isready >/dev/null 2>&1; then
    say "no PostgreSQL client here; the PostgreSQL tests will skip"
    exit 0
fi
if pg_isready -q -h 127.0.0.1 -p 5432; then
    exit 0
fi
if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start >/dev/null 2>&1 || true
    for _ in $(seq 1 30); do
        pg_isready -q -h 127.0.0.1 -p 5432 && { say "started"; exit 0; }
        sleep 1
    done
fi
say "no server on 127.0.0.1:5432; the PostgreSQL tests will skip"
exit 0
