#!/usr/bin/env bash
# gluster-up.sh : a real GlusterFS "disperse 3 redundancy 1" volume hhpfs,
# served by glusterd in its own network namespace (hh-fs, host pfs,
# 10.77.0.250) and FUSE-mounted at /mnt/hhpfs in the root namespace, where
# every node namespace sees it (the stand-in for Lustre).  Idempotent: when
# already up it only re-verifies.  Works before or after slurm-up.sh.
set -euo pipefail
HH_SCRIPT=gluster-up
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
hh_require_root
hh_lock "$@"
T0=$(hh_now)
HH_SINCE=$T0

VOL=hhpfs
BRICKS=/srv/hh-gluster
GWD=/var/lib/hh-glusterd # private glusterd working directory
GLOG=/var/log/glusterfs
RUNLOG=$HH_LOGDIR/gluster-up.log
fail() {
  hh_fail "$1" "$RUNLOG" "$GLOG/hh-glusterd.log" "$GLOG"/bricks/srv-hh-gluster-brick*.log "$GLOG/hh-mnt.log"
}
gl() { timeout 60 "$HH_DIR/on-node.sh" fs gluster --mode=script "$@"; }

hh_apt_ensure glusterfs-server glusterfs-client iproute2 util-linux
mkdir -p "$HH_STATE" "$HH_LOGDIR" "$GLOG"
: >"$RUNLOG"

# ---------------------------------------------------------------- namespace
hh_note_netns_mount
hh_bridge_up
hh_shared_mnt_up
hh_ns_up fs "$HH_FS_IP" "$HH_FS_NAME"
hh_hosts_sync

# ---------------------------------------------------------------- glusterd
glusterd_pid() {
  local p
  p=$(hh_pidfile_alive "$HH_STATE/glusterd.pid") || return 1
  [ "$(cat "/proc/$p/comm")" = glusterd ] || return 1
  [ "$(stat -L -c %i "/proc/$p/ns/net")" = "$(hh_netns_inode hh-fs)" ] || return 1
  echo "$p"
}
if ! glusterd_pid >/dev/null; then
  mkdir -p "$GWD"
  sed "s#option working-directory .*#option working-directory $GWD#" \
    /etc/glusterfs/glusterd.vol >"$HH_STATE/glusterd.vol"
  [ -e "$GLOG/hh-glusterd.log" ] && mv -f "$GLOG/hh-glusterd.log" "$GLOG/hh-glusterd.log.prev"
  hh_node_exec fs /usr/sbin/glusterd -f "$HH_STATE/glusterd.vol" -p "$HH_STATE/glusterd.pid" \
    --log-file="$GLOG/hh-glusterd.log" </dev/null >>"$RUNLOG" 2>&1 || fail "glusterd did not start"
fi
for i in $(seq 150); do
  gl volume list >/dev/null 2>&1 && break
  sleep 0.2
done
gl volume list >>"$RUNLOG" 2>&1 || fail "glusterd does not answer"

# ---------------------------------------------------------------- volume
if ! gl volume info "$VOL" >/dev/null 2>&1; then
  rm -rf "$BRICKS" # stale bricks of a deleted volume carry its volume-id xattr
  mkdir -p "$BRICKS"
  # three bricks on one server and on the root filesystem: needs "force"
  gl volume create "$VOL" disperse 3 redundancy 1 \
    "$HH_FS_NAME:$BRICKS/brick1" "$HH_FS_NAME:$BRICKS/brick2" "$HH_FS_NAME:$BRICKS/brick3" force \
    >>"$RUNLOG" 2>&1 || fail "volume create failed"
fi
bricks_online() {
  gl volume status "$VOL" 2>/dev/null | awk '/^Brick / && $(NF-1) == "Y" { n++ } END { print n + 0 }'
}
vinfo=$(gl volume info "$VOL" 2>/dev/null) || true
if ! grep -q '^Status: Started' <<<"$vinfo"; then
  gl volume start "$VOL" >>"$RUNLOG" 2>&1 || fail "volume start failed"
elif [ "$(bricks_online)" != 3 ]; then
  gl volume start "$VOL" force >>"$RUNLOG" 2>&1 || fail "volume start force failed"
fi
for i in $(seq 150); do
  [ "$(bricks_online)" = 3 ] && break
  sleep 0.2
done
[ "$(bricks_online)" = 3 ] || { gl volume status "$VOL" >>"$RUNLOG" 2>&1; fail "bricks not online"; }

# ---------------------------------------------------------------- FUSE mount
hh_stale_fuse_drop
if [ "$(hh_mnt_types | tail -1)" != fuse.glusterfs ]; then
  mount -t glusterfs -o "log-file=$GLOG/hh-mnt.log" "$HH_FS_NAME:/$VOL" "$HH_MNT" >>"$RUNLOG" 2>&1 ||
    fail "mount -t glusterfs $HH_FS_NAME:/$VOL $HH_MNT failed"
fi
tok="hh-$$-$RANDOM"
for i in $(seq 100); do
  timeout 10 sh -c "echo $tok >$HH_MNT/.hh-probe" 2>/dev/null && break
  sleep 0.2
done
[ "$(timeout 10 cat "$HH_MNT/.hh-probe" 2>/dev/null)" = "$tok" ] || fail "$HH_MNT is not writable"

# ---------------------------------------------------------------- verify
fstype=$(stat -f -c %T "$HH_MNT")
case "$fstype" in fuse*) ;; *) fail "stat -f says $HH_MNT is '$fstype', not fuse" ;; esac
grep -q "^$HH_FS_NAME:/$VOL $HH_MNT fuse.glusterfs " /proc/mounts || fail "$HH_MNT not fuse.glusterfs in /proc/mounts"
if hh_holder_pid n2 >/dev/null && hh_holder_pid n3 >/dev/null; then
  writer=n2 reader=n3
elif hh_holder_pid n1 >/dev/null; then
  writer=n1 reader=fs
else
  writer=fs reader=fs # no compute node yet: the gluster namespace itself
fi
f="$HH_MNT/.hh-verify-$tok"
hh_node_exec "$writer" sh -c "echo \"written on \$(hostname) $tok\" >$f" >>"$RUNLOG" 2>&1 ||
  fail "cannot write $f from $writer"
got=$(hh_node_exec "$reader" cat "$f" 2>>"$RUNLOG") || fail "cannot read $f from $reader"
rm -f "$f" "$HH_MNT/.hh-probe"
want="written on $([ "$writer" = fs ] && echo "$HH_FS_NAME" || echo "$writer") $tok"
[ "$got" = "$want" ] || fail "read '$got' on $reader, expected '$want'"
echo "gluster-up: OK: volume $VOL (disperse 3 redundancy 1) on $HH_FS_NAME $HH_FS_IP mounted at $HH_MNT ($fstype), written on $writer read on $reader, in $(hh_elapsed "$T0")s"
