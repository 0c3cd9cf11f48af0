#!/usr/bin/env bash
# Install what hpc-hadoop needs on a Debian 12 machine (as root), idempotently:
#   Debian packages (JDK 17, Maven, Python venv, the dict-gcide corpus of the wordcount example),
#   the Python package in ./.venv (console script .venv/bin/hpc-hadoop),
#   the Hadoop 3.4.2 runtime assembled from Maven Central (hadoop-fs-shim/target/hadoop-runtime),
#   Spark 4.1.1 from PyPI's pyspark (spark-runtime/pyspark) and its examples jar,
#   JupyterLab, ipykernel and nbclient from PyPI (jupyter-runtime/, hpc-hadoop notebook),
#   the JDK class-data-sharing archives of the daemons for every user (hadoop-fs-shim/target/hadoop-runtime/cds).
# With --test, also what the test suite uses: Slurm + munge, GlusterFS, Grid Engine, libfuse 3 and acl (the OrangeFS
# stand-in, tests/standins/orangefs_fuse.py, and its non-root user), Chromium and its WebDriver (the `hpc-hadoop ui`
# browser test), pytest, ruff, mfusepy, selenium, and Lmod + EasyBuild 5.4 for the site-install test
# (tests/cluster/site-up.sh).
set -euo pipefail
cd "$(dirname "$0")"

with_tests=0
[[ "${1:-}" == "--test" ]] && with_tests=1

# The interpreter .venv is made from: every user of a site install must be able to run it (a python3 under
# root's or a user's home, e.g. pyenv, gives everyone else "bad interpreter: Permission denied").
# $HPC_HADOOP_PYTHON wins; else Debian's /usr/bin/python3; else python3 on PATH, with a warning when other
# users cannot run it (a directory on its path, or the file, without the x bit for others).
world_runnable() {  # PATH: true when others may run it: every directory on the way to it as given (another
  # user cannot even reach a link in a private directory) and to what it resolves to, and the file, have o+x
  local path p
  for path in "$1" "$(readlink -f "$1")"; do
    [[ $path == /* ]] || path="$PWD/$path"
    p=$path
    while [[ -n "$p" && "$p" != / ]]; do
      [[ $(( 0$(stat -L -c %a "$p" 2>/dev/null || echo 0) & 1 )) -eq 1 ]] || return 1
      p=$(dirname "$p")
    done
  done
}
choose_python() {
  local candidate
  for candidate in "${HPC_HADOOP_PYTHON:-}" /usr/bin/python3 "$(command -v python3 || true)"; do
    [[ -n "$candidate" && -x "$candidate" ]] || continue
    "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null || continue
    world_runnable "$candidate" || echo "install.sh: warning: other users cannot run $candidate (set HPC_HADOOP_PYTHON to a system python3 for a site install)" >&2
    echo "$candidate"
    return 0
  done
  echo "install.sh: no python3 >= 3.10 found (apt-get install python3)" >&2
  return 1
}
if [[ "${1:-}" == "--print-python" ]]; then choose_python; exit $?; fi

packages=(openjdk-17-jdk-headless maven python3-venv python3-pip dict-gcide gzip procps iproute2)
if (( with_tests )); then
  packages+=(slurmctld slurmd slurm-client munge glusterfs-server glusterfs-client
             gridengine-master gridengine-exec gridengine-client attr util-linux psmisc fuse3 libfuse3-3 acl
             chromium chromium-driver lmod ruby)
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
  python=$(choose_python)
  echo "install.sh: creating .venv from $python"
  "$python" -m venv .venv
elif ! world_runnable .venv/bin/python; then
  echo "install.sh: warning: .venv uses $(readlink -f .venv/bin/python), which other users cannot run; for a site install: rm -rf .venv && HPC_HADOOP_PYTHON=/usr/bin/python3 ./install.sh" >&2
fi
extras="."
(( with_tests )) && extras=".[test,plots]"
echo "install.sh: pip install -e $extras"
.venv/bin/python -m pip install -q --disable-pip-version-check -e "$extras"

echo "install.sh: building the Hadoop runtime (mvn package in hadoop-fs-shim/)"
mvn -B -q -f hadoop-fs-shim/pom.xml package -DskipTests=$( (( with_tests )) && echo false || echo true) >/tmp/hpc-hadoop-mvn.log 2>&1 \
  || { tail -40 /tmp/hpc-hadoop-mvn.log; exit 1; }
# Spark (the spark: and pyspark: steps, docs/user-guide.md): PyPI's pyspark (Spark built for Hadoop 3: bin/, jars/,
# python/lib) in spark-runtime/, outside .venv so that every node's /usr/bin/python3 can use it, and our examples jar
# (Maven Central has no spark-examples jar for Spark 4) beside it. Pinned; reinstalled only when the pin changes.
spark_version=4.1.1
if [[ ! -f spark-runtime/pyspark/jars/spark-core_2.13-$spark_version.jar ]]; then
  echo "install.sh: installing Spark $spark_version (pip install --target spark-runtime pyspark==$spark_version)"
  rm -rf spark-runtime
  .venv/bin/python -m pip install -q --disable-pip-version-check --target spark-runtime "pyspark==$spark_version"
fi
examples_jar=spark-runtime/hpc-hadoop-spark-examples.jar
if [[ ! -f $examples_jar || -n $(find spark-examples/src -newer "$examples_jar" -name '*.java') ]]; then
  echo "install.sh: building $examples_jar"
  rm -rf spark-runtime/examples-classes
  javac -nowarn -d spark-runtime/examples-classes -cp "spark-runtime/pyspark/jars/*" $(find spark-examples/src -name '*.java')
  jar cf "$examples_jar" -C spark-runtime/examples-classes .
  rm -rf spark-runtime/examples-classes
fi
# JupyterLab (hpc-hadoop notebook, docs/user-guide.md): PyPI's jupyterlab, ipykernel and nbclient in
# jupyter-runtime/, outside .venv as Spark is, so that the kernel's /usr/bin/python3 on the master node imports them
# beside pyspark. The pins are launcher.util.resources.JUPYTER_REQUIREMENTS; reinstalled only when they change.
jupyter_pins=$(.venv/bin/python -c 'from launcher.util.resources import JUPYTER_REQUIREMENTS as r; print(" ".join(r))')
if [[ "$(cat jupyter-runtime/.hpc-hadoop-pins 2>/dev/null)" != "$jupyter_pins" ]]; then
  echo "install.sh: installing JupyterLab (pip install --target jupyter-runtime $jupyter_pins)"
  rm -rf jupyter-runtime
  # shellcheck disable=SC2086 # the pins are words
  .venv/bin/python -m pip install -q --disable-pip-version-check --target jupyter-runtime $jupyter_pins
  echo "$jupyter_pins" >jupyter-runtime/.hpc-hadoop-pins
fi
# The daemons', the MapReduce ApplicationMaster's and the job clients' class-data-sharing archives, built once for
# every user into hadoop-fs-shim/target/hadoop-runtime/cds/ (docs/admin-guide.md): a user's first run starts as fast
# as their tenth. Static archives from a training run's class lists (issue 39: no longer written at the daemons' exit,
# which a loaded host missed); skipped when the archives of this runtime and JDK are there. An archive still missing
# after a second training run fails the install: cds_build's one line on stderr names each and the fix.
echo "install.sh: class-data-sharing archives for every user (python -m launcher.runtime.cds_build)"
.venv/bin/python -m launcher.runtime.cds_build </dev/null || exit 1
# The site-install test's tools (tests/integration/test_site.py): Lmod, EasyBuild in /opt/easybuild-venv and a
# download cache outside the checkout (wheelhouse, a file:// copy of ~/.m2 just filled by the build above).
if (( with_tests )); then
  echo "install.sh: Lmod, EasyBuild and the site test's download cache (tests/cluster/site-up.sh)"
  bash tests/cluster/site-up.sh
fi
echo "install.sh: ready: $(.venv/bin/hpc-hadoop --version), Hadoop $(cat hadoop-fs-shim/target/hadoop-runtime/VERSION), Spark $spark_version"
