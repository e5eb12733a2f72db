//! `model-server`: runs one device model as the ivshmem server QEMU's `ivshmem-doorbell`
//! connects to, until QEMU disconnects.
//!
//! Prints exactly one line on stdout, `model-server: ready socket=PATH`, once it listens (the
//! runner waits for it); diagnostics go to stderr. Exit status: 0 when QEMU disconnected, 2
//! for a bad command line or unknown model, 1 for any other failure; `--die-after-requests`
//! aborts (SIGABRT).

mod cli;
mod models;

use cli::{Args, CliError, Command};
use gpu_device_model::transport::{Server, ServerOptions, TransportError};
use gpu_device_model::{Device, IdentityError, MemoryError, SharedFileMemory};
use std::fmt;
use std::io::Write;
use std::process::ExitCode;

/// Why the server did not run to a clean disconnect.
#[derive(Debug)]
enum ServerError {
    Cli(CliError),
    UnknownModel(String),
    Memory(MemoryError),
    Identity(IdentityError),
    Transport(TransportError),
    Stdout(std::io::Error),
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Cli(e) => write!(f, "{e}\n{}", cli::USAGE),
            ServerError::UnknownModel(name) => {
                write!(f, "unknown model `{name}`; known models: {}", models::names())
            }
            ServerError::Memory(e) => write!(f, "guest RAM: {e}"),
            ServerError::Identity(e) => write!(f, "model PCI identity: {e}"),
            ServerError::Transport(e) => write!(f, "{e}"),
            ServerError::Stdout(e) => write!(f, "writing the ready line: {e}"),
        }
    }
}

fn serve(args: Args) -> Result<(), ServerError> {
    let entry = models::find(&args.model).ok_or(ServerError::UnknownModel(args.model.clone()))?;
    let memory =
        SharedFileMemory::open_q35(&args.guest_ram, args.ram_size).map_err(ServerError::Memory)?;
    let device = Device::new((entry.create)(), Box::new(memory)).map_err(ServerError::Identity)?;
    let mut options = ServerOptions::new(&args.socket);
    options.injection = args.injection;
    let mut server = Server::bind(device, options).map_err(ServerError::Transport)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "model-server: ready socket={}", args.socket.display())
        .and_then(|()| out.flush())
        .map_err(ServerError::Stdout)?;
    drop(out);
    server.run().map_err(ServerError::Transport)?;
    let device = server.device();
    eprintln!(
        "model-server: QEMU disconnected after {} requests (model {}, state {:?})",
        device.served(),
        entry.name,
        device.state()
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = match cli::parse(std::env::args_os().skip(1)) {
        Ok(Command::Run(args)) => args,
        Ok(Command::Help) => {
            println!("{}\n\nmodels:", cli::USAGE);
            for m in models::MODELS {
                println!("  {:<12} {}", m.name, m.about);
            }
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("model-server: {}", ServerError::Cli(e));
            return ExitCode::from(2);
        }
    };
    match serve(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ ServerError::UnknownModel(_)) => {
            eprintln!("model-server: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("model-server: {e}");
            ExitCode::FAILURE
        }
    }
}
