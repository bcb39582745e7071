#!/usr/bin/env bash
# Installs AgentRuntime from this checkout: the executables and the runtime's own module
# libraries into PREFIX/bin, the templates and the SDK into PREFIX/share/agentruntime (where
# create-agent and add-agent-module find them; agents made from an installed copy depend on
# PREFIX/share/agentruntime/SDK; README.md, docs/ and benchmarks/README.md go there too, for the
# dashboard's /docs), the man pages into PREFIX/share/man/man1 (written from the
# built commands by scripts/man-pages.py, which needs python3) and bash, zsh and fish completions into
# PREFIX/share/{bash-completion/completions,zsh/site-functions,fish/vendor_completions.d}.
set -euo pipefail

usage() {
    cat <<'EOF2'
usage: scripts/install.sh [--prefix DIR] [--no-build --build-dir DIR]

  --prefix DIR      where to install (default: /usr/local)
  --no-build        install the products in --build-dir as they are: no build
  --build-dir DIR   the folder of built products (with --no-build)
EOF2
}
prefix=/usr/local
build=1
bin=""
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#*=}"; shift ;;
        --build-dir) bin="$2"; shift 2 ;;
        --build-dir=*) bin="${1#*=}"; shift ;;
        --no-build) build=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "error: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done

cd "$(dirname "$0")/.."
# What is installed is for every user of the machine (create-agent finds its templates, the
# shells their completions): the installer's own narrow umask (077) must not narrow it.
umask 022
if [ "$build" = 1 ]; then
    [ -z "$bin" ] || { echo "error: --build-dir names products built elsewhere: use it with --no-build" >&2; exit 2; }
    swift build -c release
    bin="$(swift build -c release --show-bin-path)"
fi
[ -n "$bin" ] || { echo "error: --no-build needs --build-dir DIR (the folder holding agent-control)" >&2; exit 2; }
bin="$(cd "$bin" && pwd -P)"
command -v python3 >/dev/null 2>&1 || { echo "error: python3 not found; the man pages are written by scripts/man-pages.py (apt-get install python3)" >&2; exit 1; }
share="$prefix/share/agentruntime"
man="$prefix/share/man/man1"
bash_completions="$prefix/share/bash-completion/completions"
zsh_completions="$prefix/share/zsh/site-functions"
fish_completions="$prefix/share/fish/vendor_completions.d"
install -d "$prefix/bin" "$share" "$man" "$bash_completions" "$zsh_completions" "$fish_completions"
for program in agent-control agent-worker validate-settings create-agent add-agent-module; do
    install -m 755 "$bin/$program" "$prefix/bin/"
done
for module in system sample; do
    install -m 755 "$bin/lib$module.so" "$prefix/bin/"
done
rm -rf "$share/Templates" "$share/SDK" "$share/docs" "$share/benchmarks"
cp -R Templates "$share/Templates"
mkdir -p "$share/SDK"
cp -R SDK/Package.swift SDK/Sources SDK/Python "$share/SDK/"
# The documents the dashboard serves at /docs (read from here by an installed agent).
cp README.md "$share/README.md"
cp -R docs "$share/docs"
mkdir -p "$share/benchmarks"
cp benchmarks/README.md "$share/benchmarks/README.md"
commands=(agent-control validate-settings create-agent add-agent-module)
python3 scripts/man-pages.py --build-dir "$bin" --output "$man" "${commands[@]}" >/dev/null
for command in "${commands[@]}"; do
    chmod 644 "$man/$command.1"
    "$bin/$command" --generate-completion-script bash >"$bash_completions/$command"
    "$bin/$command" --generate-completion-script zsh >"$zsh_completions/_$command"
    "$bin/$command" --generate-completion-script fish >"$fish_completions/$command.fish"
done
# The copies keep their source's modes, which a checkout made under a narrow umask narrows too.
chmod -R u+rwX,go+rX,go-w "$share" "$bash_completions" "$zsh_completions" "$fish_completions"
echo "installed into $prefix (binaries in $prefix/bin, templates, SDK and docs in $share, man pages in $man, completions in $prefix/share)"
