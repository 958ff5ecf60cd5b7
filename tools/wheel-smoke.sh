#!/usr/bin/env bash
# A built wheel as a user without a compiler gets it: a fresh virtual environment, a PATH with no
# C or C++ compiler, linker, CMake or Ninja on it, pip taking wheels only (--only-binary :all:,
# so nothing can be compiled), then the demo and one smoke test of each job from the installed
# package, run in an empty folder (no checkout, no data beside it):
#   - the version: spatialobs --version, spatialobs.__version__ and the installed metadata agree
#   - canvas observation: spatialobs observe on a tldraw file
#   - canvas editing: spatialobs apply of a model reply's canvas_ops, the result observed again
#   - screen identity: spatialobs dedup of generic screens (two equal, one not: two states)
#   - exploration: spatialobs explore on the simulated Notepad with a store, exported as JSON lines
#   - the service (installs the serve extra, after the timing; Python 3.10 or newer, as the MCP SDK):
#     spatialobs serve --http on 127.0.0.1, a document opened, observed and edited over the HTTP API,
#     and its live page
# Prints the wall time of the install and the demo (the issue's target: under a minute).
#
#   bash tools/wheel-smoke.sh WHEEL
#
# Environment: PYTHON, the interpreter of the environment (default python3; it must match the
# wheel's tag); SPATIALOBS_SMOKE_LIVE=0 when the wheel was built without Node (no live page);
# SPATIALOBS_SMOKE_SERVE=0 to leave out the service.
set -euo pipefail
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
    echo "usage: tools/wheel-smoke.sh WHEEL (a spatialobs .whl file)" >&2
    exit 2
fi
wheel=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
repo=$(cd "$(dirname "$0")/.." && pwd)
python=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')
work=$(mktemp -d)
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# A PATH of links to every program on the current PATH but the compilers and build tools.
nocc="$work/bin"
mkdir -p "$nocc"
IFS=: read -r -a dirs <<< "$PATH"
for d in "${dirs[@]}"; do
    [ -d "$d" ] || continue
    for f in "$d"/*; do
        name=${f##*/}
        case $name in
            gcc|gcc-*|g++|g++-*|cc|c++|c89|c89-*|c99|c99-*|cpp|cpp-*|clang|clang-*|clang++|clang++-*|\
            *-gcc|*-gcc-*|*-g++|*-g++-*|*-cc|*-c++|*-cpp|*-cpp-*|icc|icpx|tcc|nvcc|zig|\
            ld|ld.*|*-ld|*-ld.*|as|*-as|cmake|ninja) continue ;;
        esac
        [ -x "$f" ] && [ ! -e "$nocc/$name" ] && ln -s "$f" "$nocc/$name"
    done
done

"$python" -m venv "$work/venv"
mkdir -p "$work/run"
cd "$work/run"
export PATH="$work/venv/bin:$nocc"
unset CC CXX CPP LD CFLAGS CXXFLAGS LDFLAGS PYTHONPATH VIRTUAL_ENV
python - <<'EOF'
import shutil, sys
found = {c: shutil.which(c) for c in ("gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "cmake", "ninja")}
found = {c: p for c, p in found.items() if p}
if found:
    sys.exit(f"wheel-smoke: a compiler or build tool is still on PATH: {found}")
print(f"wheel-smoke: Python {sys.version.split()[0]}, no compiler on PATH")
EOF

start=$(date +%s.%N)
python -m pip install --quiet --disable-pip-version-check --only-binary=:all: "$wheel"
installed=$(date +%s.%N)
spatialobs demo --out demo > demo.txt
done_demo=$(date +%s.%N)
tail -n 3 demo.txt
ls demo/*.svg >/dev/null
awk -v a="$start" -v b="$installed" -v c="$done_demo" \
    'BEGIN { printf "wheel-smoke: install %.1f s + demo %.1f s = %.1f s\n", b - a, c - b, c - a }'

# The version: one value everywhere.
version=$(spatialobs --version)
python - "$version" <<'EOF'
import importlib.metadata, sys
import spatialobs
meta = importlib.metadata.version("spatialobs")
assert sys.argv[1] == f"spatialobs {meta}" == f"spatialobs {spatialobs.__version__}", (sys.argv[1], meta)
assert "site-packages" in spatialobs.__file__, spatialobs.__file__
print(f"wheel-smoke: {sys.argv[1]} from {spatialobs.__file__}")
EOF

# Canvas observation and editing.
cp "$repo/tests/data/conformance/labels.tldr" board.tldr
spatialobs observe board.tldr > before.json
cat > reply.md <<'EOF'
A notes board beside the labels.

```canvas_ops
{"ops": [{"op": "create_artboard", "id": "smoke", "name": "Smoke notes", "x": 2000, "y": 0, "w": 400, "h": 300}]}
```
EOF
spatialobs apply board.tldr reply.md --out edited.tldr
spatialobs observe edited.tldr --viewport=-500,-500,4000,3000 > after.json
python - <<'EOF'
import json
before, after = json.load(open("before.json")), json.load(open("after.json"))
assert before["objects"], "observe found no objects in board.tldr"
names = [str(o.get("name", "")) + str(o.get("text", "")) for o in after["objects"]]
assert any("Smoke notes" in n for n in names), f"the applied artboard is not observed: {names[:20]}"
print(f"wheel-smoke: observe {len(before['objects'])} objects; after apply {len(after['objects'])}, the new artboard among them")
EOF

# Screen identity: two equal screens and a third with other texts make two states.
python - > screens.jsonl <<'EOF'
import json
def screen(title):
    els = [{"bounds": [0, 0, 1080, 160], "role": "header", "text": title},
           {"bounds": [40, 220, 1040, 340], "role": "button", "text": "Compose", "clickable": True}]
    return json.dumps({"width": 1080, "height": 1920, "elements": els})
print(screen("Inbox")); print(screen("Inbox")); print(screen("Settings of the account"))
EOF
spatialobs dedup screens.jsonl --index states.idx | tee dedup.txt
grep -q "^states: 2 new" dedup.txt
test -s states.idx

# Exploration of a simulated application, its graph stored and exported.
spatialobs explore --app notepad --steps 20 --starts 2 --store notepad.sqlite | tail -n 4
spatialobs export notepad.sqlite --to jsonl notepad-export
test -s notepad-export/steps.jsonl

# The live page the wheel carries.
if [ "${SPATIALOBS_SMOKE_LIVE:-1}" != 0 ]; then
    python -c 'import pathlib, spatialobs.serve as s; p = pathlib.Path(s.__file__).parent / "live_page" / "live.html"; assert p.is_file(), f"no live page in the wheel: {p}"'
    echo "wheel-smoke: the live page is in the wheel"
fi

# The service over HTTP (the serve extra, wheels only too). Its MCP SDK needs Python 3.10 or newer.
serve=${SPATIALOBS_SMOKE_SERVE:-1}
if [ "$serve" != 0 ] && ! python -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "wheel-smoke: the service is not checked: the serve extra (the mcp package) needs Python 3.10 or newer"
    serve=0
fi
if [ "$serve" != 0 ]; then
    python -m pip install --quiet --disable-pip-version-check --only-binary=:all: "$wheel[serve]"
    port=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    SPATIALOBS_TOKEN=smoke spatialobs serve --root . --http "127.0.0.1:$port" > serve.log 2>&1 &
    server=$!
    python - "$port" "${SPATIALOBS_SMOKE_LIVE:-1}" <<'EOF'
import json, sys, time, urllib.request
base, live = f"http://127.0.0.1:{sys.argv[1]}", sys.argv[2] != "0"
def call(path, body=None):
    req = urllib.request.Request(base + path, method="POST" if body is not None else "GET",
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer smoke", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()
deadline = time.monotonic() + 60
while True:
    try:
        call("/v1/health")
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit("wheel-smoke: the service did not answer within 60 s (serve.log)")
        time.sleep(0.2)
assert json.loads(call("/v1/documents", {"path": "board.tldr", "name": "board"}))["ok"]
obs = json.loads(call("/v1/documents/board/observe?max_objects=50"))
assert obs["ok"] and obs["result"], obs
done = json.loads(call("/v1/documents/board/apply", {"ops": [{"op": "create_artboard", "name": "Notes", "w": 400, "h": 300}]}))
assert done["ok"], done
if live:
    page = call("/live/board?token=smoke").decode()
    assert "<html" in page.lower(), page[:200]
print("wheel-smoke: the service opened, observed and edited a document over HTTP" + (" and served its live page" if live else ""))
EOF
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=""
fi
echo "wheel-smoke: passed"
