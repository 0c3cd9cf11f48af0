#!/usr/bin/env bash
# Install what hpc-hadoop needs on a Debian 12 machine (as root), idempotently:
#   Debian packages (JDK 17, Maven, Python venv, the dict-gcide corpus of the wordcount example),
#   the Python package in ./.venv (console script .venv/bin/hpc-hadoop),
#   the Hadoop 3.4.2 runtime assembled from Maven Central (hadoop-fs-shim/target/hadoop-runtime).
# With --test, also what the test suite uses: Slurm + munge, GlusterFS, Grid Engine, pytest, ruff.
set -euo pipefail
cd "$(dirname "$0")"

with_tests=0
[[ "${1:-}" == "--test" ]] && with_tests=1

packages=(openjdk-17-jdk-headless maven python3-venv python3-pip dict-gcide gzip procps iproute2)
if (( with_tests )); then
  packages+=(slurmctld slurmd slurm-client munge glusterfs-server glusterfs-client
             gridengine-master gridengine-exec gridengine-client attr util-linux psmisc)
fi
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if (( ${#missing[@]} )); then
  echo "install.sh: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ! -x .venv/bin/python ]]; then
  echo "install.sh: creating .venv"
  python3 -m venv .venv
fi
extras="."
(( with_tests )) && extras=".[test,plots]"
echo "install.sh: pip install -e $extras"
.venv/bin/python -m pip install -q --disable-pip-version-check -e "$extras"

echo "install.sh: building the Hadoop runtime (mvn package in hadoop-fs-shim/)"
mvn -B -q -f hadoop-fs-shim/pom.xml package -DskipTests=$( (( with_tests )) && echo false || echo true) >/tmp/hpc-hadoop-mvn.log 2>&1 \
  || { tail -40 /tmp/hpc-hadoop-mvn.log; exit 1; }
echo "install.sh: ready: $(.venv/bin/hpc-hadoop --version), Hadoop $(cat hadoop-fs-shim/target/hadoop-runtime/VERSION)"
