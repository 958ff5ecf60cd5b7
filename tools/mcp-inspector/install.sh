#!/usr/bin/env bash
# Installs the official MCP Inspector (@modelcontextprotocol/inspector, the version of
# package-lock.json) into tools/mcp-inspector/node_modules with npm ci, for the test that
# drives its CLI mode against spatialobs serve (tests/test_serve_inspector.py).
# Nothing is installed again while node_modules holds an install of the same lock file.
#
#   bash tools/mcp-inspector/install.sh
#
# Exits 3 when Node or npm is missing. The Inspector asks for Node 22 in its package.json;
# its CLI mode runs on Node 20 (Debian's), so npm's engine warning is not an error here.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "mcp-inspector: Node and npm are needed (apt-get install nodejs npm)" >&2
    exit 3
fi
stamp=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f node_modules/.spatialobs-stamp ] && [ "$(cat node_modules/.spatialobs-stamp)" = "$stamp" ] \
        && [ -f node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js ]; then
    exit 0
fi
INSPECTOR_SKIP_CLIENT_INSTALL=1 npm ci --no-audit --no-fund --loglevel=error >&2
echo "$stamp" > node_modules/.spatialobs-stamp
