//! Command-line parsing.

use gpu_device_model::Pacing;
use gpu_device_model::transport::Injection;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

/// Usage text.
pub const USAGE: &str =
    "usage: model-server --model NAME --socket PATH --guest-ram PATH --ram-size BYTES \
[--machine q35|virt] [--pacing SPEC] [--fault LIST] [--fault-after-requests N | --die-after-requests N]

  --model NAME                 the device model to run (see below)
  --socket PATH                UNIX socket QEMU's ivshmem-doorbell chardev connects to
  --guest-ram PATH             QEMU's memory-backend-file (share=on); created if absent
                               (and removed again if the server fails to start), sized if
                               empty; an existing file smaller than --ram-size is refused
  --ram-size BYTES             guest RAM size (QEMU -m), e.g. 536870912, 0x20000000, 512M, 2G
  --machine q35|virt           where QEMU puts guest RAM: q35 (x86_64, the default) or the Arm
                               virt machine (RAM from 0x40000000)
  --pacing SPEC                how the engines advance: run-to-idle, seeded:<u64> (0..=3 ticks
                               per request and per millisecond while busy, reproducible from
                               the seed) or threaded:<ticks-per-ms> (an engine thread on the
                               wall clock); default: $GPU_MODEL_PACING, else seeded with the
                               framework's default seed
  --fault LIST                 the model's injectable faults from the start, comma-separated
                               (r5xx: cp-stall, all-ones, me-ram-corrupt[=ENTRY], dma-fault,
                               slow=TICKS; v3d: cp-stall, all-ones, dma-fault, slow=TICKS,
                               missed-irq, outomem-storm); the guest's Inject requests change
                               them later
  --fault-after-requests N     serve N requests, then enter the error state
  --die-after-requests N       serve N requests, then abort when the next one arrives
  --help                       this text";

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// `--model`.
    pub model: String,
    /// `--socket`.
    pub socket: PathBuf,
    /// `--guest-ram`.
    pub guest_ram: PathBuf,
    /// `--ram-size` in bytes.
    pub ram_size: u64,
    /// `--machine`.
    pub machine: Machine,
    /// `--fault-after-requests` / `--die-after-requests`.
    pub injection: Injection,
    /// `--pacing` (`None`: the environment's, else the default).
    pub pacing: Option<Pacing>,
    /// `--fault`, as given (the model parses it).
    pub faults: Option<String>,
}

/// The QEMU machine whose guest RAM the server maps (its guest-physical layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Machine {
    /// x86_64 `q35`.
    #[default]
    Q35,
    /// Arm `virt`.
    Virt,
}

impl Machine {
    /// Guest RAM layout of this machine with `ram_size` bytes.
    pub fn layout(self, ram_size: u64) -> gpu_device_model::RamLayout {
        match self {
            Machine::Q35 => gpu_device_model::RamLayout::q35(ram_size),
            Machine::Virt => gpu_device_model::RamLayout::virt(ram_size),
        }
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Serve a model.
    Run(Args),
    /// Print usage.
    Help,
}

/// A command line that cannot be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// An option this program does not have.
    UnknownOption(String),
    /// An option without its value.
    MissingValue(&'static str),
    /// A required option is absent.
    Missing(&'static str),
    /// An option given twice (or both fault injections).
    Repeated(&'static str),
    /// A value that is not valid UTF-8 where text is needed.
    NotUnicode(&'static str),
    /// `--socket` and `--guest-ram` name the same path: binding the socket would replace
    /// the guest RAM file.
    SamePath {
        /// The path given to both.
        path: PathBuf,
    },
    /// A number that does not parse.
    BadNumber {
        /// The option.
        option: &'static str,
        /// What was given.
        value: String,
    },
    /// A `--pacing` that does not parse.
    BadPacing(gpu_device_model::BadPacing),
    /// A `--machine` other than `q35` or `virt`.
    BadMachine(String),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::UnknownOption(o) => write!(f, "unknown option `{o}`"),
            CliError::MissingValue(o) => write!(f, "{o} needs a value"),
            CliError::Missing(o) => write!(f, "{o} is required"),
            CliError::Repeated(o) => write!(f, "{o} given more than once"),
            CliError::NotUnicode(o) => write!(f, "the value of {o} is not valid UTF-8"),
            CliError::SamePath { path } => write!(
                f,
                "--socket and --guest-ram are both {}: they must be different files",
                path.display()
            ),
            CliError::BadNumber { option, value } => {
                write!(f, "{option}: `{value}` is not a number")
            }
            CliError::BadPacing(e) => write!(f, "--pacing: {e}"),
            CliError::BadMachine(m) => write!(f, "--machine: `{m}` is neither q35 nor virt"),
        }
    }
}

impl std::error::Error for CliError {}

/// Parse a byte count: decimal or `0x` hex, optionally with a binary `K`/`M`/`G` suffix.
pub fn parse_size(option: &'static str, text: &str) -> Result<u64, CliError> {
    let bad = || CliError::BadNumber { option, value: text.to_owned() };
    let (digits, shift) = match text.as_bytes().last() {
        Some(b'K' | b'k') => (&text[..text.len() - 1], 10),
        Some(b'M' | b'm') => (&text[..text.len() - 1], 20),
        Some(b'G' | b'g') => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    let value = gpu_device_model::parse_number(digits).ok_or_else(bad)?;
    value.checked_mul(1 << shift).ok_or_else(bad)
}

/// Parse the arguments (without the program name).
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, CliError> {
    let mut args = args.into_iter();
    let (mut model, mut socket, mut guest_ram, mut ram_size) = (None, None, None, None);
    let (mut injection, mut pacing, mut faults, mut machine) = (None, None, None, None);
    fn set<T>(slot: &mut Option<T>, name: &'static str, value: T) -> Result<(), CliError> {
        if slot.replace(value).is_some() { Err(CliError::Repeated(name)) } else { Ok(()) }
    }
    while let Some(arg) = args.next() {
        let Some(arg) = arg.to_str().map(str::to_owned) else {
            return Err(CliError::UnknownOption(arg.to_string_lossy().into_owned()));
        };
        let name: &'static str = match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help),
            "--model" => "--model",
            "--socket" => "--socket",
            "--guest-ram" => "--guest-ram",
            "--ram-size" => "--ram-size",
            "--machine" => "--machine",
            "--pacing" => "--pacing",
            "--fault" => "--fault",
            "--fault-after-requests" => "--fault-after-requests",
            "--die-after-requests" => "--die-after-requests",
            _ => return Err(CliError::UnknownOption(arg)),
        };
        let value = args.next().ok_or(CliError::MissingValue(name))?;
        let text = || value.to_str().map(str::to_owned).ok_or(CliError::NotUnicode(name));
        match name {
            "--model" => set(&mut model, name, text()?)?,
            "--socket" => set(&mut socket, name, PathBuf::from(&value))?,
            "--guest-ram" => set(&mut guest_ram, name, PathBuf::from(&value))?,
            "--ram-size" => set(&mut ram_size, name, parse_size(name, &text()?)?)?,
            "--machine" => {
                let m = match text()?.as_str() {
                    "q35" => Machine::Q35,
                    "virt" => Machine::Virt,
                    other => return Err(CliError::BadMachine(other.to_owned())),
                };
                set(&mut machine, name, m)?
            }
            "--pacing" => set(&mut pacing, name, text()?.parse().map_err(CliError::BadPacing)?)?,
            "--fault" => set(&mut faults, name, text()?)?,
            "--fault-after-requests" => {
                let n = parse_size(name, &text()?)?;
                set(
                    &mut injection,
                    "--fault-after-requests/--die-after-requests",
                    Injection::FaultAfter(n),
                )?
            }
            _ => {
                let n = parse_size(name, &text()?)?;
                set(
                    &mut injection,
                    "--fault-after-requests/--die-after-requests",
                    Injection::DieAfter(n),
                )?
            }
        }
    }
    let args = Args {
        model: model.ok_or(CliError::Missing("--model"))?,
        socket: socket.ok_or(CliError::Missing("--socket"))?,
        guest_ram: guest_ram.ok_or(CliError::Missing("--guest-ram"))?,
        ram_size: ram_size.ok_or(CliError::Missing("--ram-size"))?,
        machine: machine.unwrap_or_default(),
        injection: injection.unwrap_or_default(),
        pacing,
        faults,
    };
    // Other spellings of one file are caught when binding: the RAM file exists by then and
    // the server refuses any path that is not a stale socket.
    if args.socket == args.guest_ram {
        return Err(CliError::SamePath { path: args.socket });
    }
    Ok(Command::Run(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, CliError> {
        parse(args.iter().map(OsString::from))
    }

    const BASE: [&str; 8] =
        ["--model", "selftest", "--socket", "/s", "--guest-ram", "/r", "--ram-size", "512M"];

    #[test]
    fn full_command_line() {
        let mut args = BASE.to_vec();
        args.extend(["--die-after-requests", "3"]);
        assert_eq!(
            p(&args),
            Ok(Command::Run(Args {
                model: "selftest".into(),
                socket: "/s".into(),
                guest_ram: "/r".into(),
                ram_size: 512 << 20,
                machine: Machine::Q35,
                injection: Injection::DieAfter(3),
                pacing: None,
                faults: None,
            }))
        );
        let mut args = BASE.to_vec();
        args.extend(["--pacing", "threaded:200", "--fault", "slow=40,cp-stall"]);
        let Ok(Command::Run(run)) = p(&args) else { panic!("{:?}", p(&args)) };
        assert_eq!(run.pacing, Some(Pacing::Threaded { ticks_per_ms: 200 }));
        assert_eq!(run.faults.as_deref(), Some("slow=40,cp-stall"));
        let mut args = BASE.to_vec();
        args.extend(["--machine", "virt"]);
        let Ok(Command::Run(run)) = p(&args) else { panic!("{:?}", p(&args)) };
        assert_eq!(run.machine, Machine::Virt);
        assert_eq!(run.machine.layout(1 << 20).translate(0x4000_0000, 4), Ok(0));
        assert!(matches!(p(&BASE), Ok(Command::Run(Args { injection: Injection::None, .. }))));
        assert_eq!(p(&["--help"]), Ok(Command::Help));
    }

    #[test]
    fn errors_are_typed() {
        assert_eq!(p(&["--bogus"]), Err(CliError::UnknownOption("--bogus".into())));
        assert_eq!(p(&["--model"]), Err(CliError::MissingValue("--model")));
        assert_eq!(p(&BASE[..6]), Err(CliError::Missing("--ram-size")));
        let mut both = BASE.to_vec();
        both.extend(["--die-after-requests", "3", "--fault-after-requests", "1"]);
        assert!(matches!(p(&both), Err(CliError::Repeated(_))));
        let mut bad = BASE.to_vec();
        bad[7] = "lots";
        assert!(matches!(p(&bad), Err(CliError::BadNumber { option: "--ram-size", .. })));
        let mut bad = BASE.to_vec();
        bad.extend(["--pacing", "fast"]);
        assert!(matches!(p(&bad), Err(CliError::BadPacing(_))));
        let mut bad = BASE.to_vec();
        bad.extend(["--machine", "raspi3b"]);
        assert_eq!(p(&bad), Err(CliError::BadMachine("raspi3b".into())));
    }

    #[test]
    fn socket_and_guest_ram_must_differ() {
        let mut same = BASE.to_vec();
        same[5] = "/s";
        assert_eq!(p(&same), Err(CliError::SamePath { path: "/s".into() }));
        same[3] = "/x/../s";
        same[5] = "/s";
        assert!(matches!(p(&same), Ok(Command::Run(_))), "only literal equality is a CLI error");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("x", "4096"), Ok(4096));
        assert_eq!(parse_size("x", "0x1000"), Ok(4096));
        assert_eq!(parse_size("x", "4K"), Ok(4096));
        assert_eq!(parse_size("x", "2G"), Ok(2 << 30));
        assert!(parse_size("x", "").is_err());
        assert!(parse_size("x", "99999999999999999999G").is_err());
        assert!(parse_size("x", "17179869184G").is_err(), "overflow");
    }
}
