#!/usr/bin/env bash
# gluster-down.sh : unmount /mnt/hhpfs, stop and delete the hhpfs volume,
# kill every gluster process we started, delete namespace hh-fs and the brick
# data (test data).  Safe to run at any time, any number of times.
set -euo pipefail
HH_SCRIPT=gluster-down
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
hh_require_root
hh_lock "$@"

VOL=hhpfs
BRICKS=/srv/hh-gluster
GWD=/var/lib/hh-glusterd

# 1. FUSE mount (the unmount propagates into every node namespace)
for try in $(seq 10); do
  [ "$(hh_mnt_types | tail -1)" = fuse.glusterfs ] || break
  umount "$HH_MNT" 2>/dev/null || { [ "$try" -ge 5 ] && umount -l "$HH_MNT" 2>/dev/null; } || sleep 0.5
done
[ "$(hh_mnt_types | tail -1)" = fuse.glusterfs ] && hh_fail "cannot unmount $HH_MNT (busy? see: fuser -vm $HH_MNT)"
# the FUSE client normally exits on unmount; make sure
for d in /proc/[0-9]*; do
  [ "$(cat "$d/comm" 2>/dev/null)" = glusterfs ] || continue
  [[ "$(hh_cmdline "${d#/proc/}")" == *"--volfile-id=/$VOL $HH_MNT"* ]] && hh_kill_pids "${d#/proc/}"
done

# 2. volume, glusterd, bricks, self-heal daemon: all live in namespace hh-fs
if hh_holder_pid fs >/dev/null && hh_pidfile_alive "$HH_STATE/glusterd.pid" >/dev/null; then
  timeout 30 "$HH_DIR/on-node.sh" fs gluster --mode=script volume stop "$VOL" force >/dev/null 2>&1 || true
  timeout 30 "$HH_DIR/on-node.sh" fs gluster --mode=script volume delete "$VOL" >/dev/null 2>&1 || true
fi
hh_ns_down fs
rm -f "$HH_STATE/glusterd.pid" "$HH_STATE/glusterd.vol"

# 3. data and private state
rm -rf "$BRICKS" "$GWD" /run/gluster/vols/"$VOL" /run/gluster/shd/"$VOL"
if ! grep -qsx -e glusterd -e glusterfsd /proc/[0-9]*/comm; then
  rm -f /run/gluster/*.socket /run/glusterd.socket
fi

hh_common_down

# 4. check
left=$(hh_live_procs 'glusterd|glusterfsd')
for d in /proc/[0-9]*; do
  if [ "$(cat "$d/comm" 2>/dev/null)" != glusterfs ] || ! hh_alive "${d#/proc/}"; then continue; fi
  [[ "$(hh_cmdline "${d#/proc/}")" == *"$VOL"* ]] && left+=" glusterfs(${d#/proc/})"
done
[ -e /run/netns/hh-fs ] && left+=" netns:hh-fs"
[ "$(hh_mnt_types | tail -1)" = fuse.glusterfs ] && left+=" mount:$HH_MNT"
[ -z "$left" ] || hh_fail "left behind:$left"
echo "gluster-down: OK"
