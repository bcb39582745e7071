#!/usr/bin/env bash
# Installs AgentRuntime from this checkout: the executables and the runtime's own module
# libraries into PREFIX/bin, the templates and the SDK into PREFIX/share/agentruntime (where
# create-agent and add-agent-module find them; agents made from an installed copy depend on
# PREFIX/share/agentruntime/SDK).
set -euo pipefail

usage() { echo "usage: scripts/install.sh [--prefix DIR]   (default DIR: /usr/local)"; }
prefix=/usr/local
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#*=}"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "error: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done

cd "$(dirname "$0")/.."
swift build -c release
bin="$(swift build -c release --show-bin-path)"
share="$prefix/share/agentruntime"
install -d "$prefix/bin" "$share"
for program in agent-control agent-worker validate-settings create-agent add-agent-module; do
    install -m 755 "$bin/$program" "$prefix/bin/"
done
for module in system sample; do
    install -m 755 "$bin/lib$module.so" "$prefix/bin/"
done
rm -rf "$share/Templates" "$share/SDK"
cp -R Templates "$share/Templates"
mkdir -p "$share/SDK"
cp -R SDK/Package.swift SDK/Sources "$share/SDK/"
echo "installed into $prefix (binaries in $prefix/bin, templates and SDK in $share)"
