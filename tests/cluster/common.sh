# shellcheck shell=bash disable=SC2034
# Shared helpers for the one-machine test cluster (slurm-up.sh, gluster-up.sh,
# their -down.sh counterparts and on-node.sh).  Source it; do not run it.
#
# Layout (see README.md):
#   bridge hhbr0 10.77.0.1/24 in the root namespace (controller "hhctl")
#   node nI   : netns hh-nI, veth hhv-nI <-> eth0, 10.77.0.(10+I), hostname nI
#   gluster   : netns hh-fs, veth hhv-fs <-> eth0, 10.77.0.250,   hostname pfs
# and a second network, as a site's InfiniBand one (issue 37 item 9):
#   bridge hhbr1 10.78.0.1/24 in the root namespace ("hhctl-ib")
#   node nI   : veth hhi-nI <-> ib0, 10.78.0.(10+I), host name nI-ib
# Every namespace is owned by a "holder" process (sleep infinity) that lives in
# the namespace's net + uts + mount (+ cgroup) namespaces; daemons and
# on-node.sh commands enter those namespaces with nsenter -t <holder pid>.

HH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HH_BR=hhbr0
HH_NET=10.77.0
HH_CTL_NAME=hhctl
HH_CTL_IP=10.77.0.1
HH_FS_NAME=pfs
HH_FS_IP=10.77.0.250
HH_IB_BR=hhbr1
HH_IB_NET=10.78.0
HH_IB_CTL_IP=10.78.0.1
HH_IB_SUFFIX=-ib
HH_MNT=/mnt/hhpfs
HH_STATE=/run/hh-cluster
HH_LOGDIR=/var/log/slurm-hh
HH_SPOOL=/var/spool/slurm-hh
HH_RUNDIR=/run/slurm-hh
HH_HOSTS_BEGIN='# BEGIN hh-cluster (tests/cluster; removed by slurm-down.sh/gluster-down.sh)'
HH_HOSTS_END='# END hh-cluster'
HH_SCRIPT=${HH_SCRIPT:-$(basename "$0")}
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

hh_msg() { printf '%s: %s\n' "$HH_SCRIPT" "$*" >&2; }

# hh_tail FILE... : print the tail of each existing file on stderr, leaving
# out files older than $HH_SINCE (epoch seconds, if set) and the harmless
# start-up noise of Debian's Slurm (no PMIx library, no saved state).
HH_NOISE='pmix|PMIx|MPI: Cannot create context|Trying backup state save file|Could not open .* state file|No .* state file .* to recover'
hh_tail() {
  local f
  for f in "$@"; do
    [ -s "$f" ] || continue
    if [ -n "${HH_SINCE:-}" ] && [ "$(stat -c %Y "$f")" -lt "${HH_SINCE%.*}" ]; then continue; fi
    printf -- '----- last lines of %s -----\n' "$f" >&2
    grep -Ev "$HH_NOISE" "$f" | tail -n "${HH_TAIL_LINES:-30}" >&2 || true
  done
}

# hh_fail MESSAGE [LOGFILE...] : print MESSAGE, the log tails, exit 1.
hh_fail() {
  local m=$1; shift
  hh_msg "FAILED: $m"
  hh_tail "$@"
  exit 1
}

# hh_lock "$@" : serialise the up/down scripts (pytest workers may call them
# concurrently).  Re-executes the script under flock(1); -o keeps the lock fd
# out of the daemons the script starts.
hh_lock() {
  if [ -z "${HH_LOCKED:-}" ]; then
    mkdir -p /run/lock
    HH_LOCKED=1 exec flock -o -w 900 /run/lock/hh-cluster.lock bash "$0" "$@"
  fi
  # Name the command whenever `set -e` aborts the script (main shell only:
  # failures inside $(...) that the caller tolerates must stay silent).
  set -E
  trap '[ "$BASH_SUBSHELL" = 0 ] && hh_msg "FAILED: unexpected error at ${BASH_SOURCE[0]##*/}:$LINENO: $BASH_COMMAND"' ERR
}

hh_require_root() { [ "$(id -u)" = 0 ] || hh_fail "must run as root"; }

hh_now() { date +%s.%N; }
hh_elapsed() { awk -v a="$1" -v b="$(hh_now)" 'BEGIN { printf "%.1f", b - a }'; }

# hh_apt_ensure PKG... : install the missing Debian packages (idempotent).
hh_apt_ensure() {
  local missing=() p
  for p in "$@"; do
    [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)" == ii* ]] || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  mkdir -p "$HH_LOGDIR"
  local log=$HH_LOGDIR/apt.log rc=0 tmp_policy="" try
  hh_msg "installing ${missing[*]} (log: $log)"
  # Never let package scripts start system-wide munged/glusterd/slurm* daemons.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    tmp_policy=1
  fi
  for try in 1 2 3 4 5; do
    rc=0
    {
      apt-get -o DPkg::Lock::Timeout=600 update &&
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 \
          install -y --no-install-recommends "${missing[@]}"
    } </dev/null >>"$log" 2>&1 || rc=$?
    [ $rc = 0 ] && break
    sleep $((try * 5))
  done
  [ -n "$tmp_policy" ] && rm -f /usr/sbin/policy-rc.d
  [ $rc = 0 ] || hh_fail "apt-get install ${missing[*]} failed (rc=$rc)" "$log"
}

# ---------------------------------------------------------------- names

# hh_key NAME : n2 | hh-n2 -> n2 ; pfs | fs | hh-fs -> fs
hh_key() {
  case "$1" in
    hh-*) echo "${1#hh-}" ;;
    "$HH_FS_NAME" | fs) echo fs ;;
    *) echo "$1" ;;
  esac
}
hh_nodes() { cat "$HH_STATE/nodes" 2>/dev/null || echo 0; }

# ---------------------------------------------------------------- cgroups

# v1 hierarchies mounted under /sys/fs/cgroup (root mount namespace view).
hh_cg_hierarchies() {
  awk '$3 == "cgroup" && $2 ~ "^/sys/fs/cgroup/" { print $2 }' /proc/self/mounts
}
hh_cg_has_freezer() {
  local h
  for h in $(hh_cg_hierarchies); do [ "$h" = /sys/fs/cgroup/freezer ] && return 0; done
  return 1
}

hh_cg_create() {
  local key=$1 h f
  for h in $(hh_cg_hierarchies); do
    mkdir -p "$h/hh-$key"
    if [ -e "$h/cpuset.cpus" ]; then
      for f in cpuset.cpus cpuset.mems; do
        [ -n "$(cat "$h/hh-$key/$f")" ] || cat "$h/$f" >"$h/hh-$key/$f"
      done
    fi
  done
}

# hh_cg_pids KEY : every pid inside the cgroup subtree hh-KEY, any hierarchy.
hh_cg_pids() {
  local key=$1 h
  for h in $(hh_cg_hierarchies); do
    if [ -d "$h/hh-$key" ]; then
      find "$h/hh-$key" -name cgroup.procs -exec cat {} + 2>/dev/null || true
    fi
  done | sort -un
}

hh_cg_destroy() {
  local key=$1 h try
  for try in 1 2 3 4 5 6 7 8 9 10; do
    local left=0
    for h in $(hh_cg_hierarchies); do
      [ -d "$h/hh-$key" ] || continue
      find "$h/hh-$key" -depth -type d -exec rmdir {} \; 2>/dev/null || true
      [ -d "$h/hh-$key" ] && left=1
    done
    [ $left = 0 ] && return 0
    sleep 0.3
  done
  hh_msg "warning: could not remove cgroup hh-$key (pids: $(hh_cg_pids "$key" | tr '\n' ' '))"
}

# ---------------------------------------------------------------- processes

hh_alive() { [ -n "${1:-}" ] && [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# hh_kill_pids PID... : TERM, wait up to ~5 s, then KILL.
hh_kill_pids() {
  local p pids=() i
  for p in "$@"; do [ "$p" != $$ ] && hh_alive "$p" && pids+=("$p"); done
  [ ${#pids[@]} -eq 0 ] && return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for i in $(seq 50); do
    local any=0
    for p in "${pids[@]}"; do hh_alive "$p" && any=1; done
    [ $any = 0 ] && return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  sleep 0.2
}

# hh_live_procs ERE : "comm(pid)" of every live (non-zombie) process whose
# command name matches ERE; waits up to ~3 s for exiting ones to go away.
hh_live_procs() {
  local d c i out
  for i in $(seq 15); do
    out=""
    for d in /proc/[0-9]*; do
      c=$(cat "$d/comm" 2>/dev/null) || continue
      [[ $c =~ ^($1)$ ]] || continue
      hh_alive "${d#/proc/}" && out+=" $c(${d#/proc/})"
    done
    [ -z "$out" ] && return 0
    sleep 0.2
  done
  echo "$out"
}

# hh_cmdline PID : the command line of PID, space separated ("" if gone)
hh_cmdline() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null || true; }

# hh_pidfile_alive FILE : prints the pid if FILE names a live process.
hh_pidfile_alive() {
  local p
  p=$(cat "$1" 2>/dev/null) || return 1
  hh_alive "$p" || return 1
  echo "$p"
}

# ---------------------------------------------------------------- network

# Fixed MAC addresses (02:77:00:00:00:<last octet>): a namespace that is
# deleted and recreated keeps its MAC, so no neighbour cache entry (in the root
# namespace or another node) goes stale; a stale one costs ~40 s of silence.
# The second network's are 02:78:00:00:00:<last octet>.
hh_mac() {
  local rest=${1#*.}
  printf '02:%s:00:00:00:%02x' "${rest%%.*}" "${1##*.}"
}

# hh_bridge_up [BRIDGE ADDRESS] : the bridge (default: hhbr0, 10.77.0.1) with its address, up
hh_bridge_up() {
  local br=${1:-$HH_BR} ip=${2:-$HH_CTL_IP} a
  ip link show "$br" >/dev/null 2>&1 ||
    ip link add "$br" address "$(hh_mac "$ip")" type bridge
  a=$(ip -4 addr show dev "$br")
  [[ $a == *"inet $ip/24"* ]] || ip addr add "$ip/24" dev "$br"
  ip link set "$br" up
}

# hh_ib_up KEY IP : the node namespace hh-KEY's second network link: veth hhi-KEY (on bridge hhbr1) <-> ib0 with
# address IP (idempotent; the namespace must exist).
hh_ib_up() {
  local key=$1 ip=$2 ns=hh-$1 veth=hhi-$1 a
  hh_bridge_up "$HH_IB_BR" "$HH_IB_CTL_IP"
  if ! ip link show "$veth" >/dev/null 2>&1; then
    ip -n "$ns" link del ib0 2>/dev/null || true
    ip link add "$veth" type veth peer name ib0 address "$(hh_mac "$ip")" netns "$ns"
    ip neigh flush dev "$HH_IB_BR" to "$ip" 2>/dev/null || true
  fi
  ip link set "$veth" master "$HH_IB_BR" up
  a=$(ip -n "$ns" -4 addr show dev ib0)
  [[ $a == *"inet $ip/24"* ]] || ip -n "$ns" addr add "$ip/24" dev ib0
  ip -n "$ns" link set ib0 up
}

hh_netns_inode() { stat -L -c %i "/run/netns/$1" 2>/dev/null; }

# The FUSE mount made later in the root namespace must propagate into the
# namespaces: make $HH_MNT a shared mount (bind onto itself) before any
# namespace is created.  Only our own mount point is touched.
hh_shared_mnt_up() {
  hh_stale_fuse_drop
  mkdir -p "$HH_MNT"
  if ! awk -v m="$HH_MNT" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; then
    mount --bind "$HH_MNT" "$HH_MNT"
    mount --make-shared "$HH_MNT"
  fi
}

# fstypes mounted at $HH_MNT, bottom first
hh_mnt_types() { awk -v m="$HH_MNT" '$2 == m { print $3 }' /proc/self/mounts; }

# A FUSE mount whose glusterfs client died (the machine's processes were
# killed, the mounts survived) answers every call with ENOTCONN ("Transport
# endpoint is not connected"): unmount it lazily so it can be mounted again.
hh_stale_fuse_drop() {
  while [ "$(hh_mnt_types | tail -1)" = fuse.glusterfs ] && ! timeout 10 stat "$HH_MNT/." >/dev/null 2>&1; do
    hh_msg "stale FUSE mount at $HH_MNT (client gone): unmounting it"
    umount "$HH_MNT" 2>/dev/null || umount -l "$HH_MNT" || return 1
  done
}

# ---------------------------------------------------------------- hosts

hh_hosts_block() {
  local i n
  n=$(hh_nodes)
  echo "$HH_HOSTS_BEGIN"
  echo "$HH_CTL_IP $HH_CTL_NAME"
  echo "$HH_FS_IP $HH_FS_NAME"
  for ((i = 1; i <= n; i++)); do echo "$HH_NET.$((10 + i)) n$i"; done
  echo "$HH_IB_CTL_IP $HH_CTL_NAME$HH_IB_SUFFIX"
  for ((i = 1; i <= n; i++)); do echo "$HH_IB_NET.$((10 + i)) n$i$HH_IB_SUFFIX"; done
  echo "$HH_HOSTS_END"
}

# write FILE in place (keeps the inode, so bind mounts of it see the change)
hh_write_inplace() {
  local f=$1 tmp
  tmp=$(mktemp)
  cat >"$tmp"
  cmp -s "$tmp" "$f" 2>/dev/null || cat "$tmp" >"$f"
  rm -f "$tmp"
}

hh_strip_block() { sed "/^# BEGIN hh-cluster/,/^# END hh-cluster/d" "$1"; }

# (Re)write the marked block in /etc/hosts and every namespace's hosts file.
hh_hosts_sync() {
  local block f
  block=$(hh_hosts_block)
  { hh_strip_block /etc/hosts; echo "$block"; } | hh_write_inplace /etc/hosts
  for f in "$HH_STATE"/hosts.*; do
    [ -e "$f" ] || continue
    {
      printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n'
      echo "$block"
    } | hh_write_inplace "$f"
  done
}

hh_hosts_remove() {
  grep -q '^# BEGIN hh-cluster' /etc/hosts || return 0
  hh_strip_block /etc/hosts | hh_write_inplace /etc/hosts
}

# ---------------------------------------------------------------- namespaces

# hh_holder_pid KEY : pid of the live holder of namespace hh-KEY
hh_holder_pid() {
  local key=$1 p ino
  p=$(hh_pidfile_alive "$HH_STATE/holder.$key") || return 1
  ino=$(hh_netns_inode "hh-$key") || return 1
  [ "$(stat -L -c %i "/proc/$p/ns/net" 2>/dev/null)" = "$ino" ] || return 1
  [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sleep ] || return 1
  echo "$p"
}

# hh_ns_up KEY IP HOSTNAME : netns + veth + holder (idempotent)
hh_ns_up() {
  local key=$1 ip=$2 host=$3 ns=hh-$1 veth=hhv-$1 i
  mkdir -p "$HH_STATE"
  [ -e "/run/netns/$ns" ] || ip netns add "$ns"
  if ! ip link show "$veth" >/dev/null 2>&1; then
    ip -n "$ns" link del eth0 2>/dev/null || true
    ip link add "$veth" type veth peer name eth0 address "$(hh_mac "$ip")" netns "$ns"
    ip neigh flush dev "$HH_BR" to "$ip" 2>/dev/null || true
  fi
  ip link set "$veth" master "$HH_BR" up
  local a
  a=$(ip -n "$ns" -4 addr show dev eth0)
  [[ $a == *"inet $ip/24"* ]] || ip -n "$ns" addr add "$ip/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up

  hh_holder_pid "$key" >/dev/null && return 0
  local hosts=$HH_STATE/hosts.$key hier
  [ -e "$hosts" ] || : >"$hosts"
  hh_hosts_sync
  hier=$(hh_cg_hierarchies | tr '\n' ' ')
  hh_cg_create "$key"
  rm -f "$HH_STATE/holder.$key"
  # The holder joins cgroup hh-KEY in every v1 hierarchy, becomes hostname
  # HOST, bind-mounts its hosts file and its cgroup subtree (so Slurm's
  # /sys/fs/cgroup/freezer/slurm of node n1 is .../freezer/hh-n1/slurm and
  # the nodes' job cgroups never collide), then enters a new cgroup namespace.
  # shellcheck disable=SC2016,SC2086
  setsid nsenter --net="/run/netns/$ns" -- \
    unshare --uts --mount --propagation slave -- \
    /bin/sh -c '
      set -e
      key=$1 host=$2 hosts=$3 state=$4; shift 4
      for h in "$@"; do echo $$ >"$h/hh-$key/cgroup.procs"; done
      hostname "$host"
      mount --bind "$hosts" /etc/hosts
      for h in "$@"; do mount --bind "$h/hh-$key" "$h"; done
      echo $$ >"$state/holder.$key"
      exec unshare --cgroup -- sleep infinity
    ' hh-holder "$key" "$host" "$hosts" "$HH_STATE" $hier \
    </dev/null >"$HH_STATE/holder.$key.log" 2>&1 &
  for i in $(seq 100); do
    hh_holder_pid "$key" >/dev/null && return 0
    sleep 0.05
  done
  hh_fail "holder of namespace $ns did not start" "$HH_STATE/holder.$key.log"
}

# hh_ns_down KEY : kill everything in namespace hh-KEY, delete it
hh_ns_down() {
  local key=$1 ns=hh-$1 try pids
  for try in 1 2 3; do
    pids=$({
      [ -e "/run/netns/$ns" ] && ip netns pids "$ns" 2>/dev/null
      hh_cg_pids "$key"
      cat "$HH_STATE/holder.$key" 2>/dev/null
      true
    } | sort -un)
    [ -z "$pids" ] && break
    # shellcheck disable=SC2086
    hh_kill_pids $pids
  done
  [ -e "/run/netns/$ns" ] && ip netns del "$ns" 2>/dev/null
  ip link del "hhv-$key" 2>/dev/null || true
  ip link del "hhi-$key" 2>/dev/null || true
  hh_cg_destroy "$key"
  rm -f "$HH_STATE/holder.$key" "$HH_STATE/holder.$key.log" "$HH_STATE/hosts.$key"
}

# hh_node_exec NAME CMD... : run CMD in the net+uts+mount+cgroup namespaces of
# node NAME (n1.., or pfs/fs for the gluster namespace).  The command also joins
# the node's cgroups so that *-down.sh can find whatever it leaves running.
hh_node_exec() {
  local key pid
  key=$(hh_key "$1")
  shift
  pid=$(hh_holder_pid "$key") || {
    echo "hh_node_exec: namespace hh-$key is not up" >&2
    return 125
  }
  (
    for h in $(hh_cg_hierarchies); do
      echo "$BASHPID" >"$h/hh-$key/cgroup.procs" 2>/dev/null || true
    done
    exec nsenter -t "$pid" -n -u -m -C --wd="$PWD" -- "$@"
  )
}

# ---------------------------------------------------------------- teardown

# Called at the end of each down script: drop what is shared by both halves
# once neither half has a namespace left.
hh_common_down() {
  local f
  for f in /run/netns/hh-*; do
    if [ -e "$f" ]; then
      hh_hosts_sync
      return 0
    fi
  done
  ip link del "$HH_BR" 2>/dev/null || true
  ip link del "$HH_IB_BR" 2>/dev/null || true
  hh_hosts_remove
  local t
  for t in $(hh_mnt_types | tac); do
    [ "$t" = fuse.glusterfs ] && break
    umount "$HH_MNT" 2>/dev/null || umount -l "$HH_MNT" 2>/dev/null || true
  done
  # `ip netns add` mounts /run/netns on itself; undo that if we caused it.
  if [ -e "$HH_STATE/netns-mount.ours" ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
    umount /run/netns 2>/dev/null || true
    rmdir /run/netns 2>/dev/null || true
  fi
  rm -rf "$HH_STATE"
}

# remember whether /run/netns was a mount before we created namespaces
hh_note_netns_mount() {
  mkdir -p "$HH_STATE"
  [ -e "$HH_STATE/netns-mount.ours" ] || [ -e "$HH_STATE/netns-mount.theirs" ] && return 0
  if awk '$5 == "/run/netns" { f = 1 } END { exit !f }' /proc/self/mountinfo; then
    : >"$HH_STATE/netns-mount.theirs"
  else
    : >"$HH_STATE/netns-mount.ours"
  fi
}
