#!/usr/bin/env bash
# Fetch the Arm SME2 oracles into a project-local cache (default .oracles/, or $ISASIM_ORACLES):
#
#   .oracles/python/ziglang/zig     clang (inside zig) from PyPI's ziglang wheel: the SME2 assembler
#                                   and the static aarch64 cross compiler the qemu backend builds with
#   .oracles/bin/qemu-aarch64       a static qemu-aarch64 >= 10.1 (the first release with SME2), taken
#                                   from Debian's qemu-user package without installing it, from the
#                                   mirror this machine's apt sources name (or $ISASIM_DEBIAN_MIRROR)
#
# The system is left alone: pip installs into the cache with --target, and apt runs with a private
# configuration (its own sources list, package lists and download cache under the cache dir), only
# downloads, and dpkg -x unpacks the .deb into the cache.  A second run skips what is already there.
# Nothing here fails the caller: a tool that cannot be fetched gets one line saying why, and the
# tests that need it skip with a reason.
set -uo pipefail
cd "$(dirname "$0")/.."
CACHE=${ISASIM_ORACLES:-$PWD/.oracles}
mkdir -p "$CACHE/bin"
# The cache ignores itself, so no .gitignore entry is needed.
[ -e "$CACHE/.gitignore" ] || echo '*' > "$CACHE/.gitignore"
PYTHON=${PYTHON:-python3}
QEMU_MIN_MAJOR=10 QEMU_MIN_MINOR=1
started=$SECONDS

say() { echo "install_oracles: $*"; }

# ---- clang (zig) ----------------------------------------------------------------------------
install_zig() {
    local zig="$CACHE/python/ziglang/zig"
    if [ -x "$zig" ] && "$zig" version >/dev/null 2>&1; then
        say "zig $("$zig" version) already in $CACHE/python (skipped)"
        return
    fi
    if "$PYTHON" -m pip install -q --disable-pip-version-check --target "$CACHE/python" ziglang \
            >"$CACHE/pip.log" 2>&1 && [ -x "$zig" ]; then
        say "zig $("$zig" version) installed into $CACHE/python"
    else
        say "could not install ziglang from PyPI with $PYTHON -m pip ($(tail -n 1 "$CACHE/pip.log" | cut -c1-160 | grep . || echo no output)): clang oracle tests will skip"
    fi
}

# ---- qemu-aarch64 >= 10.1 -------------------------------------------------------------------
qemu_version_ok() {  # $1: a qemu-aarch64 binary; true if it runs and is new enough
    local v
    v=$("$1" --version 2>/dev/null | sed -n 's/.*version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p' | head -n 1)
    [ -n "$v" ] || return 1
    set -- $v
    [ "$1" -gt $QEMU_MIN_MAJOR ] || { [ "$1" -eq $QEMU_MIN_MAJOR ] && [ "$2" -ge $QEMU_MIN_MINOR ]; }
}

debian_mirror() {  # the Debian mirror this machine already uses, from its apt sources
    local uri=${ISASIM_DEBIAN_MIRROR:-}
    if [ -z "$uri" ] && [ -r /etc/apt/sources.list.d/debian.sources ]; then
        uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
        uri=$(awk '$1 == "deb" && $0 ~ /debian/ && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
    fi
    echo "$uri"
}

install_qemu() {
    local target="$CACHE/bin/qemu-aarch64"
    if [ -x "$target" ] && qemu_version_ok "$target"; then
        say "$("$target" --version | head -n 1) already in $CACHE/bin (skipped)"
        return
    fi
    for tool in apt-get dpkg; do
        command -v $tool >/dev/null || { say "no $tool on this machine: cannot fetch qemu-user; qemu oracle tests will skip"; return; }
    done
    local mirror; mirror=$(debian_mirror)
    if [ -z "$mirror" ]; then
        say "no Debian mirror in this machine's apt sources: cannot fetch qemu-user; qemu oracle tests will skip"
        return
    fi
    local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    local apt="$CACHE/apt"
    rm -rf "$apt"
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" "$apt/unpacked"
    local opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=-"
                -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Get::List-Cleanup=0")
    # trixie-backports carries qemu 11 for Debian 13; sid is the fallback when backports has none.
    local suite got="" why=()
    for suite in trixie-backports sid; do
        echo "deb [signed-by=$keyring] $mirror $suite main" > "$apt/sources.list"
        apt-get "${opts[@]}" -qq update >"$apt/update.log" 2>&1
        # apt-get update exits 0 when a mirror cannot be reached; no package list is the real sign.
        if ! ls "$apt"/lists/*_Packages* >/dev/null 2>&1; then
            why+=("$suite: no package list from $mirror ($(grep -m 1 -E '^(E|W):' "$apt/update.log" | cut -c1-120))")
            continue
        fi
        rm -f "$apt"/debs/*.deb
        if (cd "$apt/debs" && apt-get "${opts[@]}" -qq download "qemu-user/$suite") >"$apt/download.log" 2>&1; then
            got=$suite
            break
        fi
        why+=("$suite: $(grep -m 1 -E '^(E|W):' "$apt/download.log" | cut -c1-120)")
    done
    if [ -z "$got" ]; then
        local IFS=";"
        say "could not download qemu-user (${why[*]}): qemu oracle tests will skip"
        rm -rf "$apt"
        return
    fi
    dpkg -x "$apt"/debs/qemu-user_*.deb "$apt/unpacked"
    if [ -x "$apt/unpacked/usr/bin/qemu-aarch64" ] && qemu_version_ok "$apt/unpacked/usr/bin/qemu-aarch64"; then
        cp "$apt/unpacked/usr/bin/qemu-aarch64" "$target"
        say "$("$target" --version | head -n 1) from $got installed into $CACHE/bin"
    else
        say "qemu-user from $got has no qemu-aarch64 >= $QEMU_MIN_MAJOR.$QEMU_MIN_MINOR that runs here: qemu oracle tests will skip"
    fi
    rm -rf "$apt"  # the 70 MB package and the package lists are not needed once the binary is out
}

# Inside a virtual environment (CI's), make the cached ziglang importable there too, so
# `python -m ziglang` works for anything that looks for the package rather than the cache.
link_zig_into_venv() {
    [ -x "$CACHE/python/ziglang/zig" ] || return
    local site
    site=$("$PYTHON" -c 'import sys, sysconfig; print(sysconfig.get_paths()["purelib"] if sys.prefix != sys.base_prefix else "")' 2>/dev/null)
    [ -n "$site" ] || return
    echo "$CACHE/python" > "$site/isasim-oracles.pth"
    say "ziglang importable in the virtual environment at $("$PYTHON" -c 'import sys; print(sys.prefix)')"
}

install_zig
link_zig_into_venv
install_qemu
say "done in $((SECONDS - started)) s"
exit 0
