//! Passes the R5xx CP microcode's path to `include_bytes!` (`R520_FIRMWARE`, default: where
//! Debian's firmware-amd-graphics installs it, `bash scripts/setup.sh`).

/// Debian's firmware-amd-graphics path of the linux-firmware blob.
const R520_FIRMWARE: &str = "/lib/firmware/radeon/R520_cp.bin";

fn main() {
    println!("cargo:rerun-if-env-changed=R520_FIRMWARE");
    let path = std::env::var("R520_FIRMWARE").unwrap_or_else(|_| R520_FIRMWARE.into());
    let path = std::fs::canonicalize(&path).unwrap_or_else(|e| {
        eprintln!("error: cannot read the R5xx microcode {path}: {e} (set R520_FIRMWARE)");
        std::process::exit(1)
    });
    println!("cargo:rerun-if-changed={}", path.display());
    println!("cargo:rustc-env=R520_FIRMWARE={}", path.display());
}
