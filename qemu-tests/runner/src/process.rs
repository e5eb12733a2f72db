//! Child processes the runner starts: each dies with the runner, is killed on every exit path,
//! and is waited for with a deadline.

use std::io;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus};

/// A program the runner needs is not installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingProgram {
    /// Program name or path.
    pub program: String,
}

impl std::fmt::Display for MissingProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} not found: install it with `bash scripts/setup.sh` (QEMU 10 comes from Debian \
             bookworm-backports)",
            self.program
        )
    }
}

/// Resolve a program from an environment override or `PATH`.
pub fn find_program(name: &str, env_override: &str) -> Result<PathBuf, MissingProgram> {
    if let Some(path) = std::env::var_os(env_override) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(MissingProgram { program: path.display().to_string() })
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| MissingProgram { program: name.to_string() })
}

/// A running child that is killed when dropped.
pub struct Supervised {
    child: Child,
    status: Option<ExitStatus>,
}

impl Supervised {
    /// Start `cmd`; the child receives SIGKILL if the runner dies (PR_SET_PDEATHSIG).
    pub fn spawn(cmd: &mut Command) -> io::Result<Supervised> {
        // SAFETY: the closure runs in the forked child before exec and only calls the
        // async-signal-safe prctl(2).
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        Ok(Supervised { child, status: None })
    }

    /// The exit status if the child has exited.
    pub fn poll(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Kill (if running) and reap.
    pub fn kill(&mut self) -> Option<ExitStatus> {
        if self.poll().is_none() {
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
        }
        self.status
    }

    /// Access to the child (for its pipes).
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Describe an exit status for a human ("exit code 3", "killed by signal 6 (SIGABRT)").
pub fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    match status.signal() {
        Some(sig) => {
            let name = match sig {
                libc::SIGABRT => " (SIGABRT)",
                libc::SIGKILL => " (SIGKILL)",
                libc::SIGSEGV => " (SIGSEGV)",
                libc::SIGTERM => " (SIGTERM)",
                _ => "",
            };
            format!("killed by signal {sig}{name}")
        }
        None => "unknown status".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_missing_program_names_the_setup_command() {
        // SAFETY: no other test reads or writes this variable, so no thread races on it.
        unsafe { std::env::set_var("QEMU_RUNNER_TEST_MISSING", "/nonexistent/qemu-system-x86_64") };
        let err = find_program("qemu-system-x86_64", "QEMU_RUNNER_TEST_MISSING").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("/nonexistent/qemu-system-x86_64 not found"), "{msg}");
        assert!(msg.contains("bash scripts/setup.sh"), "{msg}");
        let err = find_program("surely-not-a-program-xyz", "QEMU_RUNNER_TEST_UNSET").unwrap_err();
        assert_eq!(err.program, "surely-not-a-program-xyz");
    }

    #[test]
    fn supervised_children_are_killed_on_drop_and_statuses_described() {
        let mut sleeper = Supervised::spawn(Command::new("sleep").arg("30")).unwrap();
        assert!(sleeper.poll().is_none());
        let status = sleeper.kill().unwrap();
        assert_eq!(describe(status), "killed by signal 9 (SIGKILL)");
        let mut t = Supervised::spawn(&mut Command::new("true")).unwrap();
        let end = Instant::now() + Duration::from_secs(5);
        while t.poll().is_none() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(describe(t.poll().unwrap()), "exit code 0");
    }
}
