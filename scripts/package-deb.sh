#!/usr/bin/env bash
# Builds the Debian package of AgentRuntime with dpkg-deb: the executables and the runtime's
# own modules (/usr/lib/agentruntime, the commands linked from /usr/bin), the templates and the
# SDK (/usr/share/agentruntime), man pages (scripts/man-pages.py, from the commands' own parsers),
# bash, zsh and fish completions (the executables' --generate-completion-script), the systemd
# template unit agentruntime@.service (an agent per folder /var/lib/agentruntime/NAME), and
# maintainer scripts that create the agentruntime system user, restart running agents on an
# upgrade and remove cleanly (purge removes the user only when no agent's files are left).
#
# The executables link the Swift runtime of the toolchain that built them (in /opt/swift here);
# agents build their own Swift modules with that toolchain, so the target machine needs it at
# the same path.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/package-deb.sh [--output DIR] [--build-dir DIR] [--no-build] [--revision N]
                              [--compression xz|gzip|zstd|none]

Builds release (swift build -c release), writes the man pages from the built commands
(scripts/man-pages.py, which needs python3) and writes DIR/agentruntime_VERSION-N_ARCH.deb
(its binaries stripped; their debug information in DIR/agentruntime_VERSION-N_ARCH.debug/);
prints the package's path on its last line.

  --output DIR      where the .deb is written (default: .build/deb)
  --build-dir DIR   the folder of built products to package (default: the release build's)
  --no-build        package the products in --build-dir as they are: no build
  --revision N      the Debian revision (default: 1); the version itself is the runtime's
                    (agent-control --version)
  --compression C   dpkg-deb's compression (default: xz; none is quickest, for tests)

The Maintainer field and the changelog's signature come from DEBFULLNAME and DEBEMAIL (as
Debian's own tools take them); without DEBEMAIL it is agentruntime@localhost, which lintian
reports as bogus-mail-host: set it to yours for a package you distribute.
EOF
}

cd "$(dirname "$0")/.."
repository="$(pwd)"
output="$repository/.build/deb"
build_dir=""
build=1
revision=1
compression=xz
while [ $# -gt 0 ]; do
    case "$1" in
        --output) output="$2"; shift 2 ;;
        --output=*) output="${1#*=}"; shift ;;
        --build-dir) build_dir="$2"; shift 2 ;;
        --build-dir=*) build_dir="${1#*=}"; shift ;;
        --revision) revision="$2"; shift 2 ;;
        --revision=*) revision="${1#*=}"; shift ;;
        --compression) compression="$2"; shift 2 ;;
        --compression=*) compression="${1#*=}"; shift ;;
        --no-build) build=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "error: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done
fail() { echo "error: $*" >&2; exit 1; }
command -v dpkg-deb >/dev/null 2>&1 || fail "dpkg-deb not found; install Debian's dpkg (apt-get install dpkg)"
case "$compression" in xz|gzip|zstd|none) ;; *) fail "--compression must be xz, gzip, zstd or none, not \"$compression\"" ;; esac
case "$revision" in ''|*[!0-9a-zA-Z.+~]*) fail "--revision must be a Debian revision such as 1 or 2, not \"$revision\"" ;; esac

if [ "$build" = 1 ]; then
    [ -z "$build_dir" ] || fail "--build-dir names products built elsewhere: use it with --no-build"
    swift build -c release
    build_dir="$(swift build -c release --show-bin-path)"
fi
[ -n "$build_dir" ] || fail "--no-build needs --build-dir DIR (the folder holding agent-control)"
build_dir="$(cd "$build_dir" && pwd -P)"

programs=(agent-control agent-worker validate-settings create-agent add-agent-module)
commands=(agent-control validate-settings create-agent add-agent-module)
modules=(system sample)
for file in "${programs[@]}" "${modules[@]/#/lib}"; do
    case "$file" in lib*) file="$file.so" ;; esac
    [ -f "$build_dir/$file" ] || fail "$build_dir/$file is missing; build first (swift build -c release) or pass the products' folder with --build-dir"
done
command -v python3 >/dev/null 2>&1 || fail "python3 not found; the man pages are written by scripts/man-pages.py (apt-get install python3)"

version="$("$build_dir/agent-control" --version | awk '{print $2}')"
[ -n "$version" ] || fail "$build_dir/agent-control --version printed no version"
architecture="$(dpkg --print-architecture)"
package="agentruntime_${version}-${revision}_${architecture}"

# What the package holds is read by every user (the service's, each user's create-agent and
# shell): under the builder's `umask 077` the copies and the completions were 0600 and their
# folders 0700, and create-agent run by anyone but root found no Templates/.
umask 022
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/$package"
lib="$root/usr/lib/agentruntime"
share="$root/usr/share/agentruntime"
install -d "$lib" "$share" "$root/usr/bin" "$root/usr/share/man/man1" "$root/DEBIAN" \
    "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d" "$root/lib/systemd/system" "$root/usr/share/doc/agentruntime"

# The executables find agent-worker and the runtime's modules in their own folder (after
# symlinks), and the templates and the SDK in ../../share/agentruntime.
for program in "${programs[@]}"; do install -m 755 "$build_dir/$program" "$lib/"; done
for module in "${modules[@]}"; do install -m 644 "$build_dir/lib$module.so" "$lib/"; done
# Stripped, as Debian's policy asks; the debug information is kept apart, beside the package
# in DIR/PACKAGE.debug/ (one FILE.debug each, which the stripped file names in its
# .gnu_debuglink, so gdb finds it when it is put in /usr/lib/debug/usr/lib/agentruntime).
command -v objcopy >/dev/null 2>&1 && command -v strip >/dev/null 2>&1 \
    || fail "objcopy and strip not found; install Debian's binutils (apt-get install binutils)"
debug_dir="$stage/debug"
install -d "$debug_dir"
for file in "${programs[@]}" "${modules[@]/#/lib}"; do
    case "$file" in lib*) file="$file.so" ;; esac
    objcopy --only-keep-debug --compress-debug-sections "$lib/$file" "$debug_dir/$file.debug"
    strip --strip-unneeded --remove-section=.comment "$lib/$file"
    (cd "$debug_dir" && objcopy --add-gnu-debuglink="$file.debug" "$lib/$file")
done
for command in "${commands[@]}"; do ln -s "../lib/agentruntime/$command" "$root/usr/bin/$command"; done
cp -R Templates "$share/Templates"
install -d "$share/SDK"
cp -R SDK/Package.swift SDK/Sources SDK/Python "$share/SDK/"
# The documents the dashboard serves at /docs, read from here by the installed agent.
install -m 644 README.md "$share/README.md"
cp -R docs "$share/docs"
install -d "$share/benchmarks"
install -m 644 benchmarks/README.md "$share/benchmarks/README.md"

pages="$(mktemp -d)"
python3 scripts/man-pages.py --build-dir "$build_dir" --output "$pages" "${commands[@]}" >/dev/null
for command in "${commands[@]}"; do
    install -m 644 "$pages/$command.1" "$root/usr/share/man/man1/$command.1"
    gzip -9n "$root/usr/share/man/man1/$command.1"
done
rm -rf "$pages"
for command in "${commands[@]}"; do
    # A completion file is sourced, not run: no #! line.
    "$build_dir/$command" --generate-completion-script bash | sed '1{/^#!/d}' >"$root/usr/share/bash-completion/completions/$command"
    "$build_dir/$command" --generate-completion-script zsh >"$root/usr/share/zsh/vendor-completions/_$command"
    "$build_dir/$command" --generate-completion-script fish >"$root/usr/share/fish/vendor_completions.d/$command.fish"
done

# The template unit, as agent-control writes it (User=agentruntime, /var/lib/agentruntime/%i).
unit="$root/lib/systemd/system/agentruntime@.service"
"$build_dir/agent-control" unit --template --binaries /usr/bin >"$unit" \
    || fail "$build_dir/agent-control unit --template failed"
chmod 644 "$unit"
install -m 644 README.md "$root/usr/share/doc/agentruntime/README.md"
install -m 644 scripts/debian/copyright "$root/usr/share/doc/agentruntime/copyright"
# Debian's changelog of this package (one entry: this build) and lintian's overrides, each
# override with the reason it is right here.
maintainer="${DEBFULLNAME:-AgentRuntime developers} <${DEBEMAIL:-agentruntime@localhost}>"
{
    printf 'agentruntime (%s-%s) unstable; urgency=medium\n\n' "$version" "$revision"
    printf '  * Built from the AgentRuntime repository.\n\n'
    printf ' -- %s  %s\n' "$maintainer" "$(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}")"
} | gzip -9n >"$root/usr/share/doc/agentruntime/changelog.Debian.gz"
chmod 644 "$root/usr/share/doc/agentruntime/changelog.Debian.gz"
install -d "$root/usr/share/lintian/overrides"
install -m 644 scripts/debian/lintian-overrides "$root/usr/share/lintian/overrides/agentruntime"
for script in postinst prerm postrm; do install -m 755 "scripts/debian/$script" "$root/DEBIAN/$script"; done

# The copies keep their source's modes, which a checkout made under a narrow umask narrows too:
# readable by all, writable by root alone (executables stay so).
chmod -R u+rwX,go+rX,go-w "$root/usr/share"

installed_size="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
cat >"$root/DEBIAN/control" <<EOF
Package: agentruntime
Version: $version-$revision
Architecture: $architecture
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: libc6, libsqlite3-0, adduser | passwd
Recommends: libcurl4
Section: admin
Priority: optional
Description: runtime and supervisor for long-running agents
 agent-control supervises an agent's processes as worker OS processes that load
 module libraries, routes their events through shared memory, keeps a SQLite
 store and answers on a control socket and an HTTP API. Includes the runtime's
 modules, the templates and SDK for create-agent and add-agent-module, man
 pages, shell completions and the systemd unit agentruntime@.service (one agent
 per folder /var/lib/agentruntime/NAME, run as the agentruntime user).
 .
 Needs the Swift toolchain the runtime was built with, at the same path.
EOF

install -d "$output"
dpkg-deb --root-owner-group -Z"$compression" --build "$root" "$output/$package.deb" >/dev/null
rm -rf "$output/$package.debug"
mv "$debug_dir" "$output/$package.debug"
echo "$output/$package.deb"
