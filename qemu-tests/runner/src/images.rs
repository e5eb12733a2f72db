//! Building the test images once per run: the test kernel for x86_64 (custom JSON target with
//! build-std) and for aarch64 (`aarch64-unknown-none`), the device-model server, and the
//! Raspberry Pi `kernel8.img`.

use crate::cases::{Case, Kind};
use crate::repo_root;
use std::path::PathBuf;
use std::process::Command;

/// Paths of the built images.
pub struct Images {
    /// x86_64 test kernel ELF (also the defmt table for decoding).
    pub kernel: Option<PathBuf>,
    /// aarch64 test kernel ELF (QEMU `virt`).
    pub kernel_aarch64: Option<PathBuf>,
    /// `model-server` binary.
    pub model_server: Option<PathBuf>,
    /// Raspberry Pi flat image.
    pub kernel8: Option<PathBuf>,
    /// Raspberry Pi SD-card image (and what went into it), or why it could not be built (the
    /// boot firmware missing): only the SD-card case needs it.
    pub sdcard: Option<Result<crate::raspi::SdCard, String>>,
    /// BIOS disk image of `examples/bootloader-r5xx`.
    pub bootloader_r5xx: Option<PathBuf>,
}

/// Cargo for the image builds. Without a rustc workspace wrapper the runner itself may run
/// under (`cargo xtask test` builds the workspace with clippy's driver as one): the images
/// are linted by their own clippy step, and the model server shares no artifacts with a
/// linted build.
fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(repo_root()).env_remove(WORKSPACE_WRAPPER_ENV);
    cmd
}

/// Cargo's variable for a rustc wrapper applied to workspace members only.
pub const WORKSPACE_WRAPPER_ENV: &str = "RUSTC_WORKSPACE_WRAPPER";

fn run(what: &str, cmd: &mut Command) -> Result<(), String> {
    eprintln!("qemu-runner: building {what}");
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("building {what} failed ({s})")),
        Err(e) => Err(format!("cannot run cargo to build {what}: {e}")),
    }
}

/// Build what the selected cases need.
pub fn build(cases: &[&Case]) -> Result<Images, String> {
    let root = repo_root();
    let needs_x86 = cases.iter().any(|c| matches!(c.kind, Kind::X86 { .. }));
    let needs_bootloader = cases.iter().any(|c| matches!(c.kind, Kind::BootloaderR5xx));
    let needs_aarch64 = cases.iter().any(|c| matches!(c.kind, Kind::Aarch64 { .. }));
    let needs_model = needs_bootloader
        || cases.iter().any(|c| {
            matches!(c.kind, Kind::X86 { models, .. } | Kind::Aarch64 { models, .. } if !models.is_empty())
        });
    let needs_raspi =
        cases.iter().any(|c| matches!(c.kind, Kind::RaspiFramebuffer | Kind::RaspiSdCard));
    let mut images = Images {
        kernel: None,
        kernel_aarch64: None,
        model_server: None,
        kernel8: None,
        sdcard: None,
        bootloader_r5xx: None,
    };

    if needs_x86 {
        run(
            "the x86_64 test kernel",
            cargo().current_dir(root.join("qemu-tests/kernel")).args([
                "build",
                "--release",
                "--target",
                "../../x86_64-target.json",
                "-Z",
                "build-std=core,alloc,compiler_builtins",
                "-Z",
                "build-std-features=compiler-builtins-mem",
                "-Z",
                "json-target-spec",
                "--target-dir",
                "../../target/kernel",
            ]),
        )?;
        images.kernel = Some(root.join("target/kernel/x86_64-target/release/test-kernel"));
    }
    if needs_aarch64 {
        // The same crate; the prebuilt aarch64-unknown-none target needs no build-std.
        run(
            "the aarch64 test kernel",
            cargo().current_dir(root.join("qemu-tests/kernel")).args([
                "build",
                "--release",
                "--target",
                "aarch64-unknown-none",
                "--target-dir",
                "../../target/kernel",
            ]),
        )?;
        images.kernel_aarch64 =
            Some(root.join("target/kernel/aarch64-unknown-none/release/test-kernel"));
    }
    if needs_model {
        run("the device-model server", cargo().args(["build", "--release", "-p", "model-server"]))?;
        images.model_server = Some(root.join("target/release/model-server"));
    }
    if needs_raspi {
        let (kernel8, sdcard) = crate::raspi::build()?;
        images.kernel8 = Some(kernel8);
        images.sdcard = Some(sdcard);
    }
    if needs_bootloader {
        images.bootloader_r5xx = Some(build_bootloader_r5xx()?);
    }
    Ok(images)
}

/// `examples/bootloader-r5xx` (its own workspace and target directory): the kernel for
/// `x86_64-unknown-none`, the host tool that wraps it with rust-osdev's BIOS bootloader, and
/// the disk image that tool writes.
fn build_bootloader_r5xx() -> Result<PathBuf, String> {
    let root = repo_root();
    let dir = root.join("examples/bootloader-r5xx");
    let target = root.join("target/bootloader-r5xx");
    let in_example = || {
        let mut c = cargo();
        c.current_dir(&dir).arg("build").arg("--release").arg("--target-dir").arg(&target);
        c
    };
    // With the harness's transport to the emulated R520 (the example's `qemu-harness`).
    run(
        "the bootloader-r5xx kernel",
        in_example().args(["--target", "x86_64-unknown-none", "--features", "qemu-harness"]),
    )?;
    run(
        "the bootloader-r5xx disk-image tool",
        in_example().args(["-p", "bootloader-r5xx-disk-image"]),
    )?;
    let image = target.join("bootloader-r5xx.img");
    run(
        "the bootloader-r5xx disk image",
        Command::new(target.join("release/bootloader-r5xx-disk-image"))
            .arg(target.join("x86_64-unknown-none/release/bootloader-r5xx"))
            .arg(&image),
    )?;
    Ok(image)
}
