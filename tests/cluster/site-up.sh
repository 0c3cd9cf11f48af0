#!/usr/bin/env bash
# site-up.sh : what the site-install test (tests/integration/test_site.py) needs on this machine, as a site
# has it: Lmod (Debian's lmod), EasyBuild 5.4 (pip, into /opt/easybuild-venv, from Debian's /usr/bin/python3 so
# that every account can run it), and a download cache outside the checkout, prepared once, that the test's
# fresh software account installs from without going to the registries again:
#   $HH_SITE_CACHE/wheelhouse  wheels of hpc-hadoop's dependencies for /usr/bin/python3, of pyspark and of
#                              JupyterLab, ipykernel and nbclient (pip's own
#                              PIP_FIND_LINKS + PIP_NO_INDEX read it)
#   $HH_SITE_CACHE/m2          a copy of root's populated ~/.m2/repository (Maven reads it as a file:// mirror named
#                              in the software account's ~/.m2/settings.xml)
# Idempotent and quick when everything is there (pip's dry run over the wheelhouse, cp -u, `eb --version`).
# Called by install.sh --test (after the runtime's Maven build, which fills ~/.m2) and by the test itself.
set -euo pipefail
HH_SCRIPT=site-up
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
hh_require_root
hh_lock "$@"
T0=$(hh_now)

REPO=$(cd "$HH_DIR/../.." && pwd)
EB_VERSION=5.4.1
EB_VENV=/opt/easybuild-venv
CACHE=${HH_SITE_CACHE:-/var/cache/hh-site}
# The pinned Spark of install.sh (spark_version=...): the one `hpc-hadoop runtime install` puts in the site prefix.
SPARK_VERSION=$(sed -n 's/^spark_version=//p' "$REPO/install.sh")
# The interpreter whose installed hpc-hadoop (the checkout's editable install) names the dependencies.
META_PY=${HH_SITE_META_PYTHON:-$REPO/.venv/bin/python}
LOG=$HH_LOGDIR/site-up.log
mkdir -p "$HH_LOGDIR"
: >"$LOG"
fail() { hh_fail "$1" "$LOG"; }

hh_apt_ensure lmod python3-venv openjdk-17-jdk-headless maven
[ -r /usr/share/lmod/lmod/init/bash ] || fail "lmod installed but /usr/share/lmod/lmod/init/bash is missing"

# ---------------------------------------------------------------- EasyBuild
# The eb script runs the first python on PATH that imports EasyBuild, unless EB_PYTHON names one: the venv's own.
if [ "$(EB_PYTHON=$EB_VENV/bin/python "$EB_VENV/bin/eb" --version 2>/dev/null | awk '{ print $4 }')" != "$EB_VERSION" ]; then
  hh_msg "installing EasyBuild $EB_VERSION into $EB_VENV"
  rm -rf "$EB_VENV"
  /usr/bin/python3 -m venv "$EB_VENV" >>"$LOG" 2>&1 || fail "python3 -m venv $EB_VENV failed"
  "$EB_VENV/bin/python" -m pip install -q "easybuild-framework==$EB_VERSION" "easybuild-easyblocks==$EB_VERSION" \
    >>"$LOG" 2>&1 || fail "pip install easybuild $EB_VERSION failed"
  chmod -R a+rX "$EB_VENV"
fi

# ---------------------------------------------------------------- wheelhouse
install -d -m 0755 "$CACHE" "$CACHE/wheelhouse"
reqs=$CACHE/requirements.txt
"$META_PY" -c "from importlib.metadata import requires
print('\n'.join(r for r in requires('hpc-hadoop') if 'extra ==' not in r))" >"$reqs.new" 2>>"$LOG" \
  || fail "$META_PY cannot read hpc-hadoop's requirements (run ./install.sh first)"
echo "pyspark==$SPARK_VERSION" >>"$reqs.new"
# JupyterLab, ipykernel and nbclient (hpc-hadoop notebook): the pins runtime install --site installs
PYTHONPATH="$REPO" "$META_PY" -c "from launcher.util.resources import JUPYTER_REQUIREMENTS
print('\n'.join(JUPYTER_REQUIREMENTS))" >>"$reqs.new" 2>>"$LOG" || fail "$META_PY cannot read the JupyterLab pins"
mv "$reqs.new" "$reqs"
chmod 0644 "$reqs"
wheels_complete() {
  "$EB_VENV/bin/python" -m pip install -q --dry-run --ignore-installed --no-index \
    --find-links "$CACHE/wheelhouse" -r "$reqs" >>"$LOG" 2>&1
}
if ! wheels_complete; then
  hh_msg "filling $CACHE/wheelhouse (pip wheel -r $reqs; pyspark is ~450 MB)"
  # --use-pep517: pyspark is an sdist with a plain setup.py; pip builds it in an isolated environment with setuptools
  "$EB_VENV/bin/python" -m pip wheel -q --use-pep517 --wheel-dir "$CACHE/wheelhouse" -r "$reqs" >>"$LOG" 2>&1 \
    || fail "pip wheel into $CACHE/wheelhouse failed"
  wheels_complete || fail "the wheelhouse still does not satisfy $reqs"
fi
chmod -R a+rX "$CACHE/wheelhouse"

# ---------------------------------------------------------------- Maven mirror
[ -d "$HOME/.m2/repository/org/apache/hadoop" ] \
  || fail "$HOME/.m2/repository has no Hadoop artifacts: build the runtime first (./install.sh)"
mkdir -p "$CACHE/m2"
cp -a -u "$HOME/.m2/repository/." "$CACHE/m2/" 2>>"$LOG" || fail "copying ~/.m2/repository to $CACHE/m2 failed"
chmod -R a+rX "$CACHE/m2"
chmod 0755 "$CACHE"

echo "site-up: OK: lmod $(dpkg-query -W -f='${Version}' lmod), EasyBuild $EB_VERSION in $EB_VENV," \
  "wheelhouse $(find "$CACHE/wheelhouse" -name '*.whl' | wc -l) wheels, Maven mirror $(du -sh "$CACHE/m2" | cut -f1)" \
  "in $CACHE, in $(hh_elapsed "$T0")s"
