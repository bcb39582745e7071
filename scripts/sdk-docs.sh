#!/usr/bin/env bash
# Builds the DocC documentation of the module SDK (AgentModuleKit), offline: the SDK's symbol
# graph from the compiler (-emit-symbol-graph), then the toolchain's own `docc convert` — no
# swift-docc-plugin, so the SDK keeps no dependency. A broken ``link`` in a doc comment fails
# the script (--warnings-as-errors); a public symbol without a comment fails
# PublicSymbolDocumentationTests. Takes about a minute (the SDK is built on its own).
#
#   scripts/sdk-docs.sh [OUTPUT]     (default: .build/AgentModuleKit.doccarchive)
#
# The archive is laid out for static hosting; to read it in a browser:
#   python3 -m http.server --directory .build/AgentModuleKit.doccarchive 8000
#   then open http://127.0.0.1:8000/documentation/agentmodulekit/
set -euo pipefail
cd "$(dirname "$0")/.."
output="${1:-.build/AgentModuleKit.doccarchive}"
scratch=.build/sdk-docs
graphs="$PWD/$scratch/symbol-graphs"
command -v docc >/dev/null 2>&1 || { echo "error: docc not found: put the Swift toolchain's usr/bin on PATH" >&2; exit 2; }
rm -rf "$graphs" "$output"
mkdir -p "$graphs"
swift build --package-path SDK --scratch-path "$scratch" --target AgentModuleKit \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs"
docc convert --additional-symbol-graph-dir "$graphs" --fallback-display-name AgentModuleKit \
    --fallback-bundle-identifier org.agentruntime.AgentModuleKit --output-path "$output" \
    --transform-for-static-hosting --warnings-as-errors
echo "AgentModuleKit's documentation: $output (open documentation/agentmodulekit/ under a static server)"
