//! Lets the linker find `linker.ld` (defmt's build script adds the directory of `defmt.x`).
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    println!("cargo:rustc-link-search={dir}");
    println!("cargo:rerun-if-changed=linker.ld");
    println!("cargo:rerun-if-changed=src/boot.s");
    println!("cargo:rerun-if-env-changed=DEFMT_LOG");
}
