#!/usr/bin/env bash
# Builds the live page (live/: the tldraw and Excalidraw editors with the spatialobs clients)
# with npm and esbuild into OUT_DIR (default live/dist). The npm packages are installed into
# live/node_modules first when they are not there (npm ci: the versions of live/package-lock.json).
# Nothing is rebuilt when OUT_DIR already holds a build of the same sources.
#
#   bash tools/build-live-page.sh [OUT_DIR]
#
# Exits 3 when Node or npm is missing (the package build then goes on without the page).
set -euo pipefail
cd "$(dirname "$0")/../live"
out=${1:-$PWD/dist}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "build-live-page: Node and npm are needed to build the live page (apt-get install nodejs npm)" >&2
    exit 3
fi
stamp=$( (cat package-lock.json build.mjs; find sync tldraw-client excalidraw-client page -type f -not -path '*/node_modules/*' \
          | LC_ALL=C sort | xargs cat) | sha256sum | cut -d' ' -f1)
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ] && [ -f "$out/live.html" ]; then
    exit 0
fi
if [ ! -d node_modules/tldraw ] || [ ! -d node_modules/@excalidraw/excalidraw ] || [ ! -d node_modules/esbuild ]; then
    # --prefer-offline: package metadata already in npm's cache is used without asking the registry
    # again (the lock file fixes every version; what the cache lacks is still fetched). About a fifth
    # of npm ci's CPU with a warm cache (benchmarks/README.md, "Build time (issue 31)").
    npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2
fi
node build.mjs --out "$out" >&2
echo "$stamp" > "$out/.stamp"
