//! One case with guest RAM as a shared file and the device-model servers on ivshmem sockets:
//! QEMU (TCG) booting the x86_64 test kernel through PVH (or an example's BIOS disk image) on
//! `q35`, or the aarch64 test kernel on `virt`, supervised until one of them ends. The
//! plumbing (RAM file, model servers, one `ivshmem-doorbell` per model, exit statuses, log
//! decoding) is the same for both machines.

use crate::cases::{Bench, Case, Expect, Model, Outcome};
use crate::defmt_log::Decoder;
use crate::images::Images;
use crate::process::{Supervised, describe, find_program};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Guest RAM. Below q35's low-memory split (2 GiB), guest-physical address = file offset; on
/// `virt` file offset 0 is at 0x4000_0000 (the aarch64 kernel's memory plan assumes this size).
const RAM_BYTES: u64 = 256 << 20;
/// isa-debug-exit: the kernel writes 0x10 (success) or 0x11 (failure); QEMU exits (v << 1) | 1.
/// The aarch64 kernel exits through semihosting `SYS_EXIT` with the same two statuses.
const EXIT_SUCCESS: i32 = (0x10 << 1) | 1;
const EXIT_FAILURE: i32 = (0x11 << 1) | 1;
/// How long the model may take to start listening.
const MODEL_READY_TIMEOUT: Duration = Duration::from_secs(10);
/// After QEMU exits, the model should notice the hang-up and exit by itself within this.
const MODEL_EXIT_GRACE: Duration = Duration::from_secs(2);

/// Files of one case that must not outlive it: guest RAM and one socket per model.
struct Scratch {
    ram: PathBuf,
    sockets: Vec<PathBuf>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ram);
        for socket in &self.sockets {
            let _ = std::fs::remove_file(socket);
        }
    }
}

/// A started model process and what the case expects of it.
struct RunningModel {
    model: Model,
    process: Supervised,
}

/// A model's log file in the case folder: `model.log` when it runs alone, else named after it.
pub fn model_log(dir: &Path, models: &[Model], index: usize) -> PathBuf {
    if models.len() == 1 {
        dir.join("model.log")
    } else {
        dir.join(format!("model-{}.log", models[index].name))
    }
}

/// What QEMU boots.
#[derive(Clone, Copy)]
pub enum Boot<'a> {
    /// The test kernel (PVH, `-kernel`) with `case=<case>`; its serial log is defmt.
    Pvh {
        /// The test kernel ELF (also the defmt table).
        kernel: &'a Path,
        /// The kernel's case name.
        case: &'a str,
    },
    /// A BIOS disk image (`-drive`); its serial log is text and must hold a fence line
    /// ([`fence_line`]).
    Disk {
        /// The raw disk image.
        image: &'a Path,
    },
    /// The aarch64 test kernel on `virt` (`-kernel`, semihosting for the command line and the
    /// exit status) with `case=<case>`; its PL011 log is defmt.
    Virt {
        /// The aarch64 test kernel ELF (also the defmt table).
        kernel: &'a Path,
        /// The kernel's case name.
        case: &'a str,
    },
}

impl Boot<'_> {
    /// The test kernel whose defmt table decodes the log, if the log is defmt.
    fn defmt_table(&self) -> Option<&Path> {
        match *self {
            Boot::Pvh { kernel, .. } | Boot::Virt { kernel, .. } => Some(kernel),
            Boot::Disk { .. } => None,
        }
    }

    /// model-server's `--machine`: where guest RAM sits.
    fn machine(&self) -> &'static str {
        match self {
            Boot::Virt { .. } => "virt",
            _ => "q35",
        }
    }

    /// Where guest RAM sits, for reading it from the RAM file (as the model server does).
    fn ram_layout(&self) -> gpu_device_model::RamLayout {
        match self {
            Boot::Virt { .. } => gpu_device_model::RamLayout::virt(RAM_BYTES),
            _ => gpu_device_model::RamLayout::q35(RAM_BYTES),
        }
    }
}

/// Run one x86 case.
pub fn run(
    case: &Case,
    boot: Boot<'_>,
    models: &[Model],
    qemu_override: Option<&str>,
    images: &Images,
    dir: &Path,
) -> Outcome {
    let qemu = match qemu_override {
        // A negative test points the lookup at a program that does not exist.
        Some(path) => find_program_at(path),
        None if matches!(boot, Boot::Virt { .. }) => {
            find_program("qemu-system-aarch64", "QEMU_SYSTEM_AARCH64")
        }
        None => find_program("qemu-system-x86_64", "QEMU_SYSTEM_X86_64"),
    };
    let qemu = match qemu {
        Ok(q) => q,
        Err(e) => return Outcome::Setup { reason: e.to_string() },
    };

    let unique = format!("gpu-qemu-tests-{}-{}", std::process::id(), case.name);
    let scratch = Scratch {
        ram: PathBuf::from("/dev/shm").join(&unique),
        sockets: (0..models.len())
            .map(|i| std::env::temp_dir().join(format!("{unique}-{i}.sock")))
            .collect(),
    };
    if let Err(e) = File::create(&scratch.ram).and_then(|f| f.set_len(RAM_BYTES)) {
        return Outcome::Setup {
            reason: format!("cannot create guest RAM {}: {e}", scratch.ram.display()),
        };
    }

    let mut running = Vec::new();
    for (i, model) in models.iter().enumerate() {
        let Some(server) = &images.model_server else {
            return Outcome::Setup { reason: "the model server was not built".into() };
        };
        let log = model_log(dir, models, i);
        let socket = &scratch.sockets[i];
        match start_model(server, model, boot.machine(), socket, &scratch.ram, &log) {
            Ok(process) => running.push(RunningModel { model: *model, process }),
            Err(outcome) => return outcome,
        }
    }

    let mut cmd = Command::new(&qemu);
    match boot {
        // Cortex-A53: an ARMv8.0 core like the Raspberry Pi 3's, 40 physical address bits
        // (enough for virt's high ECAM at 0x40_1000_0000).
        Boot::Virt { .. } => {
            cmd.args(["-machine", "virt,memory-backend=mem", "-cpu", "cortex-a53"])
        }
        _ => cmd.args(["-machine", "q35,memory-backend=mem", "-cpu", "max"]),
    };
    cmd.args(["-accel", "tcg", "-m", "256M"])
        .arg("-object")
        .arg(format!(
            "memory-backend-file,id=mem,size={RAM_BYTES},mem-path={},share=on",
            scratch.ram.display()
        ))
        .args(["-nodefaults", "-display", "none", "-no-reboot", "-monitor", "none"])
        .arg("-serial")
        .arg(format!("file:{}", dir.join("serial.bin").display()));
    match boot {
        Boot::Virt { kernel, case } => {
            // Semihosting passes `-kernel` + `-append` as the command line and takes the exit.
            cmd.args(["-semihosting-config", "enable=on,target=native"])
                .arg("-kernel")
                .arg(kernel)
                .arg("-append")
                .arg(format!("case={case}"));
        }
        _ => {
            cmd.args(["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]);
        }
    }
    match boot {
        Boot::Virt { .. } => {}
        Boot::Pvh { kernel, case } => {
            cmd.arg("-kernel").arg(kernel).arg("-append").arg(format!("case={case}"));
        }
        Boot::Disk { image } => {
            // The bootloader's BIOS stage sets a VESA mode and stops without a VGA device.
            // snapshot=on: guest writes go to a temporary overlay; the image stays as built and
            // is only read-locked, so concurrent runs can share it.
            cmd.args(["-vga", "std"])
                .arg("-drive")
                .arg(format!("format=raw,snapshot=on,file={}", image.display()));
        }
    }
    // One ivshmem function per model, in the models' order (QEMU gives them increasing slots,
    // so the guest's bus scan meets them in this order).
    for (i, socket) in scratch.sockets.iter().enumerate() {
        cmd.arg("-chardev")
            .arg(format!("socket,path={},id=ivs{i}", socket.display()))
            .arg("-device")
            .arg(format!("ivshmem-doorbell,chardev=ivs{i},vectors={}", gpu_mailbox::VECTORS));
    }
    let qemu_log = match File::create(dir.join("qemu.log")) {
        Ok(f) => f,
        Err(e) => return Outcome::Setup { reason: format!("cannot create qemu.log: {e}") },
    };
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(qemu_log);

    let start = Instant::now();
    let mut qemu_proc = match Supervised::spawn(&mut cmd) {
        Ok(p) => p,
        Err(e) => {
            return Outcome::Setup { reason: format!("cannot start {}: {e}", qemu.display()) };
        }
    };

    let outcome = supervise(case, &mut qemu_proc, &mut running, start, dir);
    qemu_proc.kill();
    let end = Instant::now() + MODEL_EXIT_GRACE;
    for m in &mut running {
        while m.process.poll().is_none() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        m.process.kill();
    }
    let Some(kernel) = boot.defmt_table() else {
        return text_outcome(outcome, dir);
    };
    let log = decode_log(kernel, dir);
    match outcome {
        // The guest RAM file is still there (`scratch` lives to the end of this function).
        Outcome::Passed { boot_to_exit, .. } => {
            match crate::frames::check(&log, &scratch.ram, boot.ram_layout(), dir) {
                Ok(scenes) => match case.expect {
                    Expect::Frames(want) if scenes != want => Outcome::FrameMismatch {
                        reason: format!(
                            "the kernel logged frames {scenes:?}, the case expects {want:?}"
                        ),
                    },
                    _ => Outcome::Passed { boot_to_exit, bench: parse_bench(&log) },
                },
                Err(reason) => Outcome::FrameMismatch { reason },
            }
        }
        Outcome::KernelFailed { .. } => Outcome::KernelFailed { reason: last_errors(&log) },
        other => other,
    }
}

/// A text-logging image: the serial capture becomes `log.txt`; passing also needs a
/// [`fence_line`] (the image's exit status alone could come from another path).
fn text_outcome(outcome: Outcome, dir: &Path) -> Outcome {
    let serial = std::fs::read(dir.join("serial.bin")).unwrap_or_default();
    let text = String::from_utf8_lossy(&serial).replace('\r', "");
    let _ = std::fs::write(dir.join("log.txt"), &text);
    let failure = || {
        let line = text.lines().rev().find(|l| l.contains("FAILED")).or(text.lines().last());
        line.unwrap_or("no serial output").to_string()
    };
    match outcome {
        Outcome::Passed { boot_to_exit, .. } => match text.lines().find_map(fence_line) {
            Some(_) => Outcome::Passed { boot_to_exit, bench: None },
            None => Outcome::KernelFailed { reason: format!("no fence line: {}", failure()) },
        },
        Outcome::KernelFailed { .. } => Outcome::KernelFailed { reason: failure() },
        other => other,
    }
}

/// The fence number of a `<image>: fence <n> signalled` line.
fn fence_line(line: &str) -> Option<u32> {
    let (_, rest) = line.split_once(": fence ")?;
    rest.strip_suffix(" signalled")?.parse().ok()
}

fn find_program_at(path: &str) -> Result<PathBuf, crate::process::MissingProgram> {
    let p = PathBuf::from(path);
    if p.is_file() {
        Ok(p)
    } else {
        Err(crate::process::MissingProgram { program: path.to_string() })
    }
}

/// Start the model server on `socket` and wait for its "ready" line.
fn start_model(
    server: &Path,
    model: &Model,
    machine: &str,
    socket: &Path,
    ram: &Path,
    log: &Path,
) -> Result<Supervised, Outcome> {
    let name = model.name;
    let log_file = File::create(log)
        .map_err(|e| Outcome::Setup { reason: format!("cannot create {}: {e}", log.display()) })?;
    let mut cmd = Command::new(server);
    cmd.args(["--model", name, "--socket"])
        .arg(socket)
        .arg("--guest-ram")
        .arg(ram)
        .args(["--ram-size", &RAM_BYTES.to_string()])
        .args(["--machine", machine])
        .args(model.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file);
    let mut proc = Supervised::spawn(&mut cmd).map_err(|e| Outcome::Setup {
        reason: format!("cannot start {}: {e}", server.display()),
    })?;
    let stdout = proc.child_mut().stdout.take();
    let (tx, rx) = mpsc::channel();
    let model_log = log.with_extension("stdout");
    std::thread::spawn(move || {
        let Some(stdout) = stdout else { return };
        let mut out = File::create(model_log).ok();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("model-server: ready") {
                let _ = tx.send(());
            }
            if let Some(f) = out.as_mut() {
                use std::io::Write;
                let _ = writeln!(f, "{line}");
            }
        }
    });
    match rx.recv_timeout(MODEL_READY_TIMEOUT) {
        Ok(()) => Ok(proc),
        Err(_) => {
            let status = proc.kill().map(describe).unwrap_or_else(|| "still running".into());
            Err(Outcome::Setup {
                reason: format!(
                    "device model {name} did not report ready within {} s ({status}); see {}",
                    MODEL_READY_TIMEOUT.as_secs(),
                    log.display()
                ),
            })
        }
    }
}

/// Watch QEMU and the models until one ends the case or the timeout passes. A model the case
/// kills (`Model::dies`) may abort; any other model's death ends the case.
fn supervise(
    case: &Case,
    qemu: &mut Supervised,
    models: &mut [RunningModel],
    start: Instant,
    dir: &Path,
) -> Outcome {
    loop {
        // The models first: a dead model makes the guest time out and fail a little later,
        // and the report must name the real cause.
        for m in models.iter_mut() {
            let Some(status) = m.process.poll() else { continue };
            if qemu.poll().is_some() || (m.model.dies && aborted(status)) {
                continue;
            }
            // A clean exit is the model seeing QEMU hang up: QEMU closes its sockets before it
            // finishes exiting, so give it a moment to become reapable.
            let end = Instant::now() + MODEL_EXIT_GRACE;
            while status.success() && qemu.poll().is_none() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(5));
            }
            if !status.success() || qemu.poll().is_none() {
                return Outcome::ModelDied {
                    status: format!("{} {}", m.model.name, describe(status)),
                };
            }
        }
        if let Some(status) = qemu.poll() {
            let boot_to_exit = Some(start.elapsed());
            return match status.code() {
                Some(EXIT_SUCCESS) => {
                    let survivor = models.iter_mut().find_map(|m| {
                        let alive = !m.process.poll().is_some_and(aborted);
                        (m.model.dies && alive).then_some(m.model.name)
                    });
                    match survivor {
                        Some(model) => Outcome::ModelSurvived { model },
                        None => Outcome::Passed { boot_to_exit, bench: None },
                    }
                }
                Some(EXIT_FAILURE) => Outcome::KernelFailed { reason: String::new() },
                _ => Outcome::QemuCrashed {
                    status: format!("{}; {}", describe(status), tail(&dir.join("qemu.log"), 5)),
                },
            };
        }
        if start.elapsed() > case.timeout {
            return Outcome::TimedOut { after: case.timeout };
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The model aborted, as `--die-after-requests` makes it.
fn aborted(status: std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(libc::SIGABRT)
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let last: Vec<&str> = text.lines().rev().take(lines).collect();
    if last.is_empty() {
        format!("{} is empty", path.display())
    } else {
        last.into_iter().rev().collect::<Vec<_>>().join(" | ")
    }
}

/// Decode the serial capture into `log.txt`; returns the lines.
fn decode_log(kernel: &Path, dir: &Path) -> Vec<String> {
    let serial = std::fs::read(dir.join("serial.bin")).unwrap_or_default();
    let lines = match Decoder::load(kernel) {
        Ok(decoder) => decoder.decode(&serial),
        Err(e) => vec![format!("(log not decoded: {e})")],
    };
    let _ = std::fs::write(dir.join("log.txt"), lines.join("\n") + "\n");
    lines
}

fn last_errors(log: &[String]) -> String {
    let errors: Vec<&str> = log
        .iter()
        .filter(|l| l.starts_with("ERROR"))
        .map(|l| l.trim_start_matches("ERROR").trim())
        .collect();
    match errors.last() {
        Some(e) => (*e).to_string(),
        None => log.last().cloned().unwrap_or_else(|| "no log output".into()),
    }
}

/// Parse `bench: rtt_per_s=<n> dma_bytes_per_s=<n>` from the benchmark case's log.
fn parse_bench(log: &[String]) -> Option<Bench> {
    // Lines are "<LEVEL> <message>"; the message itself must start with "bench: ".
    log.iter().find_map(|l| {
        let fields = l.split_once(' ')?.1.trim_start().strip_prefix("bench: ")?;
        let mut rtt = None;
        let mut dma = None;
        for kv in fields.split_whitespace() {
            match kv.split_once('=') {
                Some(("rtt_per_s", v)) => rtt = v.parse().ok(),
                Some(("dma_bytes_per_s", v)) => dma = v.parse().ok(),
                _ => {}
            }
        }
        Some(Bench { round_trips_per_s: rtt?, dma_bytes_per_s: dma? })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_line_is_parsed_from_the_decoded_log() {
        let log = vec![
            "INFO  selftest-bench: start".to_string(),
            "INFO  bench: 5000 round trips in 37714064 ns".to_string(),
            "INFO  bench: rtt_per_s=104512 dma_bytes_per_s=52428800".to_string(),
        ];
        assert_eq!(
            parse_bench(&log),
            Some(Bench { round_trips_per_s: 104512.0, dma_bytes_per_s: 52428800.0 })
        );
        assert_eq!(parse_bench(&["INFO  bench: rtt_per_s=x".to_string()]), None);
    }

    #[test]
    fn fence_lines_give_the_fence_number() {
        assert_eq!(fence_line("bootloader-r5xx: fence 1 signalled"), Some(1));
        assert_eq!(fence_line("bootloader-r5xx: fence signalled"), None);
        assert_eq!(fence_line("bootloader-r5xx: FAILED: Fence(TimedOut)"), None);
    }

    #[test]
    fn text_images_pass_only_with_a_fence_line() {
        let dir = std::env::temp_dir().join(format!("runner-text-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let passed = || Outcome::Passed { boot_to_exit: None, bench: None };
        std::fs::write(dir.join("serial.bin"), "x: booted\r\nx: fence 3 signalled\r\n").unwrap();
        assert!(matches!(text_outcome(passed(), &dir), Outcome::Passed { .. }));
        std::fs::write(dir.join("serial.bin"), "x: booted\r\n").unwrap();
        let failed = text_outcome(passed(), &dir);
        assert!(
            matches!(&failed, Outcome::KernelFailed { reason } if reason.contains("no fence line"))
        );
        std::fs::write(dir.join("serial.bin"), "x: FAILED: Init(Microcode)\r\n").unwrap();
        let failed = text_outcome(Outcome::KernelFailed { reason: String::new() }, &dir);
        assert!(
            matches!(&failed, Outcome::KernelFailed { reason } if reason.contains("Init(Microcode)"))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lone_model_logs_to_model_log_and_several_by_name() {
        let dir = Path::new("/case");
        let one = [Model::new("r5xx", &[])];
        assert_eq!(model_log(dir, &one, 0), dir.join("model.log"));
        let two = [Model::new("r5xx", &[]), Model::new("evergreen-cypress", &[])];
        assert_eq!(model_log(dir, &two, 0), dir.join("model-r5xx.log"));
        assert_eq!(model_log(dir, &two, 1), dir.join("model-evergreen-cypress.log"));
    }

    #[test]
    fn kernel_failures_report_the_last_error_line() {
        let log = vec![
            "INFO  a".to_string(),
            "ERROR first".to_string(),
            "ERROR panic at x.rs:3".to_string(),
        ];
        assert_eq!(last_errors(&log), "panic at x.rs:3");
        assert_eq!(last_errors(&[]), "no log output");
    }
}
