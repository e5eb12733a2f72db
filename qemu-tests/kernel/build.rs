//! Lets the linker find `linker.ld` (defmt's build script adds the directory of `defmt.x`), and
//! embeds the R5xx CP microcode from linux-firmware, unmodified, so the test kernel loads the
//! real blob (`R520_FIRMWARE` overrides the path).
use std::path::PathBuf;

/// Where Debian's firmware-amd-graphics installs it (`bash scripts/setup.sh`).
const R520_FIRMWARE: &str = "/lib/firmware/radeon/R520_cp.bin";

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    println!("cargo:rustc-link-search={dir}");
    println!("cargo:rerun-if-changed=linker.ld");
    println!("cargo:rerun-if-changed=linker-aarch64.ld");
    println!("cargo:rerun-if-changed=src/boot.s");
    println!("cargo:rerun-if-env-changed=DEFMT_LOG");

    println!("cargo:rerun-if-env-changed=R520_FIRMWARE");
    let source = std::env::var("R520_FIRMWARE").unwrap_or_else(|_| R520_FIRMWARE.into());
    println!("cargo:rerun-if-changed={source}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    if let Err(e) = std::fs::copy(&source, out.join("R520_cp.bin")) {
        eprintln!(
            "error: cannot read the R5xx microcode {source}: {e}\n\
             install Debian's firmware-amd-graphics with `bash scripts/setup.sh`"
        );
        std::process::exit(1);
    }

    // The Evergreen/Cayman PFP, ME and RLC images, unmodified (`EVERGREEN_FIRMWARE_DIR`
    // overrides the directory).
    println!("cargo:rerun-if-env-changed=EVERGREEN_FIRMWARE_DIR");
    let dir =
        std::env::var("EVERGREEN_FIRMWARE_DIR").unwrap_or_else(|_| "/lib/firmware/radeon".into());
    for chip in ["CYPRESS", "CAYMAN"] {
        for part in ["pfp", "me", "rlc"] {
            let name = format!("{chip}_{part}.bin");
            let source = format!("{dir}/{name}");
            println!("cargo:rerun-if-changed={source}");
            if let Err(e) = std::fs::copy(&source, out.join(&name)) {
                eprintln!(
                    "error: cannot read the Evergreen microcode {source}: {e}\n\
                     install Debian's firmware-amd-graphics with `bash scripts/setup.sh`"
                );
                std::process::exit(1);
            }
        }
    }
}
