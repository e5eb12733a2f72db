#!/usr/bin/env bash
# One-time (idempotent) set-up of a fresh Debian bookworm machine for this project:
#  - the pinned Rust nightly with rust-src, rustfmt, clippy, miri, llvm-tools (objcopy for the
#    bootloader's BIOS stages and the Pi image) and the bare-metal targets, Miri's sysroot, and
#    cargo-fuzz (pinned) for the fuzz smoke of `cargo xtask test`;
#  - stable Rust at the declared rust-version (Cargo.toml) with the bare-metal targets;
#  - Debian sources for bookworm-backports (QEMU 10) and non-free-firmware (firmware-amd-graphics),
#    as deb822 files signed by the same keyring as the existing debian.sources;
#  - QEMU (x86_64 and arm system emulators) and the AMD GPU firmware blobs;
#  - the Raspberry Pi boot firmware (bootcode.bin, start.elf, fixup.dat) from Debian's
#    raspi-firmware package (non-free-firmware), downloaded and unpacked into
#    target/raspi-firmware/ (never installed: its hooks would write to this host's
#    /boot/firmware), for the SD-card image the Pi case builds.
# Re-running it changes nothing once everything is in place.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'setup: %s\n' "$*"; }

# --- Rust -------------------------------------------------------------------------------------
toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
if ! command -v rustup >/dev/null; then
    echo "setup: rustup is required (https://rustup.rs) and was not found" >&2
    exit 1
fi
want_targets="x86_64-unknown-none aarch64-unknown-none"
have=$(rustup +"$toolchain" target list --installed 2>/dev/null || true)
missing=0
for t in $want_targets; do grep -qx "$t" <<<"$have" || missing=1; done
for c in rust-src rustfmt clippy miri llvm-tools; do
    rustup +"$toolchain" component list --installed 2>/dev/null | grep -q "^$c" || missing=1
done
if [ "$missing" = 1 ]; then
    log "installing Rust $toolchain with rust-src, rustfmt, clippy, miri, llvm-tools and bare-metal targets"
    rustup toolchain install "$toolchain" --profile minimal \
        --component rust-src,rustfmt,clippy,miri,llvm-tools \
        --target x86_64-unknown-none,aarch64-unknown-none
fi
# The stable toolchain at the published crates' declared rust-version (Cargo.toml), for the
# MSRV builds of `cargo xtask test`: the library crates need no nightly.
msrv=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' Cargo.toml | head -n1)
msrv_have=$(rustup +"$msrv" target list --installed 2>/dev/null || true)
msrv_missing=0
for t in $want_targets; do grep -qx "$t" <<<"$msrv_have" || msrv_missing=1; done
if [ "$msrv_missing" = 1 ]; then
    log "installing Rust $msrv (the declared rust-version) with the bare-metal targets"
    rustup toolchain install "$msrv" --profile minimal \
        --target x86_64-unknown-none,aarch64-unknown-none
fi
# Miri's sysroot (built once from rust-src; `cargo miri setup` is a no-op when it is current).
if ! cargo +"$toolchain" miri setup --print-sysroot >/dev/null 2>&1; then
    log "building Miri's sysroot"
    cargo +"$toolchain" miri setup
fi
# cargo-fuzz, pinned (built with the pinned nightly): the fuzz targets in fuzz/.
cargo_fuzz_version=0.13.2
if [ "$(cargo +"$toolchain" fuzz --version 2>/dev/null)" != "cargo-fuzz $cargo_fuzz_version" ]; then
    log "installing cargo-fuzz $cargo_fuzz_version"
    cargo +"$toolchain" install cargo-fuzz --version "$cargo_fuzz_version" --locked
fi

# --- Debian packages --------------------------------------------------------------------------
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
need_pkgs=()
dpkg -s qemu-system-x86 >/dev/null 2>&1 || need_pkgs+=(qemu-system-x86)
dpkg -s qemu-system-arm >/dev/null 2>&1 || need_pkgs+=(qemu-system-arm)
dpkg -s firmware-amd-graphics >/dev/null 2>&1 || need_pkgs+=(firmware-amd-graphics)
command -v python3 >/dev/null || need_pkgs+=(python3)
# The Pi boot firmware is downloaded, not installed (below); its component must be in apt's
# sources, which the block below adds.
raspi_fw_dir=target/raspi-firmware
raspi_fw_files="bootcode.bin start.elf fixup.dat"
raspi_fw_missing=0
for f in $raspi_fw_files; do
    [ -s "$raspi_fw_dir/usr/lib/raspi-firmware/$f" ] || raspi_fw_missing=1
done

if [ "${#need_pkgs[@]}" -gt 0 ] || [ "$raspi_fw_missing" = 1 ]; then
    keyring=$(sed -n 's/^Signed-By: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
    keyring=${keyring:-/usr/share/keyrings/debian-archive-keyring.gpg}
    backports=/etc/apt/sources.list.d/gpu-framework-backports.sources
    firmware=/etc/apt/sources.list.d/gpu-framework-non-free-firmware.sources
    if [ ! -f "$backports" ]; then
        log "adding bookworm-backports ($backports)"
        $SUDO tee "$backports" >/dev/null <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main non-free-firmware
Signed-By: $keyring
SRC
    fi
    if [ ! -f "$firmware" ]; then
        log "adding the non-free-firmware component ($firmware)"
        $SUDO tee "$firmware" >/dev/null <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: non-free-firmware
Signed-By: $keyring
SRC
    fi
    $SUDO apt-get update -qq
    qemu=()
    other=()
    for p in "${need_pkgs[@]}"; do
        case "$p" in qemu-*) qemu+=("$p") ;; *) other+=("$p") ;; esac
    done
    [ "${#need_pkgs[@]}" -eq 0 ] || log "installing ${need_pkgs[*]}"
    if [ "${#qemu[@]}" -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
            -t bookworm-backports "${qemu[@]}" >/dev/null
    fi
    if [ "${#other[@]}" -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
            "${other[@]}" >/dev/null
    fi
fi
if [ "$raspi_fw_missing" = 1 ]; then
    log "downloading raspi-firmware into $raspi_fw_dir (unpacked, not installed)"
    rm -rf "$raspi_fw_dir"
    mkdir -p "$raspi_fw_dir"
    # apt-get download writes into the current directory, which apt's sandbox user (_apt) may
    # not be able to write to: download as the calling user.
    (cd "$raspi_fw_dir" && apt-get -o APT::Sandbox::User="$(id -un)" download -qq raspi-firmware)
    dpkg-deb -x "$raspi_fw_dir"/raspi-firmware_*.deb "$raspi_fw_dir"
    for f in $raspi_fw_files; do
        if [ ! -s "$raspi_fw_dir/usr/lib/raspi-firmware/$f" ]; then
            echo "setup: raspi-firmware has no usr/lib/raspi-firmware/$f" >&2
            exit 1
        fi
    done
fi
log "ready: $(rustc +"$toolchain" --version), $(qemu-system-x86_64 --version | head -n1)"
