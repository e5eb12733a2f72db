//! The Raspberry Pi 3 case: `kernel8.img` on `qemu-system-aarch64 -M raspi3b` (TCG) allocates a
//! framebuffer through the VideoCore mailbox and draws a test pattern; the runner waits for the
//! image's `DONE` line, checks its typed `V3D not present` line (QEMU has no V3D), takes a QMP
//! `screendump`, checks pixels and saves a PNG.

use crate::cases::{Case, Outcome};
use crate::images::Images;
use crate::process::{Supervised, describe, find_program};
use crate::repo_root;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Load address of `kernel8.img` on the Pi 3 (the firmware jumps to its first byte).
const LOAD_ADDRESS: u64 = 0x8_0000;

/// The boot firmware files the SD card needs beside `kernel8.img` and `config.txt`: the GPU's
/// second-stage loader, its firmware and the firmware's memory-split fixups (Raspberry Pi
/// documentation "The boot folder").
pub const FIRMWARE_FILES: [&str; 3] = ["bootcode.bin", "start.elf", "fixup.dat"];

/// Where the boot firmware is: `RASPI_FIRMWARE_DIR`, else where `scripts/setup.sh` unpacks
/// Debian's `raspi-firmware` package (`target/raspi-firmware/usr/lib/raspi-firmware`).
pub fn firmware_dir() -> PathBuf {
    match std::env::var_os("RASPI_FIRMWARE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => repo_root().join("target/raspi-firmware/usr/lib/raspi-firmware"),
    }
}

/// The built SD-card image and the files that went into it, in the order they were written.
pub struct SdCard {
    /// `target/rpi/sdcard.img`.
    pub path: PathBuf,
    /// Root files.
    pub files: Vec<rpi_sdcard::BootFile>,
}

/// Build `target/rpi/sdcard.img` from the boot firmware, `kernel8.img` and `config.txt`.
pub fn build_sdcard(kernel8: &[u8], config: &[u8]) -> Result<SdCard, String> {
    let firmware = firmware_dir();
    let mut files = Vec::new();
    for name in FIRMWARE_FILES {
        let path = firmware.join(name);
        let bytes = std::fs::read(&path).map_err(|e| {
            format!(
                "{}: {e} (the Raspberry Pi boot firmware: run `bash scripts/setup.sh`)",
                path.display()
            )
        })?;
        files.push(rpi_sdcard::BootFile { name: name.into(), bytes });
    }
    files.push(rpi_sdcard::BootFile { name: "config.txt".into(), bytes: config.to_vec() });
    files.push(rpi_sdcard::BootFile { name: "kernel8.img".into(), bytes: kernel8.to_vec() });
    let path = repo_root().join("target/rpi/sdcard.img");
    rpi_sdcard::write_image(&path, &files)
        .map_err(|e| format!("{}: {}", path.display(), chain(&e)))?;
    Ok(SdCard { path, files })
}

/// An error and its sources on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Read the SD-card image back: exactly one partition, in slot 1, bootable, type 0x0C (FAT32
/// LBA), holding a FAT32 file system whose root has exactly the files written, in that order,
/// each byte for byte, and `kernel8.img` equal to `target/rpi/kernel8.img` as built.
/// What it found goes to the case's `log.txt` (printed by `qemu-runner demo`).
pub fn check_sdcard(images: &Images, dir: &Path) -> Outcome {
    let card = match &images.sdcard {
        Some(Ok(card)) => card,
        Some(Err(reason)) => return Outcome::Setup { reason: reason.clone() },
        None => return Outcome::Setup { reason: "the SD-card image was not built".into() },
    };
    let verdict = (|| -> Result<(), String> {
        let back = rpi_sdcard::read_image(&card.path)
            .map_err(|e| format!("{}: {}", card.path.display(), chain(&e)))?;
        let p = back.partitions[0];
        if (p.slot, p.bootable, p.kind) != (1, true, rpi_sdcard::PARTITION_TYPE_FAT32_LBA) {
            return Err(format!(
                "partition {} bootable {} type {:#04x}, expected 1, true, 0x0c",
                p.slot, p.bootable, p.kind
            ));
        }
        if !back.fat32 {
            return Err("the partition is not FAT32".into());
        }
        let want: Vec<&str> = card.files.iter().map(|f| f.name.as_str()).collect();
        if back.names() != want {
            return Err(format!("root holds {:?}, expected {want:?}", back.names()));
        }
        for f in &card.files {
            if back.file(&f.name).map(|b| &b.bytes) != Some(&f.bytes) {
                return Err(format!("{} differs from the file written", f.name));
            }
        }
        let built = images.kernel8.as_ref().ok_or("kernel8.img was not built")?;
        let built = std::fs::read(built).map_err(|e| format!("{}: {e}", built.display()))?;
        if back.file("kernel8.img").map(|k| &k.bytes) != Some(&built) {
            return Err("kernel8.img on the card is not target/rpi/kernel8.img".into());
        }
        let mut log = format!(
            "{}: partition {} bootable, type {:#04x} (FAT32 LBA), sectors {}-{}, FAT32 volume {:?}\n",
            card.path.display(),
            p.slot,
            p.kind,
            p.start_lba,
            p.start_lba + p.sectors - 1,
            back.label
        );
        for f in &back.files {
            log.push_str(&format!("  {:<13} {:>8} bytes\n", f.name, f.bytes.len()));
        }
        log.push_str("kernel8.img equals target/rpi/kernel8.img\n");
        std::fs::write(dir.join("log.txt"), log).map_err(|e| format!("log.txt: {e}"))
    })();
    match verdict {
        Ok(()) => Outcome::Passed { boot_to_exit: None, bench: None },
        Err(reason) => Outcome::ImageInvalid { reason },
    }
}

/// Build the Pi image: the ELF for `aarch64-unknown-none`, then `kernel8.img` (its loadable
/// segments as a flat binary from [`LOAD_ADDRESS`]), the SD-card boot folder
/// `target/rpi/sdcard/` (`kernel8.img` + `config.txt`) and the SD-card image
/// `target/rpi/sdcard.img` ([`build_sdcard`]; its error is kept for the SD-card case).
pub fn build() -> Result<(PathBuf, Result<SdCard, String>), String> {
    let root = repo_root();
    eprintln!("qemu-runner: building the Raspberry Pi image");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(root.join("qemu-tests/rpi"))
        .env_remove(crate::images::WORKSPACE_WRAPPER_ENV)
        .args([
            "build",
            "--release",
            "--target",
            "aarch64-unknown-none",
            "--target-dir",
            "../../target/rpi",
        ])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building the Raspberry Pi image failed ({status})"));
    }
    let out = root.join("target/rpi");
    let elf = std::fs::read(out.join("aarch64-unknown-none/release/kernel8"))
        .map_err(|e| format!("reading the Pi ELF: {e}"))?;
    let image = flat_binary(&elf, LOAD_ADDRESS)?;
    let sdcard = out.join("sdcard");
    std::fs::create_dir_all(&sdcard).map_err(|e| format!("{}: {e}", sdcard.display()))?;
    let kernel8 = out.join("kernel8.img");
    std::fs::write(&kernel8, &image).map_err(|e| format!("{}: {e}", kernel8.display()))?;
    std::fs::write(sdcard.join("kernel8.img"), &image)
        .map_err(|e| format!("sdcard/kernel8.img: {e}"))?;
    let config = std::fs::read(root.join("qemu-tests/rpi/config.txt"))
        .map_err(|e| format!("qemu-tests/rpi/config.txt: {e}"))?;
    std::fs::write(sdcard.join("config.txt"), &config)
        .map_err(|e| format!("sdcard/config.txt: {e}"))?;
    let card = build_sdcard(&image, &config);
    Ok((kernel8, card))
}

fn le(bytes: &[u8], at: usize, len: usize) -> Result<u64, String> {
    let b = bytes.get(at..at + len).ok_or("truncated ELF")?;
    Ok(b.iter().rev().fold(0, |v, &x| (v << 8) | u64::from(x)))
}

/// The PT_LOAD segments of a little-endian ELF64, placed at `p_paddr - base` (gaps zeroed, BSS
/// not included). The entry point must be `base`, where the firmware starts executing.
pub fn flat_binary(elf: &[u8], base: u64) -> Result<Vec<u8>, String> {
    if elf.get(..6) != Some(&[0x7F, b'E', b'L', b'F', 2, 1][..]) {
        return Err("not a little-endian ELF64 file".into());
    }
    let entry = le(elf, 0x18, 8)?;
    if entry != base {
        return Err(format!("entry point {entry:#x} is not the load address {base:#x}"));
    }
    let phoff = le(elf, 0x20, 8)? as usize;
    let phentsize = le(elf, 0x36, 2)? as usize;
    let phnum = le(elf, 0x38, 2)? as usize;
    let mut image = Vec::new();
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        if le(elf, ph, 4)? != 1 {
            continue; // not PT_LOAD
        }
        let offset = le(elf, ph + 0x08, 8)? as usize;
        let paddr = le(elf, ph + 0x18, 8)?;
        let filesz = le(elf, ph + 0x20, 8)? as usize;
        if filesz == 0 {
            continue;
        }
        let at = paddr.checked_sub(base).ok_or(format!("segment at {paddr:#x} below {base:#x}"))?
            as usize;
        let bytes = elf.get(offset..offset + filesz).ok_or("segment outside the ELF")?;
        if image.len() < at + filesz {
            image.resize(at + filesz, 0);
        }
        image[at..at + filesz].copy_from_slice(bytes);
    }
    if image.is_empty() {
        return Err("the ELF has no loadable bytes".into());
    }
    Ok(image)
}

/// A decoded screendump: RGB pixels.
pub struct Picture {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// RGB triples, row-major.
    pub rgb: Vec<u8>,
}

impl Picture {
    /// The pixel at (x, y).
    pub fn pixel(&self, x: usize, y: usize) -> Option<[u8; 3]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = (y * self.width + x) * 3;
        Some([self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]])
    }

    /// Parse a binary PPM (P6, maxval 255), QEMU's default screendump format.
    pub fn from_ppm(bytes: &[u8]) -> Result<Picture, String> {
        let mut fields = Vec::new();
        let mut pos = 0;
        while fields.len() < 4 {
            while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
                pos += 1;
            }
            if bytes.get(pos) == Some(&b'#') {
                while pos < bytes.len() && bytes[pos] != b'\n' {
                    pos += 1;
                }
                continue;
            }
            let start = pos;
            while pos < bytes.len() && !bytes[pos].is_ascii_whitespace() {
                pos += 1;
            }
            if start == pos {
                return Err("truncated PPM header".into());
            }
            fields.push(String::from_utf8_lossy(&bytes[start..pos]).into_owned());
        }
        pos += 1; // the single whitespace byte after maxval
        if fields[0] != "P6" || fields[3] != "255" {
            return Err(format!("unsupported PPM ({} maxval {})", fields[0], fields[3]));
        }
        let width: usize = fields[1].parse().map_err(|_| "bad PPM width".to_string())?;
        let height: usize = fields[2].parse().map_err(|_| "bad PPM height".to_string())?;
        let rgb = bytes.get(pos..pos + width * height * 3).ok_or("truncated PPM pixels")?.to_vec();
        Ok(Picture { width, height, rgb })
    }

    /// Save as PNG.
    pub fn save_png(&self, path: &Path) -> Result<(), String> {
        let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut enc =
            png::Encoder::new(std::io::BufWriter::new(file), self.width as u32, self.height as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(&self.rgb).map_err(|e| e.to_string())
    }
}

/// A QMP session (QEMU Machine Protocol, JSON over a UNIX socket).
struct Qmp {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Qmp {
    fn connect(path: &Path, timeout: Duration) -> Result<Qmp, String> {
        let end = Instant::now() + timeout;
        let stream = loop {
            match UnixStream::connect(path) {
                Ok(s) => break s,
                Err(e) if Instant::now() > end => return Err(format!("QMP connect: {e}")),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        stream.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
        let writer = stream.try_clone().map_err(|e| e.to_string())?;
        let mut qmp = Qmp { reader: BufReader::new(stream), writer };
        qmp.read_message()?; // greeting
        qmp.execute("qmp_capabilities", json!({}))?;
        Ok(qmp)
    }

    fn read_message(&mut self) -> Result<Value, String> {
        let mut line = String::new();
        self.reader.read_line(&mut line).map_err(|e| format!("QMP read: {e}"))?;
        serde_json::from_str(&line).map_err(|e| format!("QMP: bad JSON {line:?}: {e}"))
    }

    /// Run a command; events arriving before the reply are skipped.
    fn execute(&mut self, command: &str, arguments: Value) -> Result<Value, String> {
        let msg = json!({ "execute": command, "arguments": arguments });
        writeln!(self.writer, "{msg}").map_err(|e| format!("QMP write: {e}"))?;
        loop {
            let reply = self.read_message()?;
            if let Some(ret) = reply.get("return") {
                return Ok(ret.clone());
            }
            if let Some(err) = reply.get("error") {
                return Err(format!("QMP {command}: {err}"));
            }
        }
    }
}

/// Run the Pi case.
pub fn run(case: &Case, images: &Images, dir: &Path) -> Outcome {
    let qemu = match find_program("qemu-system-aarch64", "QEMU_SYSTEM_AARCH64") {
        Ok(q) => q,
        Err(e) => return Outcome::Setup { reason: e.to_string() },
    };
    let Some(image) = &images.kernel8 else {
        return Outcome::Setup { reason: "kernel8.img was not built".into() };
    };
    let qmp_path =
        std::env::temp_dir().join(format!("gpu-qemu-tests-{}-raspi.qmp", std::process::id()));
    let _ = std::fs::remove_file(&qmp_path);
    let serial = dir.join("serial.txt");
    let mut cmd = Command::new(&qemu);
    cmd.args(["-M", "raspi3b", "-accel", "tcg", "-display", "none", "-monitor", "none"])
        .arg("-kernel")
        .arg(image)
        .arg("-serial")
        .arg(format!("file:{}", serial.display()))
        .arg("-qmp")
        .arg(format!("unix:{},server=on,wait=off", qmp_path.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    match std::fs::File::create(dir.join("qemu.log")) {
        Ok(f) => cmd.stderr(f),
        Err(e) => return Outcome::Setup { reason: format!("cannot create qemu.log: {e}") },
    };
    let start = Instant::now();
    let mut proc = match Supervised::spawn(&mut cmd) {
        Ok(p) => p,
        Err(e) => {
            return Outcome::Setup { reason: format!("cannot start {}: {e}", qemu.display()) };
        }
    };
    let outcome = check(case, &mut proc, &qmp_path, &serial, dir, start);
    proc.kill();
    let _ = std::fs::remove_file(&qmp_path);
    let _ = std::fs::copy(&serial, dir.join("log.txt"));
    outcome
}

fn check(
    case: &Case,
    proc: &mut Supervised,
    qmp: &Path,
    serial: &Path,
    dir: &Path,
    start: Instant,
) -> Outcome {
    // Wait for the image to finish drawing.
    loop {
        let text = std::fs::read_to_string(serial).unwrap_or_default();
        if text.lines().any(|l| l.trim_start().starts_with("DONE")) {
            break;
        }
        let failed =
            |l: &&str| ["FAIL", "PANIC", "EXCEPTION"].iter().any(|m| l.trim_start().starts_with(m));
        if let Some(line) = text.lines().find(failed) {
            return Outcome::KernelFailed { reason: line.trim().to_string() };
        }
        if let Some(status) = proc.poll() {
            return Outcome::QemuCrashed { status: describe(status) };
        }
        if start.elapsed() > case.timeout {
            return Outcome::TimedOut { after: case.timeout };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let boot_to_done = start.elapsed();
    let text = std::fs::read_to_string(serial).unwrap_or_default();
    if let Err(e) = check_v3d_absent(&text) {
        return Outcome::KernelFailed { reason: e };
    }
    let mut session = match Qmp::connect(qmp, Duration::from_secs(10)) {
        Ok(s) => s,
        Err(e) => return Outcome::Setup { reason: e },
    };
    let ppm = dir.join("framebuffer.ppm");
    if let Err(e) = session.execute("screendump", json!({ "filename": ppm.display().to_string() }))
    {
        return Outcome::Setup { reason: e };
    }
    let picture =
        match std::fs::read(&ppm).map_err(|e| e.to_string()).and_then(|b| Picture::from_ppm(&b)) {
            Ok(p) => p,
            Err(e) => return Outcome::Setup { reason: format!("screendump: {e}") },
        };
    if let Err(e) = picture.save_png(&dir.join("framebuffer.png")) {
        return Outcome::Setup { reason: format!("saving the PNG: {e}") };
    }
    let _ = std::fs::remove_file(&ppm);
    let _ = session.execute("quit", json!({}));
    match check_pattern(&picture) {
        Ok(()) => Outcome::Passed { boot_to_exit: Some(boot_to_done), bench: None },
        Err(e) => Outcome::KernelFailed { reason: format!("framebuffer check: {e}") },
    }
}

/// What the image must log about the V3D on QEMU `raspi3b`, which has none (its V3D window is
/// an unimplemented-device region reading zero): the driver's typed probe refusal, `NotV3d`
/// with `V3D_IDENT0` read as zero, and the firmware's refusal of the "enable QPU" tag.
pub fn check_v3d_absent(serial: &str) -> Result<(), String> {
    const PREFIX: &str = "V3D not present (";
    let Some(line) = serial.lines().map(str::trim).find(|l| l.starts_with(PREFIX)) else {
        return Err(format!("no line starting {PREFIX:?} (the V3D probe did not report)"));
    };
    for expected in ["firmware power-up refused: tag 0x00030012", "V3D_IDENT0 reads 0x00000000"] {
        if !line.contains(expected) {
            return Err(format!("the V3D line lacks {expected:?}: {line:?}"));
        }
    }
    Ok(())
}

/// The test pattern the Pi image promises to draw (qemu-tests/rpi/README.md), written here
/// from that description, not from the image's code:
/// rows `0..3h/4` eight bars of width `w/8` (white, yellow, cyan, green, magenta, red, blue,
/// black); rows `3h/4..7h/8` a grey ramp `x * 255 / (w - 1)`; rows `7h/8..h` a 20-pixel
/// checkerboard, white where `x/20 + (y - 7h/8)/20` is even.
pub fn expected_pixel(x: usize, y: usize, w: usize, h: usize) -> [u8; 3] {
    const BARS: [[u8; 3]; 8] = [
        [255, 255, 255],
        [255, 255, 0],
        [0, 255, 255],
        [0, 255, 0],
        [255, 0, 255],
        [255, 0, 0],
        [0, 0, 255],
        [0, 0, 0],
    ];
    let (bars_end, ramp_end) = (h * 3 / 4, h * 7 / 8);
    if y < bars_end {
        BARS[(x * 8 / w).min(7)]
    } else if y < ramp_end {
        let v = (x * 255 / (w - 1)).min(255) as u8;
        [v, v, v]
    } else if (x / 20 + (y - ramp_end) / 20).is_multiple_of(2) {
        [255, 255, 255]
    } else {
        [0, 0, 0]
    }
}

/// Check the screendump: 640x480, every bar's centre named in the error if wrong, then every
/// pixel.
pub fn check_pattern(picture: &Picture) -> Result<(), String> {
    let (w, h) = (picture.width, picture.height);
    if (w, h) != (640, 480) {
        return Err(format!("screen is {w}x{h}, expected 640x480"));
    }
    const NAMES: [&str; 8] =
        ["white", "yellow", "cyan", "green", "magenta", "red", "blue", "black"];
    for (i, name) in NAMES.iter().enumerate() {
        let (x, y) = (i * w / 8 + w / 16, h * 3 / 8);
        let got = picture.pixel(x, y).unwrap_or_default();
        if got != expected_pixel(x, y, w, h) {
            return Err(format!("bar {i} ({name}) at ({x}, {y}) is {got:?}"));
        }
    }
    let mut wrong = 0usize;
    let mut first = None;
    for y in 0..h {
        for x in 0..w {
            let got = picture.pixel(x, y).unwrap_or_default();
            if got != expected_pixel(x, y, w, h) {
                wrong += 1;
                first.get_or_insert((x, y, got));
            }
        }
    }
    match first {
        None => Ok(()),
        Some((x, y, got)) => Err(format!(
            "{wrong} pixels differ from the pattern; first at ({x}, {y}): {got:?}, expected {:?}",
            expected_pixel(x, y, w, h)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern_picture() -> Picture {
        let (w, h) = (640, 480);
        let mut rgb = Vec::with_capacity(w * h * 3);
        for y in 0..h {
            for x in 0..w {
                rgb.extend_from_slice(&expected_pixel(x, y, w, h));
            }
        }
        Picture { width: w, height: h, rgb }
    }

    #[test]
    fn the_expected_pattern_passes_and_swapped_channels_fail() {
        let mut p = pattern_picture();
        assert_eq!(check_pattern(&p), Ok(()));
        for px in p.rgb.chunks_mut(3) {
            px.swap(0, 2); // BGR instead of RGB
        }
        let err = check_pattern(&p).unwrap_err();
        assert!(err.contains("bar 1 (yellow)"), "{err}");
    }

    #[test]
    fn a_single_wrong_pixel_is_found() {
        let mut p = pattern_picture();
        let i = (470 * 640 + 5) * 3;
        p.rgb[i] ^= 0xFF;
        let err = check_pattern(&p).unwrap_err();
        assert!(err.starts_with("1 pixels differ"), "{err}");
        assert!(err.contains("(5, 470)"), "{err}");
    }

    #[test]
    fn the_v3d_line_must_name_the_probe_and_the_firmware_refusal() {
        let ok = "pattern drawn\nV3D not present (firmware power-up refused: tag 0x00030012: \
                  0-byte response, expected 4): probe failed: V3D_IDENT0 reads 0x00000000, \
                  not \"V3D\" (powered off?)\nDONE (1 us)\n";
        assert_eq!(check_v3d_absent(ok), Ok(()));
        let err = check_v3d_absent("pattern drawn\nDONE (1 us)\n").unwrap_err();
        assert!(err.contains("no line"), "{err}");
        let wrong = ok.replace("0x00000000", "0xffffffff");
        assert!(check_v3d_absent(&wrong).unwrap_err().contains("V3D_IDENT0 reads 0x00000000"));
    }

    #[test]
    fn the_sdcard_check_fails_when_the_card_is_not_what_was_built() {
        let dir = std::env::temp_dir().join(format!("qemu-runner-sdcard-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, bytes: &[u8]| rpi_sdcard::BootFile {
            name: name.into(),
            bytes: bytes.to_vec(),
        };
        let files = vec![file("config.txt", b"arm_64bit=1\n"), file("kernel8.img", &[7; 3000])];
        let path = dir.join("sdcard.img");
        rpi_sdcard::write_image(&path, &files).unwrap();
        let kernel8 = dir.join("kernel8.img");
        std::fs::write(&kernel8, [7; 3000]).unwrap();
        let mut images = Images {
            kernel: None,
            kernel_aarch64: None,
            model_server: None,
            kernel8: Some(kernel8.clone()),
            sdcard: Some(Ok(SdCard { path: path.clone(), files: files.clone() })),
            bootloader_r5xx: None,
        };
        let ok = check_sdcard(&images, &dir);
        assert!(matches!(ok, Outcome::Passed { .. }), "{ok}");
        // A kernel built after the card was written.
        std::fs::write(&kernel8, [8; 3000]).unwrap();
        let stale = check_sdcard(&images, &dir);
        assert!(
            matches!(&stale, Outcome::ImageInvalid { reason } if reason.contains("kernel8.img")),
            "{stale}"
        );
        // A file the card should hold but does not.
        let mut more = files.clone();
        more.insert(0, file("bootcode.bin", &[1; 10]));
        images.sdcard = Some(Ok(SdCard { path, files: more }));
        let missing = check_sdcard(&images, &dir);
        assert!(
            matches!(&missing, Outcome::ImageInvalid { reason } if reason.contains("bootcode.bin")),
            "{missing}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ppm_screendumps_are_parsed() {
        let mut ppm = b"P6\n# qemu\n2 1\n255\n".to_vec();
        ppm.extend_from_slice(&[1, 2, 3, 4, 5, 6]);
        let p = Picture::from_ppm(&ppm).unwrap();
        assert_eq!((p.width, p.height), (2, 1));
        assert_eq!(p.pixel(1, 0), Some([4, 5, 6]));
        assert_eq!(p.pixel(2, 0), None);
        assert!(Picture::from_ppm(b"P6\n2 1\n255\n\x01").is_err());
    }

    #[test]
    fn flat_binary_places_segments_at_their_load_address() {
        // A minimal ELF64 header + one PT_LOAD of 4 bytes at paddr 0x80004.
        let mut elf = vec![0u8; 0x40 + 0x38 + 4];
        elf[..6].copy_from_slice(&[0x7F, b'E', b'L', b'F', 2, 1]);
        elf[0x18..0x20].copy_from_slice(&0x8_0000u64.to_le_bytes());
        elf[0x20..0x28].copy_from_slice(&0x40u64.to_le_bytes());
        elf[0x36..0x38].copy_from_slice(&0x38u16.to_le_bytes());
        elf[0x38..0x3A].copy_from_slice(&1u16.to_le_bytes());
        let ph = 0x40;
        elf[ph..ph + 4].copy_from_slice(&1u32.to_le_bytes());
        elf[ph + 0x08..ph + 0x10].copy_from_slice(&((0x40 + 0x38) as u64).to_le_bytes());
        elf[ph + 0x18..ph + 0x20].copy_from_slice(&0x8_0004u64.to_le_bytes());
        elf[ph + 0x20..ph + 0x28].copy_from_slice(&4u64.to_le_bytes());
        elf[0x40 + 0x38..].copy_from_slice(&[0xAA, 0xBB, 0xCC, 0xDD]);
        assert_eq!(flat_binary(&elf, 0x8_0000), Ok(vec![0, 0, 0, 0, 0xAA, 0xBB, 0xCC, 0xDD]));
        elf[0x18] = 0x10;
        assert!(flat_binary(&elf, 0x8_0000).unwrap_err().contains("entry point"));
    }
}
