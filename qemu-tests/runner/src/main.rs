//! `qemu-runner`: builds the test images once, then runs every test case as QEMU (TCG) beside
//! its device-model process, with a timeout per case, and reports one line per case, a
//! performance summary and `N passed, N failed`.
//!
//! ```text
//! qemu-runner test              # every case (what the README's test command runs)
//! qemu-runner demo              # the demo images (what the README's main command runs)
//! qemu-runner case NAME...      # selected cases
//! qemu-runner list              # case names
//! ```
//!
//! Each case keeps its files under `target/qemu-tests/<case>/`: `log.txt` (the decoded defmt
//! log), `serial.bin`, `qemu.log`, `model.log`, and its pictures (printed as `picture: PATH`): the
//! V3D render cases' `frame.png`, the Pi's `framebuffer.png`.

mod cases;
mod defmt_log;
mod frames;
mod images;
mod process;
mod raspi;
mod x86;

use cases::{CASES, Case, Expect, Kind, Outcome};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where case artefacts go.
pub fn output_dir() -> PathBuf {
    repo_root().join("target/qemu-tests")
}

/// The model servers' lines naming the engine pacing a case ran under (how to reproduce it),
/// one per model (`model.log`, or `model-<name>.log` in a multi-GPU case).
fn model_pacing(case: &Case) -> Vec<String> {
    let models = match &case.kind {
        Kind::X86 { models, .. } | Kind::Aarch64 { models, .. } => models,
        Kind::BootloaderR5xx => cases::R5XX,
        Kind::RaspiFramebuffer | Kind::RaspiSdCard => return Vec::new(),
    };
    let dir = output_dir().join(case.name);
    (0..models.len())
        .filter_map(|i| std::fs::read_to_string(x86::model_log(&dir, models, i)).ok())
        .filter_map(|log| log.lines().find(|l| l.contains("engine pacing")).map(str::to_owned))
        .collect()
}

/// Result of one case, as reported.
struct Report {
    case: &'static Case,
    outcome: Outcome,
    elapsed: Duration,
    passed: bool,
}

/// Run `selected`; with `show_logs`, print each case's decoded log after its line (the demo).
fn run_cases(selected: &[&'static Case], show_logs: bool) -> ExitCode {
    let suite_start = Instant::now();
    let images = match images::build(selected) {
        Ok(images) => images,
        Err(e) => {
            eprintln!("qemu-runner: cannot build the test images: {e}");
            println!("0 passed, {} failed", selected.len());
            return ExitCode::FAILURE;
        }
    };
    let mut reports = Vec::new();
    for case in selected {
        let start = Instant::now();
        let outcome = cases::run(case, &images);
        let elapsed = start.elapsed();
        let passed = match (&case.expect, &outcome) {
            (Expect::Pass | Expect::Frames(_), Outcome::Passed { .. }) => true,
            (Expect::Fail(check), outcome) => check(outcome),
            _ => false,
        };
        println!(
            "case {:<28} ... {} ({:.2} s){}",
            case.name,
            if passed { "ok" } else { "FAILED" },
            elapsed.as_secs_f64(),
            match (&case.expect, passed) {
                (Expect::Fail(_), true) => format!(" [failed as expected: {outcome}]"),
                (_, false) => format!("\n    reason: {outcome}"),
                _ => String::new(),
            }
        );
        if !passed {
            for pacing in model_pacing(case) {
                println!("    {pacing}");
            }
        }
        if passed {
            for picture in pictures(&output_dir().join(case.name)) {
                let picture = picture.canonicalize().unwrap_or(picture);
                println!("    picture: {}", picture.display());
            }
        }
        if show_logs && passed {
            let log = output_dir().join(case.name).join("log.txt");
            for line in std::fs::read_to_string(&log).unwrap_or_default().lines() {
                println!("    | {line}");
            }
        }
        if !passed {
            let log = output_dir().join(case.name).join("log.txt");
            if let Ok(text) = std::fs::read_to_string(&log) {
                let tail: Vec<&str> = text.lines().rev().take(15).collect();
                println!("    last log lines ({}):", log.display());
                for line in tail.iter().rev() {
                    println!("      {line}");
                }
            }
        }
        reports.push(Report { case, outcome, elapsed, passed });
    }
    print_performance(&reports, suite_start.elapsed());
    let passed = reports.iter().filter(|r| r.passed).count();
    let failed = reports.len() - passed;
    println!("{passed} passed, {failed} failed");
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// The PNGs a case left in its folder (the V3D frames, the Pi's screendump), sorted.
fn pictures(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    found.sort();
    found
}

fn print_performance(reports: &[Report], suite: Duration) {
    println!("performance:");
    for r in reports {
        if let Outcome::Passed { boot_to_exit: Some(t), .. } = &r.outcome {
            println!("  {:<28} boot-to-exit {:.2} s", r.case.name, t.as_secs_f64());
        }
    }
    for r in reports {
        if let Outcome::Passed { bench: Some(b), .. } = &r.outcome {
            println!(
                "  mailbox register round trips: {:.0}/s; DMA model<->guest: {:.1} MiB/s",
                b.round_trips_per_s,
                b.dma_bytes_per_s / (1024.0 * 1024.0)
            );
        }
    }
    let total: Duration = reports.iter().map(|r| r.elapsed).sum();
    println!(
        "  cases {:.1} s, whole suite (with image builds) {:.1} s",
        total.as_secs_f64(),
        suite.as_secs_f64()
    );
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("test") => run_cases(&CASES.iter().collect::<Vec<_>>(), false),
        Some("demo") => run_cases(&CASES.iter().filter(|c| c.demo).collect::<Vec<_>>(), true),
        // Build what `test` needs and stop: `cargo xtask test` builds the images beside Miri,
        // which leaves a core idle.
        Some("images") => match images::build(&CASES.iter().collect::<Vec<_>>()) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("qemu-runner: cannot build the test images: {e}");
                ExitCode::FAILURE
            }
        },
        Some("list") => {
            for c in CASES {
                println!("{:<28} {}", c.name, c.summary);
            }
            ExitCode::SUCCESS
        }
        Some("case") => {
            let mut selected = Vec::new();
            for name in &args[1..] {
                match CASES.iter().find(|c| c.name == name) {
                    Some(c) => selected.push(c),
                    None => {
                        eprintln!("qemu-runner: unknown case {name:?} (see `qemu-runner list`)");
                        return ExitCode::from(2);
                    }
                }
            }
            run_cases(&selected, false)
        }
        _ => {
            eprintln!("usage: qemu-runner <test | demo | images | list | case NAME...>");
            ExitCode::from(2)
        }
    }
}
