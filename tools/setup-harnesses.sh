#!/usr/bin/env bash
# Installs what the conformance tests run: Debian's Chromium (with the emoji font the
# tldraw truth files were made with) and the two real-editor harnesses, into .harness/;
# and builds the live page (live/: npm ci, esbuild) that the live-canvas tests open.
#
#   bash tools/setup-harnesses.sh [SHARED_DIR]
#
# Everything but the two export lines goes to standard error, so the output can be
# eval-ed. SHARED_DIR holds tools/tldraw-harness (default ../shared). Chromium is installed with
# apt-get when running as root; otherwise it must already be at /usr/bin/chromium.
# Prints the environment the tests read (SPATIALOBS_TLDRAW_HARNESS,
# SPATIALOBS_EXCALIDRAW_HARNESS, SPATIALOBS_LIVE_PAGE); the tests also find .harness/ and
# live/dist by themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${1:-../shared}

if [ ! -x /usr/bin/chromium ] || ! fc-list 2>/dev/null | grep -q "Noto Color Emoji"; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null
    else
        echo "setup-harnesses: /usr/bin/chromium and fonts-noto-color-emoji are needed (apt-get as root)" >&2
        exit 1
    fi
fi

mkdir -p .harness
# The tldraw harness comes from the shared tools folder, which may be read-only: work on a copy.
if [ -f "$shared/tools/tldraw-harness/package.json" ]; then
    if [ ! -d .harness/tldraw-harness/node_modules ]; then
        rm -rf .harness/tldraw-harness
        cp -r "$shared/tools/tldraw-harness" .harness/tldraw-harness
        chmod -R u+w .harness/tldraw-harness
        (cd .harness/tldraw-harness && npm ci --no-audit --no-fund --loglevel=error && node build.mjs) >&2
    fi
else
    echo "setup-harnesses: no tldraw harness under $shared/tools" >&2
    exit 1
fi

# The Excalidraw harness is the project's own (with @excalidraw/mermaid-to-excalidraw for the Mermaid
# truth): installed again when its lock file changed, rebuilt when its sources did.
if [ -f tools/excalidraw-harness/package.json ]; then
    dst=.harness/excalidraw-harness
    if [ ! -d "$dst/node_modules" ] || ! cmp -s tools/excalidraw-harness/package-lock.json "$dst/package-lock.json"; then
        rm -rf "$dst"
        cp -r tools/excalidraw-harness "$dst"
        (cd "$dst" && npm ci --no-audit --no-fund --loglevel=error && node build.mjs) >&2
    elif ! diff -rq --exclude=node_modules --exclude=dist tools/excalidraw-harness "$dst" >/dev/null; then
        cp -r tools/excalidraw-harness/. "$dst"/
        (cd "$dst" && node build.mjs) >&2
    fi
fi

# The live page, from the repository's own sources (live/), into live/dist.
bash tools/build-live-page.sh "$PWD/live/dist" >&2

echo "export SPATIALOBS_TLDRAW_HARNESS=$PWD/.harness/tldraw-harness"
echo "export SPATIALOBS_EXCALIDRAW_HARNESS=$PWD/.harness/excalidraw-harness"
echo "export SPATIALOBS_LIVE_PAGE=$PWD/live/dist"
