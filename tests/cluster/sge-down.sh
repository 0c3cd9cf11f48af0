#!/usr/bin/env bash
# sge-down.sh : tear down what sge-up.sh made.  Safe to run at any time, any
# number of times: deletes every job, removes queue hh.q and parallel
# environment mpi, stops sge_execd and sge_qmaster, and checks that no Grid
# Engine daemon or job process (sge_shepherd) is left.  The global settings
# (min_uid/min_gid 0, 1 s scheduler interval) stay in the spool database for
# the next sge-up.sh.
set -euo pipefail
HH_SCRIPT=sge-down
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
hh_require_root
hh_lock "$@"

export SGE_ROOT=/var/lib/gridengine SGE_CELL=default
QSPOOL=/var/spool/gridengine/qmaster
SGE_STATE=/run/hh-sge

if hh_pidfile_alive "$QSPOOL/qmaster.pid" >/dev/null && timeout 10 qconf -sh >/dev/null 2>&1; then
  timeout 20 qdel -f -u '*' >/dev/null 2>&1 || true
  for i in $(seq 50); do
    [ -z "$(timeout 5 qstat -u '*' 2>/dev/null)" ] && break
    sleep 0.2
  done
  timeout 10 qconf -dq hh.q >/dev/null 2>&1 || true
  timeout 10 qconf -dp mpi >/dev/null 2>&1 || true
fi
for f in /var/spool/gridengine/execd/*/execd.pid; do
  p=$(hh_pidfile_alive "$f") && hh_kill_pids "$p"
done
p=$(hh_pidfile_alive "$QSPOOL/qmaster.pid") && hh_kill_pids "$p"
# job processes the execd left (a shepherd and its job outlive the execd by design)
tree() {
  local c
  echo "$1"
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done
}
for d in /proc/[0-9]*; do
  if [ "$(cat "$d/comm" 2>/dev/null)" = sge_shepherd ]; then
    # shellcheck disable=SC2046
    hh_kill_pids $(tree "${d#/proc/}")
  fi
done
rm -rf "$SGE_STATE"
left=$(hh_live_procs 'sge_qmaster|sge_execd|sge_shepherd')
[ -z "$left" ] || hh_fail "left behind:$left"
echo "sge-down: OK"
