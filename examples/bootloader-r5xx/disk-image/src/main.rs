//! `bootloader-r5xx-disk-image <kernel ELF> <disk image>`: the BIOS disk image that boots the
//! example kernel with rust-osdev's bootloader 0.11 (`qemu-system-x86_64 -drive
//! format=raw,file=<disk image>`).

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let (Some(kernel), Some(image), None) = (args.next(), args.next(), args.next()) else {
        eprintln!("usage: bootloader-r5xx-disk-image <kernel ELF> <disk image>");
        return ExitCode::from(2);
    };
    match bootloader::BiosBoot::new(&kernel).create_disk_image(&image) {
        Ok(()) => {
            println!("{}", image.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bootloader-r5xx-disk-image: {}: {e:#}", kernel.display());
            ExitCode::FAILURE
        }
    }
}
