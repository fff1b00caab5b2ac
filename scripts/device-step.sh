# shellcheck shell=bash
# The step runner of the device scripts (device-check.sh, device-ledger.sh), sourced: a device call
# has one time limit, so each step gets at most what is left of the script's budget.
#   step NAME CAP_SECONDS COMMAND...
# runs COMMAND with its output in $step_dir/NAME.log, limited to CAP_SECONDS or what is left of
# $step_budget seconds (counted by bash's SECONDS), whichever is less, and skips it, saying so, when
# less than 20 s are left; appends each step's exit code and time to $step_summary, prints the log's
# last $step_tail lines (0: none) and sets step_status=1 when a step fails.
# shellcheck disable=SC2154,SC2034  # step_budget, step_dir, step_summary, step_tail are the caller's; step_status is read by it
step_status=0
step() {
  local name=$1 cap=$2
  shift 2
  local left=$((step_budget - SECONDS))
  local limit=$((cap < left ? cap : left))
  if ((limit < 20)); then
    echo "== $name: skipped (${left} s of the budget left)" | tee -a "$step_summary"
    return
  fi
  echo "== $name (limit ${limit} s): $*"
  local start=$SECONDS
  timeout --signal=INT --kill-after=10 "$limit" "$@" > "$step_dir/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc, $((SECONDS - start)) s" | tee -a "$step_summary"
  ((step_tail > 0)) && tail -n "$step_tail" "$step_dir/$name.log"
  ((rc == 0)) || step_status=1
}
