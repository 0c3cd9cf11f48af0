#!/usr/bin/env bash
# sge-up.sh : bring up a real one-node Grid Engine (Debian's gridengine-master,
# -exec and -client 8.1.9) on this machine: qmaster + execd, queue hh.q on this
# host, parallel environment "mpi" (the default sge.pe; control_slaves TRUE for
# qrsh -inherit), root may run jobs, the scheduler runs every second.
# Idempotent: when everything is up it only re-verifies with a one-slot job.
#
# Facts this script encodes (learned setting it up here):
#  * act_qmaster must hold this host's name; when the name resolves to 127.0.0.1
#    whose first name is "localhost", Grid Engine sees "localhost" and refuses
#    the client ("access denied"): common/host_aliases gets "HOST localhost".
#  * root jobs need min_uid/min_gid 0 in the global configuration, and an
#    sge_execd restart to take effect.
#  * the default scheduler interval is 15 s; 1 s here.
#  * the queue template's load threshold (np_load_avg=1.75) puts a busy
#    machine's queue in alarm state: NONE here.
set -euo pipefail
HH_SCRIPT=sge-up
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
hh_require_root
hh_lock "$@"

export SGE_ROOT=/var/lib/gridengine SGE_CELL=default
COMMON=$SGE_ROOT/$SGE_CELL/common
QSPOOL=/var/spool/gridengine/qmaster
SGE_STATE=/run/hh-sge
RUNLOG=$SGE_STATE/sge-up.log
PE=mpi
QUEUE=hh.q
HOST=$(hostname)

hh_apt_ensure gridengine-master gridengine-exec gridengine-client
mkdir -p "$SGE_STATE" /var/run/gridengine
chown sgeadmin:sgeadmin /var/run/gridengine
: >"$RUNLOG"
fail() { hh_fail "$1" "$RUNLOG" "$QSPOOL/messages" /var/spool/gridengine/execd/*/messages; }

# ---------------------------------------------------------------- names
[ "$(cat "$COMMON/act_qmaster" 2>/dev/null)" = "$HOST" ] || echo "$HOST" >"$COMMON/act_qmaster"
addr=$(getent ahostsv4 "$HOST" | awk 'NR == 1 { print $1 }')
if [[ $addr == 127.* ]] && [ "$(getent hosts "$addr" | awk '{ print $2; exit }')" = localhost ]; then
  grep -qx "$HOST localhost" "$COMMON/host_aliases" 2>/dev/null || echo "$HOST localhost" >>"$COMMON/host_aliases"
fi

# ---------------------------------------------------------------- qmaster
if ! hh_pidfile_alive "$QSPOOL/qmaster.pid" >/dev/null; then
  (cd / && /usr/sbin/sge_qmaster) >>"$RUNLOG" 2>&1 || fail "sge_qmaster did not start"
  : >"$SGE_STATE/qmaster.ours"
fi
for i in $(seq 100); do
  qconf -sh >/dev/null 2>&1 && break
  sleep 0.1
done
qconf -sh 2>/dev/null | grep -qx "$HOST" || qconf -ah "$HOST" >>"$RUNLOG" 2>&1 || fail "qmaster does not answer qconf"
qconf -ss 2>/dev/null | grep -qx "$HOST" || qconf -as "$HOST" >>"$RUNLOG" 2>&1 || fail "qconf -as $HOST failed"

# ---------------------------------------------------------------- configuration
cfg=$SGE_STATE/cfg
mkdir -p "$cfg"
restart_execd=""
qconf -sconf global >"$cfg/global"
if ! grep -Eq '^min_uid +0$' "$cfg/global" || ! grep -Eq '^min_gid +0$' "$cfg/global"; then
  sed -i -E 's/^(min_uid|min_gid)( +).*/\1\20/' "$cfg/global"
  (cd "$cfg" && qconf -Mconf global) >>"$RUNLOG" 2>&1 || fail "qconf -Mconf global failed"
  restart_execd=1
fi
qconf -ssconf >"$cfg/sched"
if ! grep -Eq '^schedule_interval +0:0:1$' "$cfg/sched"; then
  sed -i -E 's/^(schedule_interval +).*/\10:0:1/' "$cfg/sched"
  qconf -Msconf "$cfg/sched" >>"$RUNLOG" 2>&1 || fail "qconf -Msconf failed"
fi
if ! qconf -sp "$PE" >/dev/null 2>&1; then
  cat >"$cfg/$PE" <<EOF
pe_name            $PE
slots              9999
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    \$fill_up
control_slaves     TRUE
job_is_first_task  FALSE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
EOF
  qconf -Ap "$cfg/$PE" >>"$RUNLOG" 2>&1 || fail "qconf -Ap $PE failed"
fi

# ---------------------------------------------------------------- execd
execd_pid() { hh_pidfile_alive /var/spool/gridengine/execd/*/execd.pid 2>/dev/null; }
if [ -n "$restart_execd" ] && p=$(execd_pid); then
  hh_kill_pids "$p"
fi
if ! execd_pid >/dev/null; then
  (cd / && /usr/sbin/sge_execd) >>"$RUNLOG" 2>&1 || fail "sge_execd did not start"
  : >"$SGE_STATE/execd.ours"
fi
for i in $(seq 100); do
  qconf -sel 2>/dev/null | grep -qx "$HOST" && break
  sleep 0.1
done
qconf -sel 2>/dev/null | grep -qx "$HOST" || fail "execd on $HOST did not register"

# ---------------------------------------------------------------- queue
if ! qconf -sq "$QUEUE" >/dev/null 2>&1; then
  qconf -sq | sed -E -e "s/^(qname +).*/\1$QUEUE/" -e "s/^(hostlist +).*/\1$HOST/" -e "s/^(pe_list +).*/\1$PE/" \
    -e 's/^(slots +).*/\116/' -e 's/^(load_thresholds +).*/\1NONE/' -e 's|^(shell +).*|\1/bin/bash|' \
    -e 's/^(shell_start_mode +).*/\1unix_behavior/' -e 's/^(notify +).*/\100:00:10/' >"$cfg/$QUEUE"
  qconf -Aq "$cfg/$QUEUE" >>"$RUNLOG" 2>&1 || fail "qconf -Aq $QUEUE failed"
fi
qmod -c "$QUEUE" >>"$RUNLOG" 2>&1 || true   # clear an error state left by an earlier failure
qmod -e "$QUEUE" >>"$RUNLOG" 2>&1 || true

# ---------------------------------------------------------------- verify
printf '#!/bin/sh\ntest -s "$PE_HOSTFILE" && test "$(id -u)" = 0\n' >"$cfg/verify.sh"
out=$(timeout 120 qsub -sync y -pe "$PE" 1 -l h_rt=0:1:0 -o /dev/null -j y -N hh-verify "$cfg/verify.sh" 2>&1) ||
  fail "verification job failed: $out"
[[ $out == *"exited with exit code 0"* ]] || fail "verification job: $out"
echo "sge-up: OK ($HOST, queue $QUEUE, pe $PE)"
