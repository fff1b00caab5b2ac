#!/usr/bin/env bash
# A session's device call as one command, whichever card the device tool hands out (a call asked for
# an H200 may run on an H100): on an H200, scripts/device-ledger.sh (issue 10's H200 measurements);
# on any other card, scripts/device-check.sh with the benches off (the GPU tests, verify, drift,
# ragged, the example and the four sanitizers: main's binary checked on whatever card came).
#   scripts/device-session.sh BUILD_DIR        (carry BUILD_DIR from scripts/device-carry.sh, and
#                                               .anchors/fi, .anchors/fmla for the ledger's bar)
# Environment: DEVICE_SESSION_JOB=auto|ledger|check (default auto: by the card, as above),
# DEVICE_SESSION_BUDGET_S (the job's budget, LEDGER_BUDGET_S or MLACHECK_DEVICE_BUDGET_S; default
# 450: a device command may run 600 s, and the rest is room for the start and the transfers), OUT
# (default device-session-out). What comes back: OUT/summary.txt and one archive (ledger.tgz, or
# device-check.sh's packed all.tgz), within the device tool's 8 files.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${1:?usage: scripts/device-session.sh BUILD_DIR}
job=${DEVICE_SESSION_JOB:-auto}
budget=${DEVICE_SESSION_BUDGET_S:-450}
out=${OUT:-device-session-out}
if [[ $job == auto ]]; then
  card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
  if [[ $card == *H200* ]]; then job=ledger; else job=check; fi
  echo "device-session.sh: the card is '$card': the $job job"
fi
case $job in
  ledger) LEDGER_BUDGET_S=$budget OUT=$out exec scripts/device-ledger.sh "$build" ;;
  check) MLACHECK_DEVICE_BENCH=0 MLACHECK_DEVICE_PACK=1 MLACHECK_DEVICE_BUDGET_S=$budget OUT=$out \
    exec scripts/device-check.sh "$build" ;;
  *) echo "device-session.sh: DEVICE_SESSION_JOB is '$job', not auto, ledger or check" >&2; exit 2 ;;
esac
