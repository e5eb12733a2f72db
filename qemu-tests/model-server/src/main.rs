//! `model-server`: runs one device model as the ivshmem server QEMU's `ivshmem-doorbell`
//! connects to, until QEMU disconnects.
//!
//! Prints exactly one line on stdout, `model-server: ready socket=PATH`, once it listens (the
//! runner waits for it); diagnostics go to stderr, the engine pacing first (so a failing case's
//! log says how to reproduce it). Exit status: 0 when QEMU disconnected, 2 for a bad command
//! line, pacing, fault list or unknown model, 1 for any other failure; `--die-after-requests`
//! aborts (SIGABRT).

#![forbid(unsafe_code)]

mod cli;
mod models;

use cli::{Args, CliError, Command};
use gpu_device_model::transport::{Server, ServerOptions, TransportError};
use gpu_device_model::{
    BadPacing, Device, IdentityError, MemoryError, PACING_ENV, Pacing, SharedFileMemory,
};
use std::fmt;
use std::io::Write;
use std::process::ExitCode;

/// Why the server did not run to a clean disconnect.
#[derive(Debug)]
enum ServerError {
    Cli(CliError),
    UnknownModel(String),
    Pacing(BadPacing),
    Faults { model: &'static str, why: String },
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
            ServerError::Pacing(e) => write!(f, "{PACING_ENV}: {e}"),
            ServerError::Faults { model, why } => write!(f, "--fault for model {model}: {why}"),
            ServerError::Memory(e) => write!(f, "guest RAM: {e}"),
            ServerError::Identity(e) => write!(f, "model PCI identity: {e}"),
            ServerError::Transport(e) => write!(f, "{e}"),
            ServerError::Stdout(e) => write!(f, "writing the ready line: {e}"),
        }
    }
}

fn serve(args: Args) -> Result<(), ServerError> {
    let entry = models::find(&args.model).ok_or(ServerError::UnknownModel(args.model.clone()))?;
    let pacing = Pacing::resolve(args.pacing).map_err(ServerError::Pacing)?;
    let mut model = (entry.create)();
    if let Some(list) = &args.faults {
        let fault = |why: String| ServerError::Faults { model: entry.name, why };
        let parse = entry.faults.ok_or_else(|| fault("it has no injectable faults".into()))?;
        let switches = parse(list).map_err(fault)?;
        model.inject(switches);
    }
    let memory = SharedFileMemory::open(&args.guest_ram, args.machine.layout(args.ram_size))
        .map_err(ServerError::Memory)?;
    // A RAM file this server created and then did not serve is removed: a failed start leaves
    // nothing behind (a file that was there before is left alone).
    let created = memory.created();
    let started = (|| {
        let device = Device::new(model, Box::new(memory)).map_err(ServerError::Identity)?;
        let mut options = ServerOptions::new(&args.socket);
        options.injection = args.injection;
        options.pacing = pacing;
        eprintln!(
            "model-server: model {} engine pacing {pacing} (reproduce with --pacing {pacing}){}",
            entry.name,
            args.faults.as_deref().map(|f| format!(", faults {f}")).unwrap_or_default()
        );
        let server = Server::bind(device, options).map_err(ServerError::Transport)?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "model-server: ready socket={}", args.socket.display())
            .and_then(|()| out.flush())
            .map_err(ServerError::Stdout)?;
        Ok(server)
    })();
    let mut server = started.inspect_err(|_| {
        if created {
            let _ = std::fs::remove_file(&args.guest_ram);
        }
    })?;
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
        Err(
            e
            @ (ServerError::UnknownModel(_) | ServerError::Pacing(_) | ServerError::Faults { .. }),
        ) => {
            eprintln!("model-server: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("model-server: {e}");
            ExitCode::FAILURE
        }
    }
}
