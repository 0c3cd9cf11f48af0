#!/usr/bin/env bash
# on-node.sh NODE CMD... : run CMD "on" a test-cluster node, i.e. inside the
# net + uts + mount (+ cgroup) namespaces of node NODE (n1..nN, or pfs for the
# GlusterFS server namespace).  Exit status is CMD's; 125 if NODE is not up.
# The working directory is kept (the filesystem is shared with the host).
set -euo pipefail
HH_SCRIPT=on-node
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
if [ $# -lt 2 ]; then
  echo "usage: on-node.sh NODE CMD [ARG...]   (NODE: n1..nN or pfs)" >&2
  exit 2
fi
hh_node_exec "$@"
