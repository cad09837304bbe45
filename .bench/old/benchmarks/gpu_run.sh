#!/usr/bin/env bash
# Everything GPU-related, in one call on a GPU machine, from the repository root:
#
#     OUT=/some/folder bash benchmarks/gpu_run.sh
#
# Writes two files to $OUT (default benchmarks/out): gpu_run.log (every part's output, after a
# header of machine, GPU, commit, date and command; kept as benchmarks/results/<machine>/
# DATE-TOPIC.log) and gpu_results.json (their numbers, one key per part). Each part runs on its
# own, under its own time limit, and a failing part is logged and skipped. The whole run is sized
# for about five minutes on one H200 and never runs past GPU_RUN_BUDGET_S (default 540 s): a part
# gets at most what is left of it, and a part with too little left is skipped and logged.
#
# Parts, in order:
#   environment   versions and the GPU's identity
#   digests       case.inputs() on the GPU = on the CPU, byte for byte, every quant mode
#   stress        each stressor alone and beside launches (bandwidth, slowdown, clean stop)
#   examples      the GPU example suites (examples/gpu) idle, then under each stressor
#   racy-sweep    the cp.async tail GEMM: variants x stress x settings, bad-launch counts, and
#                 >= 1000 launches of the fixed twin idle and under each stressor
#   (what a checked launch costs, the views of python -m benchmarks.launch_cost:)
#   overhead      --gemmcheck-repeat=100 on the fp8 GEMM at 16384x7168x2048 vs bare launches, repeats
#                 checked by checksum (the default) and every launch in full, interleaved (view ratio)
#   overhead-shapes  a checked launch against a bare one, torch.matmul bf16 256^3 ... 8192^3 and ptpc
#                 torch._scaled_mm 16384x7168x2048 at repeat=100: bare, checked, ratio, host us per launch
#                 (view shapes)
#   breakdown     a launch's phases on the GPU against case.run's time (view breakdown)
#   host-overhead the host's share, piece by piece, and a profile of case.run (view host)
#   host-profile-1024  the same profile of 200 launches at bf16 1024^3, where the host bounds a launch
#   host-floor    the fewest host calls a checked launch could make, against a bare launch (view floor)
#   loop-breakdown  the launch loop's host time per launch, step by step, and what a run pays once (view loop)
#   gpu-busy      how busy a checked run of 100 keeps the GPU at ptpc and 1024^3, against bare launches
#                 (view gpu-busy)
#   run-costs     a checked run's cost once per run and per launch, at 256^3, 1024^3 and ptpc (view run-costs);
#                 run-profile-ptpc: the same with a profile of ptpc's case.run; run-profile-short: a profile
#                 of a run of 3 launches at 1024^3, what is paid once per run; run-profile-1024: of
#                 runs of 100 launches there
#   (and the rest:)
#   two-gpus      launches per second with pytest-xdist -n 2 vs -n 1 (only with >= 2 GPUs;
#                 gemmcheck_dev/launch_rate_cases.py)
#   accuracy      how far correct GPU GEMMs stray from the reference (benchmarks.gpu_accuracy)
#   check-speed   the fused check against copy bandwidth and assert_close (benchmarks.check_speed)
#   guards        what a launch may not touch (examples/gpu/test_gpu_guards.py: a cp.async GEMM
#                 writing one row past out, one scribbling on b), the guards' cost against the
#                 fused check's (benchmarks.guard_cost), and the plugin's reliability tests
#   repeat-tests  repeated launches checked by checksum against full checks of the same bits,
#                 launch by launch, on the racy cp.async GEMM and its fixed twin (tests/checking/triton/test_repeat.py)
#   pipeline-tests  the loop queued ahead against the loop that checks every launch in full, launch by
#                 launch, on the GPU (tests/launch/test_pipeline.py), the reference's protection and the
#                 deadline beside pytest-timeout (tests/reliability/test_reference.py, test_deadline.py)
#   fused-check-tests, recorded-examples, dashboard, stack
#                 the fused check's tests on the GPU; a recorded run of the GPU examples
#   sanitize      the GPU sanitizer suite (examples/gpu/test_gpu_sanitize.py), its results as JSON
#   search        gemmcheck.search over block-wise torch._scaled_mm: the K region at 4096x7168, the
#                 smallest failing m x n x k, probes and seconds, and a sweep of every K to check
#                 them against (benchmarks.search_scaled_mm; needs hypothesis)
#   case-tests    the seeded inputs' Triton generator on the GPU against numpy's bytes on the CPU
#                 (tests/case/test_rng.py); a kernel returning its own output passes with the case's
#                 device given as "cuda", "cuda:0" or left out (tests/case/test_case.py)
#   hand-loop     a whole case and a suite of distinct shapes against the protocol written by hand
#                 (benchmarks.hand_loop gpu), its numbers in gpu_results.json
#   suite-profile the suite of 200 again, then each plugin arm under cProfile: where a suite's
#                 time goes beside the cases' launches (their stats kept in $OUT, for pstats)
#   case-cost     a whole case at repeat 12, piece by piece, at 256^3 and 1024^3 (benchmarks.case_cost
#                 pieces), then case-profile: a cProfile of ten such cases at 256^3, by inclusive time,
#                 case-ops: torch.profiler's ops and kernels of five such cases at 256^3 and 1024^3, and
#                 case-hot: a cProfile of twenty at 1024^3 by each function's own time
#   collective-tests  a collective case's ranks sharing the one GPU over gloo (tests/collective/test_gpu_ranks.py)
#   hang          last, as it takes its process's GPU with it: a kernel that never ends, failed
#                 as hung by --gemmcheck-launch-timeout=5, the GPU's next case skipped, the
#                 process ended (a stack dump at 30 s if it is stuck anywhere)
#
# GPU_RUN_PARTS="accuracy check-speed" runs only the parts whose names start with those words.
#
# The plugin does not need to be installed: the repository root goes first on PYTHONPATH (the
# benchmarks run as python -m benchmarks.NAME, their helpers come from gemmcheck_dev/), and when no
# installed copy registers the plugin a dist-info of its entry points goes beside it. No history
# database is written (--gemmcheck-no-record), so SQLAlchemy is not needed.

set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/benchmarks/out}
mkdir -p "$OUT"
LOG=$OUT/gpu_run.log
JSON=$OUT/gpu_results.json
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
: > "$LOG"
rm -f "$JSON"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-$(command -v python3 || command -v python)}
STARTED=$(date +%s)
BUDGET=${GPU_RUN_BUDGET_S:-540}

log() { echo "[$(date +%H:%M:%S) +$(( $(date +%s) - STARTED ))s] $*" | tee -a "$LOG"; }

# run_part NAME SECONDS COMMAND...: run one part under a time limit, everything to the log
left() { echo $(( BUDGET - ($(date +%s) - STARTED) )); }
# GPU_RUN_PARTS="examples overhead ...": run only parts whose name starts with one of these words
wanted() {
    [ -z "${GPU_RUN_PARTS:-}" ] && return 0
    local word
    for word in $GPU_RUN_PARTS; do
        case "$1" in "$word"*) return 0 ;; esac
    done
    return 1
}
run_part() {
    local name=$1 limit=$2
    shift 2
    wanted "$name" || return 0
    local remaining
    remaining=$(left)
    if [ "$remaining" -lt 20 ]; then
        log "=== $name: SKIPPED, ${remaining}s of the ${BUDGET}s budget left"
        return 0
    fi
    [ "$limit" -gt $(( remaining - 5 )) ] && limit=$(( remaining - 5 ))
    log "=== $name (limit ${limit}s): $*"
    local begin rc took
    begin=$(date +%s)
    timeout --kill-after=5 "$limit" "$@" >> "$LOG" 2>&1
    rc=$?
    took=$(( $(date +%s) - begin ))
    if [ $rc -eq 0 ]; then
        log "=== $name: ok in ${took}s"
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        log "=== $name: TIMED OUT after ${took}s (rc $rc)"
    else
        log "=== $name: FAILED with rc $rc after ${took}s"
    fi
    return 0
}

MEASURE=("$PY" -m benchmarks.gpu_measure --json "$JSON")
COST=("$PY" -m benchmarks.launch_cost)

COMMAND="${GPU_RUN_PARTS:+GPU_RUN_PARTS=\"$GPU_RUN_PARTS\" }bash benchmarks/gpu_run.sh"
"$PY" -m gemmcheck_dev.results "$COMMAND" >> "$LOG" 2>&1  # machine, GPU, commit, date and command
log "gpu_run.sh in $ROOT, output to $OUT"
nvidia-smi >> "$LOG" 2>&1 || rocm-smi >> "$LOG" 2>&1 || log "no nvidia-smi or rocm-smi"
GPUS=$("$PY" -c "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)" 2>>"$LOG")
GPUS=${GPUS:-0}
log "visible GPUs: $GPUS"

# The plugin's entry point, where no installed copy registers it (entry_point.sh)
. benchmarks/entry_point.sh
plugin_entry_point "$PY" "$WORK" 2>>"$LOG"
COMMON=(-p no:cacheprovider -rA -q --gemmcheck-no-record)

run_part environment 40 "${MEASURE[@]}" environment
run_part digests 40 "${MEASURE[@]}" digests
run_part stress 40 "${MEASURE[@]}" stress

for kind in none copy compute; do
    run_part "examples stress=$kind" 90 \
        "$PY" -m pytest examples/gpu "${COMMON[@]}" --gemmcheck-stress="$kind" --junitxml="$WORK/examples_$kind.xml"
done
run_part "examples summary" 20 "${MEASURE[@]}" junit-summary "$WORK"/examples_none.xml "$WORK"/examples_copy.xml "$WORK"/examples_compute.xml

sweep_budget=$(( $(left) - 90 ))  # keeps a minute and a half for the overhead part
[ $sweep_budget -gt 100 ] && sweep_budget=100
[ $sweep_budget -lt 0 ] && sweep_budget=0
run_part racy-sweep $(( sweep_budget + 40 )) "${MEASURE[@]}" racy-sweep --budget-s "$sweep_budget"
run_part overhead 75 "${COST[@]}" ratio --json "$JSON"
run_part overhead-shapes 240 "${COST[@]}" shapes
run_part breakdown 90 "${COST[@]}" breakdown
run_part host-overhead 90 "${COST[@]}" host
run_part host-profile-1024 90 "${COST[@]}" host --shape 1024x1024x1024 --launches 200 --profile-rows 50
run_part host-floor 60 "${COST[@]}" floor
run_part loop-breakdown 60 "${COST[@]}" loop
run_part gpu-busy 60 "${COST[@]}" gpu-busy ptpc
run_part "gpu-busy 1024" 40 "${COST[@]}" gpu-busy 1024
run_part run-costs 120 "${COST[@]}" run-costs --shapes 256,1024,ptpc
run_part run-profile-ptpc 60 "${COST[@]}" run-costs --shapes ptpc --rounds 1 --profile-rows 45
run_part run-profile-short 60 "${COST[@]}" run-costs --shapes 1024 --repeat 3 --rounds 3 --profile-rows 60 \
    --profile-runs 20
run_part run-profile-1024 60 "${COST[@]}" run-costs --shapes 1024 --rounds 1 --profile-rows 70 --profile-runs 5

if [ "$GPUS" -ge 2 ]; then
    for workers in 1 2; do
        rm -f "$WORK/n$workers.jsonl"
        run_part "two-gpus -n $workers" 120 env GEMMCHECK_THROUGHPUT_LOG="$WORK/n$workers.jsonl" \
            "$PY" -m pytest gemmcheck_dev/launch_rate_cases.py "${COMMON[@]}" --gemmcheck-devices=0,1 -n "$workers" \
            --gemmcheck-repeat=50
    done
    run_part "two-gpus summary" 20 "${MEASURE[@]}" throughput-summary "$WORK/n1.jsonl" "$WORK/n2.jsonl"
else
    log "=== two-gpus: skipped ($GPUS GPU visible; needs 2)"
fi

run_part guards 90 "$PY" -m pytest examples/gpu/test_gpu_guards.py "${COMMON[@]}"
run_part guard-cost 60 "$PY" -m benchmarks.guard_cost --sweep
if "$PY" -c "import sqlalchemy, alembic" 2>>"$LOG"; then
    run_part guard-tests 150 "$PY" -m pytest tests/reliability -q -p no:cacheprovider -x -n 4
fi

run_part accuracy 90 "$PY" -m benchmarks.gpu_accuracy --json "$OUT/gpu_accuracy.json"
run_part check-speed 90 "$PY" -m benchmarks.check_speed
run_part check-speed-sweep 100 "$PY" -m benchmarks.check_speed --sweep
# the fused check's equality tests on real atomics and many programs, then a recorded run of the
# GPU examples (needs SQLAlchemy and Alembic: carried as wheels) and its dashboard
run_part repeat-tests 120 "$PY" -m pytest tests/checking/triton/test_repeat.py -q -p no:cacheprovider -x
run_part pipeline-tests 240 "$PY" -m pytest tests/launch/test_pipeline.py tests/reliability/test_reference.py \
    tests/reliability/test_deadline.py -q -p no:cacheprovider
run_part fused-check-tests 150 "$PY" -m pytest tests/checking/triton/test_fused_check.py tests/checking/triton/test_fused_case.py -q -p no:cacheprovider -x
if "$PY" -c "import sqlalchemy, alembic" 2>>"$LOG"; then
    run_part recorded-examples 60 "$PY" -m pytest examples/gpu/test_gpu_torch.py -q -p no:cacheprovider \
        --gemmcheck-repeat=5 --gemmcheck-db="$WORK/history.db"
    run_part dashboard 20 "$PY" -m pytest_gemmcheck.cli --db "$WORK/history.db" history
    run_part stack 20 "$PY" -c "import sqlite3; c = sqlite3.connect('$WORK/history.db'); print(c.execute('select * from stack').fetchall()); print(c.execute('select distinct host, device, device_uuid from launch').fetchall())"
    # a case's launches over 4 fresh processes (and, with 2 GPUs, over both), one recorded result
    run_part processes 90 "$PY" -m pytest examples/gpu/test_gpu_torch.py -q -p no:cacheprovider \
        -k "ptpc and 2048" --gemmcheck-repeat=16 --gemmcheck-processes=4 --gemmcheck-devices=all --gemmcheck-db="$WORK/proc.db"
    run_part processes-rows 20 "$PY" -c "import sqlite3; c = sqlite3.connect('$WORK/proc.db'); print('results, launches, processes, gpus per result:', c.execute('select r.id, count(*), count(distinct l.pid), count(distinct l.device_uuid) from launch l join result r on r.id = l.result_id group by r.id').fetchall())"
    if [ "$GPUS" -ge 2 ]; then
        run_part xdist-devices 90 "$PY" -m pytest examples/gpu/test_gpu_torch.py -q -p no:cacheprovider \
            -n 2 --gemmcheck-devices=0,1 --gemmcheck-repeat=5 --gemmcheck-db="$WORK/xdist.db"
        run_part xdist-devices-rows 20 "$PY" -c "import sqlite3; c = sqlite3.connect('$WORK/xdist.db'); print('runs:', c.execute('select count(*) from run').fetchall(), 'launches per worker pid and GPU:', c.execute('select pid, device, device_uuid, count(*) from launch group by pid, device, device_uuid').fetchall())"
    fi
fi

# one sanitized launch per case and tool (docs/sanitize.md): the racy tail GEMM, whose 12 launches
# pass idle, fails by racecheck; its fixed twin passes; a write past out fails by memcheck
run_part sanitize 240 "$PY" -m pytest examples/gpu/test_gpu_sanitize.py "${COMMON[@]}" --gemmcheck-json="$OUT/sanitize.json"

if "$PY" -c "import hypothesis" 2>>"$LOG"; then
    run_part search 420 "$PY" -m benchmarks.search_scaled_mm --json "$OUT/search_scaled_mm.json" --budget 150
elif wanted search; then
    log "=== search: skipped (no hypothesis)"
fi

run_part case-tests 90 "$PY" -m pytest tests/case/test_rng.py tests/case/test_case.py -q -p no:cacheprovider -rs
run_part hand-loop 150 "$PY" -m benchmarks.hand_loop gpu --budget-s 120 --json "$JSON"
run_part suite-profile 200 "$PY" -m benchmarks.hand_loop suite --count 200 --rounds 3 --profile-rows 40 \
    --profile-dump "$OUT"
run_part case-cost 120 "$PY" -m benchmarks.case_cost pieces --shapes 256,1024 --cases 5
run_part case-profile 120 "$PY" -m benchmarks.case_cost profile --shapes 256 --cases 10 --sort cumulative --rows 90
run_part case-ops 90 "$PY" -m benchmarks.case_cost profile --shapes 256,1024 --cases 5 --torch-ops --rows 60
run_part case-hot 90 "$PY" -m benchmarks.case_cost profile --shapes 1024 --cases 20 --rows 70
run_part collective-tests 120 "$PY" -m pytest tests/collective/test_gpu_ranks.py -q -p no:cacheprovider -rs

run_part hang 60 env GEMMCHECK_EXAMPLE_HANG=1 "$PY" -X faulthandler -m pytest examples/gpu/test_gpu_guards.py \
    "${COMMON[@]}" -s -k "spin or lost" --gemmcheck-launch-timeout=5 -o faulthandler_timeout=30

log "done in $(( $(date +%s) - STARTED ))s; numbers in $JSON"
