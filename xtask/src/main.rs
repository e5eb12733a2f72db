//! Project automation behind the README's two commands.
//!
//! ```text
//! cargo xtask main   # build everything (host, bare-metal targets, kernel target) and print
//!                    # the register coverage per family
//! cargo xtask test   # run every test and check; ends with `N passed, N failed, K skipped`
//! cargo xtask regen  # rewrite the generated register modules (hal/regs/src/generated) from
//!                    # the databases after a database or generator change
//! cargo xtask package  # the published crates: MSRV check for both bare-metal targets,
//!                      # `cargo package`, and the packages built and tested as unpacked
//!                      # outside the workspace (also part of `test`)
//! ```
//!
//! Both expect `scripts/setup.sh` to have run (the README's commands do that first).
//!
//! The checks that read the hardware documents (`gpu_docs`) run when the documents are found
//! (`$GPU_DOCS_DIR`, else `../shared/docs`); otherwise they are skipped, counted as skipped
//! and reported in one line, and everything else runs. Under `CI=true` missing documents
//! fail the run.

#![forbid(unsafe_code)]

mod decode;
mod outside;

use regdb_gen::coverage::{Coverage, table};
use regdb_gen::{Database, FAMILIES, database_path};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Library crates that must build for bare-metal targets (no_std).
const NO_STD_CRATES: &[&str] = &[
    "baregpu-hal",
    "baregpu-platform",
    "baregpu-gpu",
    "baregpu-regs",
    "baregpu-ring",
    "baregpu-firmware",
    "baregpu-radeon-r5xx",
    "baregpu-radeon-evergreen",
    "baregpu-videocore-v3d",
    "baregpu-nvidia-tesla",
    "baregpu-ati-ctm",
    "baregpu-dpp-asm",
    "baregpu-evergreen-asm",
    "baregpu-falcon-asm",
    "baregpu-qpu-asm",
    "baregpu-vc4-validate",
    "ctm-compute",
    "gpu-scheduler",
];
const BARE_METAL_TARGETS: &[&str] = &["x86_64-unknown-none", "aarch64-unknown-none"];

/// The published library crates (`publish = true`): packaged by `cargo package`, and the
/// packages built and tested outside the workspace with the declared `rust-version` on the
/// stable toolchain (the outside-crate build).
const PUBLISHED_CRATES: &[&str] = &[
    "baregpu-hal",
    "baregpu-platform",
    "baregpu-gpu",
    "baregpu-regs",
    "baregpu-ring",
    "baregpu-firmware",
    "baregpu-radeon-r5xx",
    "baregpu-radeon-evergreen",
    "baregpu-videocore-v3d",
    "baregpu-nvidia-tesla",
    "baregpu-ati-ctm",
    "baregpu-dpp-asm",
    "baregpu-evergreen-asm",
    "baregpu-falcon-asm",
    "baregpu-qpu-asm",
    "baregpu-vc4-validate",
];

/// The workspace's `rust-version` (the MSRV the published crates declare).
fn declared_rust_version() -> Option<String> {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).ok()?;
    manifest.lines().find_map(|l| {
        let v = l.strip_prefix("rust-version = \"")?.strip_suffix('"')?;
        Some(v.to_string())
    })
}

/// `cargo package` for every published crate, in one invocation so the crates' unpublished
/// local dependencies resolve to each other (only the registry index and the third-party
/// dependencies come from crates.io). Packages land in `target/package/`. Without cargo's own
/// verification (a build of each unpacked package with the nightly, one after another): the
/// outside-crate build that follows unpacks every package and builds and tests it with the
/// declared `rust-version`, which verifies more for less.
fn package_crates() -> Command {
    let mut cmd = cargo();
    // --allow-dirty: a developer's uncommitted work is packaged and verified too (CI is clean).
    cmd.args(["package", "--allow-dirty", "--no-verify"]);
    for c in PUBLISHED_CRATES {
        cmd.args(["-p", c]);
    }
    cmd
}

/// `cargo +<version>`: the rustup proxy with the toolchain named, not `$CARGO` (the pinned
/// nightly's cargo), and nothing inherited from the nightly that runs xtask.
fn stable_cargo(version: &str) -> Command {
    let mut cmd = Command::new("cargo");
    cmd.env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTDOCFLAGS")
        .arg(format!("+{version}"));
    cmd
}

/// Type-check the no_std crates with the stable toolchain of the declared `rust-version`
/// (`scripts/setup.sh` installs it) for both bare-metal targets in one invocation, every
/// feature on (each register and ring family, `defmt`, both platforms): the MSRV and no_std
/// check of every feature combination users enable together. `api-check` with them: with
/// `defmt` on, it fails on a public error type that is not `defmt::Format`. That each
/// crate's own `defmt` feature forwards to its dependencies' is a manifest rule, kept by an
/// xtask test (`defmt_features_forward_to_every_dependency_that_has_one`), not a build per
/// crate. A check, not a build: code is generated for these targets by the outside-crate
/// build (the packages, with this toolchain) and the QEMU images.
fn msrv_check(version: &str) -> Command {
    let mut cmd = stable_cargo(version);
    cmd.current_dir(repo_root()).arg("check");
    for c in NO_STD_CRATES.iter().chain(&["api-check"]) {
        cmd.args(["-p", c]);
    }
    cmd.args(["--all-features", "--target-dir", "target/msrv"]);
    for t in BARE_METAL_TARGETS {
        cmd.args(["--target", t]);
    }
    cmd
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(repo_root());
    cmd
}

/// Every register and ring family and `defmt`, so each generated module is checked for bare
/// metal (dependents enable only their own).
const BARE_METAL_FEATURES: &str = "baregpu-hal/defmt,baregpu-regs/defmt,baregpu-regs/r5xx,\
     baregpu-regs/vc4,baregpu-regs/evergreen,baregpu-regs/nvidia,baregpu-ring/r5xx,\
     baregpu-ring/evergreen,baregpu-ring/vc4,baregpu-ring/nvidia,baregpu-ring/defmt,\
     baregpu-firmware/nvidia,baregpu-platform/x86_64,baregpu-platform/aarch64,\
     baregpu-platform/bootloader_api,baregpu-platform/defmt";

/// Arguments building the no_std crates for one target (`None`: the kernel target JSON).
fn bare_metal_build(target: Option<&str>) -> Command {
    let mut cmd = cargo();
    cmd.arg("build");
    for c in NO_STD_CRATES {
        cmd.args(["-p", c]);
    }
    cmd.args(["--features", BARE_METAL_FEATURES]);
    match target {
        Some(t) => {
            cmd.args(["--target", t]);
        }
        None => {
            kernel_target(&mut cmd);
        }
    }
    cmd
}

/// The published crates whose source depends on the target (`cfg(target_arch)`,
/// `cfg(target_os)`): their documentation is built for every bare-metal target, the others'
/// only for the first (it is the same text). A test keeps the list equal to the sources'.
const TARGET_DEPENDENT_CRATES: &[&str] = &["baregpu-hal", "baregpu-platform"];

/// `cargo doc` of `crates` for `target` with every feature, as docs.rs builds them
/// (`--cfg docsrs`: the feature badges), warnings denied: a broken or private intra-doc link,
/// an unclosed HTML tag or a bad code-block attribute fails the test command.
fn doc_build(target: &str, crates: &[&str]) -> Command {
    let mut cmd = cargo();
    cmd.args(["doc", "--no-deps", "--all-features", "--target", target]);
    for c in crates {
        cmd.args(["-p", c]);
    }
    cmd.env("RUSTDOCFLAGS", "-D warnings --cfg docsrs");
    cmd
}

/// `-Z` flags that build `core`/`alloc` for the JSON kernel target.
const BUILD_STD_ARGS: &[&str] = &[
    "-Z",
    "build-std=core,alloc,compiler_builtins",
    "-Z",
    "build-std-features=compiler-builtins-mem",
    "-Z",
    "json-target-spec",
];

/// Target the kernel image JSON (`x86_64-target.json`) with build-std.
fn kernel_target(cmd: &mut Command) {
    cmd.arg("--target").arg(repo_root().join("x86_64-target.json")).args(BUILD_STD_ARGS);
}

/// Run a command, echoing its output; true on success.
fn run(what: &str, cmd: &mut Command) -> bool {
    eprintln!("xtask: {what}");
    match cmd.status() {
        Ok(s) if s.success() => true,
        Ok(s) => {
            eprintln!("xtask: {what}: failed ({s})");
            false
        }
        Err(e) => {
            eprintln!("xtask: {what}: cannot start: {e}");
            false
        }
    }
}

fn coverage_report() -> Result<String, String> {
    let mut rows = Vec::new();
    for family in FAMILIES {
        let path = database_path(family);
        let db = Database::load(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        rows.push(Coverage::of(&db));
    }
    Ok(table(&rows))
}

fn main_job() -> ExitCode {
    let steps: Vec<(String, Command)> = {
        let mut v = vec![("build the workspace for the host".to_string(), {
            let mut c = cargo();
            c.args(["build", "--workspace"]);
            c
        })];
        for t in BARE_METAL_TARGETS {
            v.push((format!("build the no_std crates for {t}"), bare_metal_build(Some(t))));
        }
        v.push((
            "build the no_std crates for x86_64-target.json (build-std)".into(),
            bare_metal_build(None),
        ));
        v
    };
    for (what, mut cmd) in steps {
        if !run(&what, &mut cmd) {
            return ExitCode::FAILURE;
        }
    }
    if !run("run examples/register-tour", cargo().args(["run", "--quiet", "-p", "register-tour"])) {
        return ExitCode::FAILURE;
    }
    match coverage_report() {
        Ok(report) => {
            println!("Register coverage per family (hal/regdb):");
            print!("{report}");
        }
        Err(e) => {
            eprintln!("xtask: {e}");
            return ExitCode::FAILURE;
        }
    }
    // Boot the demo images in QEMU beside their emulated GPUs.
    if run("boot the demo images (qemu-runner demo)", &mut qemu_runner("demo")) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// [`qemu_runner`] as the test run starts it: with the workspace build's lint wrapper, so
/// the runner is the one that build made (the runner drops the wrapper for its image builds).
fn test_run_qemu_runner(what: &str) -> Command {
    with_workspace_lints(qemu_runner(what)).unwrap_or_else(|| qemu_runner(what))
}

/// `cmd` in the idle scheduling class (`chrt --idle 0`, SCHED_IDLE): it runs only on cores
/// nothing else wants, and a waking test or compiler preempts it. Its children, the
/// compilers, inherit the class. What runs beside it still slows (shared caches and memory:
/// the test runs take about a third longer), less than the whole run gains. As is where
/// `chrt` is missing.
fn at_idle_priority(cmd: &Command) -> Command {
    let has_chrt =
        Command::new("chrt").args(["--idle", "0", "true"]).status().is_ok_and(|s| s.success());
    let mut wrapped = if has_chrt {
        let mut c = Command::new("chrt");
        c.args(["--idle", "0"]).arg(cmd.get_program());
        c
    } else {
        Command::new(cmd.get_program())
    };
    wrapped.args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => wrapped.env(key, v),
            None => wrapped.env_remove(key),
        };
    }
    wrapped
}

/// `cargo run -p qemu-runner -- <what>`.
fn qemu_runner(what: &str) -> Command {
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "-p", "qemu-runner", "--", what]);
    cmd
}

/// The cargo-fuzz targets (`fuzz/Cargo.toml`; the README's "Reliability" section says what
/// each asserts). A test below keeps this list equal to the manifest's.
const FUZZ_TARGETS: &[&str] = &[
    "firmware_r5xx",
    "firmware_evergreen",
    "dpp_elf",
    "ctm_commands",
    "dpp_asm_text",
    "dpp_instruction_round_trip",
    "pm4_ring",
    "ctm_engine",
    "r5xx_mailbox",
    "evergreen_asm_text",
    "evergreen_shader",
    "evergreen_mailbox",
    "gt215_mailbox",
    "v3d_mailbox",
    "evergreen_ih_ring",
    "evergreen_dispatch",
    "pci_probe",
    "submission_closures",
    "vc4_control_list",
    "falcon_asm_text",
    "falcon_instruction_round_trip",
    "qpu_asm_text",
    "qpu_instruction_round_trip",
    "nvidia_pushbuffer",
    "vc4_validate",
];

/// Seconds each fuzz target runs in the smoke of `cargo xtask test` (the README says how to
/// run them longer).
const FUZZ_SMOKE_SECONDS: u32 = 5;

/// Build every fuzz target once (cargo-fuzz: libFuzzer, AddressSanitizer, debug assertions);
/// the directory of the executables, or `None` when the build failed or cargo-fuzz is not
/// installed (skipped with a notice: `scripts/setup.sh` installs it).
fn fuzz_build(tally: &mut Tally) -> Option<PathBuf> {
    let installed = cargo().args(["fuzz", "--version"]).output().is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!(
            "xtask: cargo-fuzz is not installed (scripts/setup.sh installs it): fuzz smoke skipped"
        );
        return None;
    }
    let fuzz = repo_root().join("fuzz");
    let built = run(
        "cargo fuzz build -a (all targets, once)",
        cargo().current_dir(&fuzz).args(["fuzz", "build", "--debug-assertions"]),
    );
    tally.check("fuzz-build", built);
    built.then(|| fuzz.join("target/x86_64-unknown-linux-gnu/release"))
}

/// Run each fuzz target in `bin` from its checked-in seed corpus for [`FUZZ_SMOKE_SECONDS`]
/// (libFuzzer runs a target on one core): `now` targets at a time, and `more` besides once
/// `go` fires or its sender is dropped (the core Miri had); whether each passed, in
/// [`FUZZ_TARGETS`] order. Takes no tally, so it can run beside Miri.
fn fuzz_runs(bin: &Path, now: usize, more: usize, go: std::sync::mpsc::Receiver<()>) -> Vec<bool> {
    let fuzz = repo_root().join("fuzz");
    let scratch = repo_root().join("target/fuzz-smoke");
    let started = Instant::now();
    let fuzz_one = |t: &str| {
        // New inputs go to a scratch corpus (the first directory): the seeds stay as checked in.
        let work = scratch.join(t);
        let _ = std::fs::create_dir_all(&work);
        run(
            &format!("fuzz {t} for {FUZZ_SMOKE_SECONDS} s"),
            Command::new(bin.join(t))
                .arg(&work)
                .arg(fuzz.join("corpus").join(t))
                .arg(format!("-max_total_time={FUZZ_SMOKE_SECONDS}"))
                // A single input running this long is a hang: fail.
                .arg("-timeout=20")
                .arg("-rss_limit_mb=2048")
                .arg(format!("-artifact_prefix={}/", scratch.display()))
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        )
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(t) = FUZZ_TARGETS.get(i) else { break done };
            done.push((i, fuzz_one(t)));
        }
    };
    let results: Vec<(usize, bool)> = std::thread::scope(|scope| {
        let mut workers: Vec<_> = (0..now.max(1)).map(|_| scope.spawn(work)).collect();
        // Err: the sender is gone, which also means the core is free.
        let _ = go.recv();
        workers.extend((0..more).map(|_| scope.spawn(work)));
        workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect()
    });
    // A target whose worker died counts as failed.
    let mut passed = vec![false; FUZZ_TARGETS.len()];
    for (i, ok) in results {
        passed[i] = ok;
    }
    eprintln!("xtask: fuzz runs took {:.1} s", started.elapsed().as_secs_f64());
    passed
}

/// `cargo miri test` on the crates with `unsafe` (DMA regions, barriers, the device model's
/// shared memory): baregpu-hal, baregpu-platform (the bump allocator, ECAM), baregpu-ring, and the gpu-device-model tests that need no
/// file descriptors. Property tests run 4 cases each under Miri.
fn miri_tests(tally: &mut Tally) {
    let installed = cargo().args(["miri", "--version"]).output().is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!("xtask: Miri is not installed (scripts/setup.sh adds the component)");
        tally.check("miri", false);
        return;
    }
    let started = Instant::now();
    // Isolation off: proptest reads PROPTEST_CASES and its regression files. Leaks: the test
    // fixtures leak DMA buffers on purpose (a region's memory must outlive it). Weak-memory
    // emulation off, for the test command's time budget (with it the device-model tests alone
    // took 217 s of a 307 s Miri phase); the data-race detector stays on, and the byte-aligned
    // DMA race (tests/dma_race.rs) runs with the emulation on, which reports mixed-size atomics
    // on device-shared memory.
    let miri_with = |flags: &str, args: &[&str]| {
        let mut cmd = cargo();
        cmd.args(["miri", "test"]).args(args).env("PROPTEST_CASES", "4").env("MIRIFLAGS", flags);
        cmd
    };
    let miri = |args: &[&str]| {
        miri_with(
            "-Zmiri-disable-isolation -Zmiri-ignore-leaks -Zmiri-disable-weak-memory-emulation",
            args,
        )
    };
    cargo_tests(
        tally,
        "cargo miri test -p baregpu-hal",
        &mut miri(&["-p", "baregpu-hal", "--lib"]),
    );
    cargo_tests(
        tally,
        "cargo miri test -p baregpu-platform",
        &mut miri(&["-p", "baregpu-platform", "--all-features", "--test", "dma", "--test", "pci"]),
    );
    cargo_tests(
        tally,
        "cargo miri test -p baregpu-ring",
        &mut miri(&[
            "-p",
            "baregpu-ring",
            "--lib",
            "--test",
            "ring",
            "--test",
            "pm4",
            "--test",
            "ib",
            "--test",
            "address_overflow",
            "--test",
            "evergreen",
            "--test",
            "channel",
        ]),
    );
    cargo_tests(
        tally,
        "cargo miri test -p gpu-device-model",
        &mut miri(&[
            "-p",
            "gpu-device-model",
            "--lib",
            "--",
            // A million model ticks and no unsafe code: minutes under Miri for nothing.
            "--skip",
            "busy_models_are_ticked_to_idle_and_hung_ones_fail",
            // The pacing schedules: no unsafe code, and 167 of the crate's 182 s under Miri.
            "--skip",
            "pacing::",
            // Measures the engine thread against the wall clock, which Miri's interpreter
            // cannot keep up with (the write alone outlasts the busy period); the threaded
            // engine's shared state is exercised by `threaded_pacing_leaves_ticking_to_the_engine_thread`.
            "--skip",
            "threaded_pacing_runs_the_engines_beside_the_test_on_the_wall_clock",
        ]),
    );
    cargo_tests(
        tally,
        "cargo miri test -p gpu-device-model --test dma_race (weak-memory emulation on)",
        &mut miri_with(
            "-Zmiri-disable-isolation -Zmiri-ignore-leaks",
            &["-p", "gpu-device-model", "--test", "dma_race"],
        ),
    );
    eprintln!("xtask: Miri took {:.1} s", started.elapsed().as_secs_f64());
}

/// The `N passed, N failed` line of a runner's output (`, K skipped` may follow; the runner
/// and this program close with the same line).
fn parse_summary(output: &str) -> Option<(u64, u64)> {
    output.lines().rev().find_map(|line| {
        let (p, rest) = line.trim().split_once(" passed, ")?;
        let (f, tail) = rest.split_once(" failed")?;
        let skipped = tail.strip_prefix(", ").and_then(|t| t.strip_suffix(" skipped"));
        if !tail.is_empty() && skipped.and_then(|k| k.parse::<u64>().ok()).is_none() {
            return None;
        }
        Some((p.parse().ok()?, f.parse().ok()?))
    })
}

/// A bare-metal image package (outside the workspace) and how it is built.
struct ImagePackage {
    dir: &'static str,
    /// Built-in target triple, or `None` for the kernel JSON target.
    target: Option<&'static str>,
    target_dir: &'static str,
    /// Features the QEMU cases build it with.
    features: &'static [&'static str],
}

const IMAGE_PACKAGES: &[ImagePackage] = &[
    ImagePackage {
        dir: "qemu-tests/kernel",
        target: None,
        target_dir: "../../target/kernel",
        features: &[],
    },
    // The same kernel for aarch64 (QEMU `virt`, the `aarch64-*` cases).
    ImagePackage {
        dir: "qemu-tests/kernel",
        target: Some("aarch64-unknown-none"),
        target_dir: "../../target/kernel",
        features: &[],
    },
    ImagePackage {
        dir: "qemu-tests/rpi",
        target: Some("aarch64-unknown-none"),
        target_dir: "../../target/rpi",
        features: &[],
    },
    // Its kernel; the QEMU case `bootloader-r5xx` builds and boots it.
    ImagePackage {
        dir: "examples/bootloader-r5xx",
        target: Some("x86_64-unknown-none"),
        target_dir: "../../target/bootloader-r5xx",
        // With the QEMU harness's transport, as the case builds it.
        features: &["qemu-harness"],
    },
    // And without it: the shape a copy outside the repository builds in.
    ImagePackage {
        dir: "examples/bootloader-r5xx",
        target: Some("x86_64-unknown-none"),
        target_dir: "../../target/bootloader-r5xx",
        features: &[],
    },
];

fn image_clippy(image: &ImagePackage) -> Command {
    let mut cmd = cargo();
    cmd.current_dir(repo_root().join(image.dir)).args(["clippy", "--release"]);
    match image.target {
        Some(t) => {
            cmd.args(["--target", t]);
        }
        None => kernel_target(&mut cmd),
    }
    for feature in image.features {
        cmd.args(["--features", feature]);
    }
    cmd.args(["--target-dir", image.target_dir, "--", "-D", "warnings"]);
    cmd
}

/// The `PROPTEST_RNG_SEED` property tests run under when the environment sets none: with a
/// fixed seed every run of the test command generates the same cases, so CI passes or fails
/// the same way on every run. Set `PROPTEST_RNG_SEED=<u64>` to explore other cases.
const DEFAULT_PROPTEST_SEED: u64 = 0x2A_B0A7;

/// proptest's environment variable for the seed of its case generator (proptest 1.x reads it
/// into `Config::default().rng_seed`; without it every run draws a random seed).
const PROPTEST_SEED_ENV: &str = "PROPTEST_RNG_SEED";

/// The seed property tests run under: the environment's, else [`DEFAULT_PROPTEST_SEED`].
fn proptest_seed(env: Option<&str>) -> String {
    match env.map(str::trim) {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => DEFAULT_PROPTEST_SEED.to_string(),
    }
}

/// Run a `cargo test` and add its libtest counts to the tally. Tests that skipped themselves
/// for want of the hardware documents (`gpu_docs`, recorded in the tally's skip log) count as
/// skipped, not passed.
fn cargo_tests(tally: &mut Tally, what: &str, cmd: &mut Command) {
    eprintln!("xtask: {what}");
    let _ = std::fs::remove_file(&tally.skip_log);
    cmd.env(gpu_docs::SKIP_LOG_ENV, &tally.skip_log).env(PROPTEST_SEED_ENV, &tally.proptest_seed);
    match cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).output() {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            print!("{text}");
            let (p, f) = parse_libtest(&text);
            let skipped = skipped_doc_checks(&tally.skip_log);
            tally.passed += p.saturating_sub(skipped);
            tally.skipped_doc_checks += skipped;
            tally.failed += f;
            if !out.status.success() && f == 0 {
                // A build failure runs no test: count it, or a broken build would look green.
                tally.check(&format!("{what} (build)"), false);
            }
        }
        Err(e) => {
            eprintln!("xtask: cannot run {what}: {e}");
            tally.check(what, false);
        }
    }
}

/// The distinct tests the skip log names (one line per skipped test).
fn skipped_doc_checks(log: &Path) -> u64 {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter(|l| !l.is_empty()).collect::<BTreeSet<_>>().len() as u64
}

struct Tally {
    passed: u64,
    failed: u64,
    /// Document checks not run because the documents are absent.
    skipped_doc_checks: u64,
    failures: Vec<String>,
    /// Where `gpu_docs` records the tests it skipped.
    skip_log: PathBuf,
    /// Wall time per phase, for the closing table.
    phases: Phases,
    /// `PROPTEST_RNG_SEED` of every test run (see [`proptest_seed`]).
    proptest_seed: String,
}

/// Wall time per phase of `cargo xtask test`, printed as a table at its end. A phase is named
/// where it runs (`tally.phase("Miri", |t| miri_tests(t))`): times add up per name and rows
/// keep the order phases first ran, so a new step joins the table by being wrapped, nothing
/// else to edit.
#[derive(Default)]
struct Phases(Vec<(&'static str, Duration)>);

impl Phases {
    fn add(&mut self, name: &'static str, took: Duration) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, total)) => *total += took,
            None => self.0.push((name, took)),
        }
    }

    /// The table: one row per phase, then the total.
    fn table(&self) -> String {
        let width = self.0.iter().map(|(n, _)| n.len()).max().unwrap_or(0).max("total".len());
        let mut out = format!("{:<width$}  wall time\n", "phase");
        for (name, took) in &self.0 {
            out += &format!("{name:<width$}  {:>7.1} s\n", took.as_secs_f64());
        }
        let total: Duration = self.0.iter().map(|(_, t)| *t).sum();
        out += &format!("{:<width$}  {:>7.1} s\n", "total", total.as_secs_f64());
        out
    }
}

/// Seconds `scripts/test.sh` spent in `scripts/setup.sh` before starting xtask (it sets this;
/// absent when `cargo xtask test` is run directly).
const SETUP_SECONDS_ENV: &str = "XTASK_SETUP_SECONDS";

impl Tally {
    fn new() -> Self {
        let dir = repo_root().join("target/xtask");
        let _ = std::fs::create_dir_all(&dir);
        Tally {
            passed: 0,
            failed: 0,
            skipped_doc_checks: 0,
            failures: Vec::new(),
            skip_log: dir.join("doc-checks-skipped.log"),
            phases: Phases::default(),
            proptest_seed: proptest_seed(std::env::var(PROPTEST_SEED_ENV).ok().as_deref()),
        }
    }

    /// Run `f` as (part of) phase `name` of the closing table.
    fn phase<T>(&mut self, name: &'static str, f: impl FnOnce(&mut Tally) -> T) -> T {
        let started = Instant::now();
        let out = f(self);
        self.phases.add(name, started.elapsed());
        out
    }

    fn check(&mut self, name: &str, ok: bool) {
        println!("check {name} ... {}", if ok { "ok" } else { "FAILED" });
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
            self.failures.push(name.to_string());
        }
    }
}

/// Sum the `test result: ok. N passed; M failed` lines of libtest output.
fn parse_libtest(output: &str) -> (u64, u64) {
    let mut passed = 0;
    let mut failed = 0;
    for line in output.lines() {
        let Some(rest) = line.trim().strip_prefix("test result: ") else {
            continue;
        };
        for part in rest.split(';') {
            let words: Vec<&str> = part.split_whitespace().collect();
            match words.as_slice() {
                [.., n, "passed"] => passed += n.parse::<u64>().unwrap_or(0),
                [n, "failed"] => failed += n.parse::<u64>().unwrap_or(0),
                _ => {}
            }
        }
    }
    (passed, failed)
}

/// Seeds the R5xx/CTM driver tests also run under (besides the default seed and run-to-idle):
/// each gives the engines a different, reproducible interleaving with the driver.
const EXTRA_SEEDS: [u64; 2] = [0x00DD_BA11, 0xC0FF_EE00];

/// The threaded pacing the driver tests also run under: an engine thread ticks each in-process
/// device on the wall clock beside the test (not reproducible; closest to hardware). 1000 ticks
/// per millisecond keeps the run about as long as a seeded one.
const THREADED_PACING: &str = "threaded:1000";

/// The packages the pacing reruns test again (their tests drive the device models).
/// The drivers' tests include the family-generic contract suite (`gpu-contract`, in their
/// tests/contract.rs; the V3D's over its in-process model); the scheduler example runs over
/// both in-process GPUs.
const PACED_PACKAGES: &[&str] = &[
    "drivers/radeon-r5xx",
    "drivers/radeon-evergreen",
    "drivers/videocore-v3d",
    "drivers/nvidia-tesla",
    "examples/ctm-compute",
    "examples/gpu-scheduler",
];

/// A test executable the workspace build made, and the directory of its package's manifest.
struct TestBinary {
    executable: PathBuf,
    package_dir: PathBuf,
}

/// Build every target of the workspace once (`cargo test --workspace --no-run --all-targets`),
/// linted as it compiles, and list the test executables. The pacing reruns run these again
/// instead of `cargo test -p ...`, whose smaller package selection unifies features
/// differently and rebuilt the register crate and everything above it.
///
/// The lints: clippy's driver is the workspace's rustc wrapper ([`with_workspace_lints`], what
/// `cargo clippy` sets), so each workspace target is linted in the compile that builds it,
/// and no second type-check of the workspace (and of every dependency, in check mode) is
/// needed. Any warning fails the `clippy` check, as `cargo clippy -- -D warnings` would; the
/// tests still run.
fn build_workspace_tests(tally: &mut Tally) -> Vec<TestBinary> {
    eprintln!("xtask: cargo test --workspace --no-run --all-targets (linted by clippy's driver)");
    let mut cmd = cargo();
    cmd.args(["test", "--workspace", "--no-run", "--all-targets", "--message-format=json"]);
    let Some(mut cmd) = with_workspace_lints(cmd) else {
        tally.check("clippy-driver installed (rustup component clippy)", false);
        return Vec::new();
    };
    let out = cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).output();
    let out = match out {
        Ok(out) => out,
        Err(e) => {
            eprintln!("xtask: cannot run cargo test --no-run: {e}");
            tally.check("workspace-test-build", false);
            return Vec::new();
        }
    };
    let messages = String::from_utf8_lossy(&out.stdout);
    let warnings = compiler_warnings(&messages);
    tally.check("workspace-test-build", out.status.success());
    tally.check("clippy", warnings == 0 && out.status.success());
    test_binaries(&messages)
}

/// `cmd` with clippy's driver as the rustc wrapper of workspace members (the driver beside
/// the running toolchain's cargo, else `rustup which clippy-driver`); `None` when there is
/// none. Every cargo command of the test run that compiles in the workspace's host target
/// directory goes through here: the wrapper is part of the artifacts' identity, so a command
/// without it would build the workspace again.
fn with_workspace_lints(mut cmd: Command) -> Option<Command> {
    let beside_cargo = std::env::var_os("CARGO")
        .map(|cargo| Path::new(&cargo).with_file_name("clippy-driver"))
        .filter(|p| p.is_file());
    let driver = beside_cargo.or_else(|| {
        let out = Command::new("rustup").args(["which", "clippy-driver"]).output().ok()?;
        let path = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| PathBuf::from(path.trim()))
    })?;
    cmd.env(WORKSPACE_WRAPPER_ENV, driver);
    Some(cmd)
}

/// Cargo's variable for a rustc wrapper applied to workspace members only.
const WORKSPACE_WRAPPER_ENV: &str = "RUSTC_WORKSPACE_WRAPPER";

/// The warnings and errors among cargo's JSON messages (`compiler-message`), each printed as
/// rustc rendered it; the summaries ("N warnings emitted") have no code and no span and are
/// not counted.
fn compiler_warnings(messages: &str) -> usize {
    let mut counted = 0;
    for line in messages.lines() {
        let Ok(m) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if m["reason"] != "compiler-message" {
            continue;
        }
        let d = &m["message"];
        if let Some(rendered) = d["rendered"].as_str() {
            eprint!("{rendered}");
        }
        let level = d["level"].as_str().unwrap_or("");
        let located = !d["code"].is_null() || d["spans"].as_array().is_some_and(|s| !s.is_empty());
        if (level == "warning" || level.starts_with("error")) && located {
            counted += 1;
        }
    }
    counted
}

/// The test executables in cargo's JSON messages (`compiler-artifact`, test profile).
fn test_binaries(messages: &str) -> Vec<TestBinary> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["profile"]["test"] == true)
        .filter_map(|m| {
            let executable = PathBuf::from(m["executable"].as_str()?);
            let package_dir = Path::new(m["manifest_path"].as_str()?).parent()?.to_path_buf();
            Some(TestBinary { executable, package_dir })
        })
        .collect()
}

/// Run the test executables of `packages` (directories under the repository root) with
/// `GPU_MODEL_PACING=pacing`, as `cargo test` runs them (in the package directory).
fn rerun_paced(tally: &mut Tally, binaries: &[TestBinary], packages: &[&str], pacing: &str) {
    let root = repo_root().canonicalize().unwrap_or_else(|_| repo_root());
    for b in binaries {
        let paced = packages.iter().any(|p| b.package_dir == root.join(p));
        if !paced {
            continue;
        }
        let name = b.executable.file_name().unwrap_or_default().to_string_lossy();
        cargo_tests(
            tally,
            &format!("{name} (GPU_MODEL_PACING={pacing})"),
            Command::new(&b.executable)
                .current_dir(&b.package_dir)
                .env("CARGO_MANIFEST_DIR", &b.package_dir)
                .env(gpu_device_model::PACING_ENV, pacing),
        );
    }
}

fn test_job() -> ExitCode {
    let start = Instant::now();
    let mut tally = Tally::new();
    if let Some(setup) = std::env::var(SETUP_SECONDS_ENV).ok().and_then(|s| s.parse::<f64>().ok()) {
        tally.phases.add("set-up (scripts/setup.sh)", Duration::from_secs_f64(setup.max(0.0)));
    }
    eprintln!(
        "xtask: property tests run with {PROPTEST_SEED_ENV}={} (set it to generate other cases)",
        tally.proptest_seed
    );
    let docs = gpu_docs::docs_dir();
    if docs.is_none() && gpu_docs::in_ci() {
        let missing = gpu_docs::expected_dir();
        eprintln!("xtask: CI=true and no hardware documents at {}", missing.display());
        tally.check("hardware documents present (CI=true)", false);
    }

    // 1. The committed databases are exactly what the extractors produce from the documents.
    tally.phase("database extraction checks", |tally| {
        for family in FAMILIES {
            let Some(dir) = &docs else {
                tally.skipped_doc_checks += 1;
                continue;
            };
            let ok = run(
                &format!("database {family} is up to date with its extraction"),
                Command::new("python3")
                    .current_dir(repo_root())
                    .env(gpu_docs::DOCS_DIR_ENV, dir)
                    .args(["hal/regdb/extract/extract.py", "--check", family]),
            );
            tally.check(&format!("regdb-extraction-{family}"), ok);
        }
    });

    // 2. Host unit, integration and doc tests of the whole workspace, and the host-testable
    //    parts of the bare-metal images (own packages, outside the workspace).
    let binaries = tally.phase("workspace build", build_workspace_tests);
    // The QEMU images (test kernels, Pi image and card, the bootloader example's disk-image
    // tool, the model server) build in the background from here on, in the idle scheduling
    // class: on the cores the phases below leave idle (test runs, one-package builds, link
    // steps). The QEMU cases wait for them; what is left then is its own phase row.
    let images_log = repo_root().join("target/qemu-images.log");
    let images = std::thread::spawn({
        let log = images_log.clone();
        move || -> std::io::Result<bool> {
            let started = Instant::now();
            let out = std::fs::File::create(&log)?;
            let status = at_idle_priority(&test_run_qemu_runner("images"))
                .stdout(out.try_clone()?)
                .stderr(out)
                .status()?;
            eprintln!(
                "xtask: the QEMU images built in the background in {:.1} s",
                started.elapsed().as_secs_f64()
            );
            Ok(status.success())
        }
    });
    tally.phase("workspace tests", |tally| {
        let mut test = cargo();
        test.args(["test", "--workspace", "--no-fail-fast"]);
        match with_workspace_lints(test) {
            Some(mut test) => cargo_tests(tally, "cargo test --workspace", &mut test),
            None => tally.check("cargo test --workspace", false),
        }
        cargo_tests(
            tally,
            "cargo test (qemu-tests/rpi, host)",
            cargo().current_dir(repo_root().join("qemu-tests/rpi")).args([
                "test",
                "--lib",
                "--target-dir",
                "../../target/rpi",
            ]),
        );
    });
    // The R5xx, Evergreen, V3D and Tesla drivers, the CTM workloads and the scheduler example
    // against other engine interleavings: two more seeds and run-to-idle (the default seed ran
    // above), and threaded, with the executables built above.
    tally.phase("pacing reruns", |tally| {
        let pacings = EXTRA_SEEDS.map(|s| format!("seeded:{s}"));
        for pacing in pacings.iter().map(String::as_str).chain(["run-to-idle", THREADED_PACING]) {
            rerun_paced(tally, &binaries, PACED_PACKAGES, pacing);
        }
    });

    // 3. The published crates' documentation builds. (The no_std crates are type-checked for
    // both bare-metal targets, `defmt` on, by the MSRV check of `publish_checks`, built by the
    // outside-crate build and the QEMU images, the kernel JSON target among them.)
    tally.phase("doc builds", |tally| {
        for (i, t) in BARE_METAL_TARGETS.iter().enumerate() {
            let crates = if i == 0 { PUBLISHED_CRATES } else { TARGET_DEPENDENT_CRATES };
            let ok = run(
                &format!("cargo doc -D warnings for {t} ({} crates)", crates.len()),
                &mut doc_build(t, crates),
            );
            tally.check(&format!("doc-{t}"), ok);
        }
    });
    publish_checks(&mut tally);

    // 4. Hostile input: a short fuzz of every target, and Miri on the unsafe core. Miri
    // interprets on one core: the fuzz targets run beside it on the other, one at a time.
    let fuzz_bin = tally.phase("fuzz build", fuzz_build);
    tally.phase("Miri, beside the fuzz runs", |tally| {
        // One target at a time beside Miri, then one per core.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (miri_done, go) = std::sync::mpsc::channel();
        let fuzzing =
            fuzz_bin.map(|bin| std::thread::spawn(move || fuzz_runs(&bin, 1, cores - 1, go)));
        miri_tests(tally);
        let _ = miri_done.send(());
        if let Some(fuzzing) = fuzzing {
            let passed = fuzzing.join().unwrap_or_default();
            for (i, t) in FUZZ_TARGETS.iter().enumerate() {
                tally.check(&format!("fuzz-{t}"), passed.get(i).copied().unwrap_or(false));
            }
        }
    });
    tally.phase("QEMU image builds (the rest)", |tally| {
        let built = images.join().is_ok_and(|r| matches!(r, Ok(true)));
        if !built {
            eprintln!("xtask: building the QEMU images failed: see {}", images_log.display());
        }
        tally.check("qemu-images", built);
    });

    // 5. The QEMU cases: test kernels and Pi image beside their emulated devices (images built
    // above; the runner's own build is then a no-op).
    tally.phase("QEMU cases", |tally| {
        eprintln!("xtask: qemu-runner test");
        match test_run_qemu_runner("test").stdout(Stdio::piped()).stderr(Stdio::inherit()).output()
        {
            Ok(out) => {
                let text = String::from_utf8_lossy(&out.stdout);
                print!("{text}");
                match parse_summary(&text) {
                    Some((p, f)) => {
                        tally.passed += p;
                        tally.failed += f;
                        if f > 0 {
                            tally.failures.push("qemu cases".into());
                        }
                    }
                    None => tally.check("qemu-runner", false),
                }
            }
            Err(e) => {
                eprintln!("xtask: cannot run qemu-runner: {e}");
                tally.check("qemu-runner", false);
            }
        }
    });

    // 6. Formatting, and the lints of the packages outside the workspace (the workspace is
    // linted as it builds: `build_workspace_tests`).
    tally.phase("clippy and rustfmt", |tally| {
        let ok = run("cargo fmt --check", cargo().args(["fmt", "--all", "--check"]));
        tally.check("rustfmt", ok);
        let ok = run(
            "cargo fmt --check (fuzz)",
            cargo().current_dir(repo_root().join("fuzz")).args(["fmt", "--check"]),
        );
        tally.check("rustfmt-fuzz", ok);
        let mut formatted = BTreeSet::new();
        for image in IMAGE_PACKAGES {
            if formatted.insert(image.dir) {
                let ok = run(
                    &format!("cargo fmt --check ({})", image.dir),
                    cargo().current_dir(repo_root().join(image.dir)).args(["fmt", "--check"]),
                );
                tally.check(&format!("rustfmt-{}", image.dir), ok);
            }
            let mut name = match image.features {
                [] => image.dir.to_string(),
                features => format!("{} --features {}", image.dir, features.join(",")),
            };
            // The kernel is checked for each of its targets.
            if let (Some(target), "qemu-tests/kernel") = (image.target, image.dir) {
                name = format!("{name} --target {target}");
            }
            let ok = run(&format!("cargo clippy ({name})"), &mut image_clippy(image));
            tally.check(&format!("clippy-{name}"), ok);
        }
    });

    println!();
    if !tally.failures.is_empty() {
        println!("failed checks: {}", tally.failures.join(", "));
        // A property test failure prints its minimal input and the `cc` line that replays it
        // from the test's `.proptest-regressions` file; the run's seed replays the whole run.
        println!(
            "property tests ran with {PROPTEST_SEED_ENV}={}: run again with it to reproduce",
            tally.proptest_seed
        );
    }
    if docs.is_none() {
        println!(
            "hardware documents not found: {} document checks not run; set {} (looked in {})",
            tally.skipped_doc_checks,
            gpu_docs::DOCS_DIR_ENV,
            gpu_docs::expected_dir().display()
        );
    }
    print!("{}", tally.phases.table());
    println!("test run took {:.1} s", start.elapsed().as_secs_f64());
    println!(
        "{} passed, {} failed, {} skipped",
        tally.passed, tally.failed, tally.skipped_doc_checks
    );
    if tally.failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// The published crates: built on stable at the declared rust-version for both bare-metal
/// targets (the nightly pin is for the test kernel only), then packaged as crates.io would
/// receive them and verified.
fn publish_checks(tally: &mut Tally) {
    tally.phase("MSRV check", |tally| match declared_rust_version() {
        Some(version) => {
            let ok = run(
                &format!(
                    "no_std crates and api-check with Rust {version} for {} (check)",
                    BARE_METAL_TARGETS.join(", ")
                ),
                &mut msrv_check(&version),
            );
            tally.check(&format!("msrv-{version}"), ok);
        }
        None => tally.check("rust-version declared in Cargo.toml", false),
    });
    tally.phase("packaging", |tally| {
        let ok = run("cargo package (published crates)", &mut package_crates());
        tally.check("cargo-package", ok);
    });
    tally.phase("outside-crate build", outside_build);
}

/// The packaged crates as an OS author gets them (`outside.rs`): a `no_std` kernel outside the
/// workspace built with them for both bare-metal targets, and their packaged tests run, with
/// the stable toolchain of the declared `rust-version`.
fn outside_build(tally: &mut Tally) {
    if tally.failures.iter().any(|f| f == "cargo-package") {
        return;
    }
    let root = repo_root();
    let Some(version) = declared_rust_version() else {
        tally.check("outside-build", false);
        return;
    };
    let packages = outside::packages(&root, PUBLISHED_CRATES);
    if packages.len() != PUBLISHED_CRATES.len() {
        eprintln!("xtask: outside build: not every published crate was packaged");
        tally.check("outside-build", false);
        return;
    }
    let dir = match outside::prepare(&root, &packages) {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("xtask: outside build: {e}");
            tally.check("outside-build", false);
            return;
        }
    };
    // Both targets in one invocation: their builds share the cores and the host's proc-macros.
    let mut kernel = stable_cargo(&version);
    kernel.current_dir(&dir).args(["build", "-p", "outside-kernel"]);
    for t in BARE_METAL_TARGETS {
        kernel.args(["--target", t]);
    }
    let ok = run(
        &format!(
            "outside kernel with Rust {version} for {} (target/outside)",
            BARE_METAL_TARGETS.join(", ")
        ),
        &mut kernel,
    );
    tally.check("outside-kernel", ok);
    // The packaged library unit tests, integration tests and doctests (tests that drive an
    // unpublished crate, such as a device model, live in `tests/` files excluded from the
    // package), in one invocation so the builds share both cores.
    // `--all-features`: every family, as the crates' self dev-dependencies give their tests in
    // the workspace (`cargo package` drops those), so no family's tests are skipped.
    let mut test = stable_cargo(&version);
    test.current_dir(&dir).args(["test", "--all-features"]);
    for c in PUBLISHED_CRATES {
        test.args(["-p", c]);
    }
    cargo_tests(
        tally,
        &format!("packaged crates' tests and doctests with Rust {version}"),
        &mut test,
    );
}

/// `cargo xtask package`: only [`publish_checks`] (part of `cargo xtask test`).
fn package_job() -> ExitCode {
    let mut tally = Tally::new();
    publish_checks(&mut tally);
    print!("{}", tally.phases.table());
    println!("{} passed, {} failed", tally.passed, tally.failed);
    if tally.failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// `cargo xtask outside`: only [`outside_build`] over the packages `cargo package` left in
/// `target/package` (after `cargo xtask package`, or `cargo package --no-verify`).
fn outside_job() -> ExitCode {
    let mut tally = Tally::new();
    outside_build(&mut tally);
    println!("{} passed, {} failed", tally.passed, tally.failed);
    if tally.failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// Rewrite the stale generated register modules (`regdb generate`).
fn regen_job() -> ExitCode {
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "-p", "regdb-gen", "--bin", "regdb", "--", "generate"]);
    if run("regenerate hal/regs/src/generated", &mut cmd) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("main") => main_job(),
        Some("test") => test_job(),
        Some("regen") => regen_job(),
        Some("package") => package_job(),
        Some("outside") => outside_job(),
        Some("decode") => decode::decode_job(&std::env::args().skip(2).collect::<Vec<_>>()),
        _ => {
            eprintln!("usage: cargo xtask <main|test|regen|package|outside|decode>");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_libtest;
    use std::path::{Path, PathBuf};

    /// Where a workspace crate's `defmt` feature does not forward to a dependency (a workspace
    /// crate) that has one, in `cargo metadata` JSON: "crate -> dependency" per gap. Without
    /// forwarding, the crate's `defmt::Format` derives compile only when something else
    /// happens to enable the dependency's feature.
    fn defmt_forwarding_gaps(metadata: &serde_json::Value) -> Vec<String> {
        let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
        let has_defmt = |name: &str| {
            packages.iter().any(|p| p["name"] == name && p["features"].get("defmt").is_some())
        };
        let mut gaps = Vec::new();
        for p in &packages {
            let Some(defmt) = p["features"]["defmt"].as_array() else { continue };
            let enables = |entry: &str| defmt.iter().any(|f| f.as_str() == Some(entry));
            for d in p["dependencies"].as_array().into_iter().flatten() {
                let Some(package) = d["name"].as_str() else { continue };
                // Normal dependencies only (`kind` null); dev- and build-dependencies are not
                // part of what a user's build enables.
                if !d["kind"].is_null() || !has_defmt(package) {
                    continue;
                }
                let name = d["rename"].as_str().unwrap_or(package);
                if !enables(&format!("{name}/defmt")) && !enables(&format!("{name}?/defmt")) {
                    gaps.push(format!("{} -> {name}", p["name"].as_str().unwrap_or("?")));
                }
            }
        }
        gaps
    }

    #[test]
    fn defmt_features_forward_to_every_dependency_that_has_one() {
        let out = std::process::Command::new(env!("CARGO"))
            .current_dir(super::repo_root())
            .args(["metadata", "--no-deps", "--format-version", "1"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(defmt_forwarding_gaps(&metadata), Vec::<String>::new());
        // The rule finds a gap: a crate whose `defmt` forgets its dependency's.
        let gap = serde_json::json!({"packages": [
            {"name": "a", "features": {"defmt": ["dep:defmt"]},
             "dependencies": [{"name": "b", "kind": null}, {"name": "c", "kind": "dev"}]},
            {"name": "b", "features": {"defmt": []}, "dependencies": []},
            {"name": "c", "features": {"defmt": []}, "dependencies": []},
        ]});
        assert_eq!(defmt_forwarding_gaps(&gap), ["a -> b"]);
    }

    #[test]
    fn lint_warnings_are_counted_from_cargos_messages_and_summaries_are_not() {
        let lint = r#"{"reason":"compiler-message","message":{"level":"warning","code":{"code":"clippy::len_zero"},"spans":[{"line_start":1}],"rendered":"warning: len zero\n"}}"#;
        let error = r#"{"reason":"compiler-message","message":{"level":"error","code":null,"spans":[{"line_start":2}],"rendered":"error: x\n"}}"#;
        let summary = r#"{"reason":"compiler-message","message":{"level":"warning","code":null,"spans":[],"rendered":"warning: 1 warning emitted\n"}}"#;
        let artifact = r#"{"reason":"compiler-artifact","profile":{"test":true}}"#;
        let messages = [lint, error, summary, artifact, "Compiling x"].join("\n");
        assert_eq!(super::compiler_warnings(&messages), 2);
        assert_eq!(super::compiler_warnings(&[summary, artifact].join("\n")), 0);
    }

    #[test]
    fn runner_summary_is_found_at_the_end() {
        let out = "case a ... ok\nperformance:\n3 passed, 1 failed\n";
        assert_eq!(super::parse_summary(out), Some((3, 1)));
        assert_eq!(super::parse_summary("7 passed, 0 failed, 2 skipped\n"), Some((7, 0)));
        assert_eq!(super::parse_summary("nothing"), None);
        assert_eq!(super::parse_summary("1 passed, 0 failed, lots skipped"), None);
    }

    #[test]
    fn skipped_doc_checks_are_counted_once_each() {
        let log = std::env::temp_dir().join(format!("xtask-skips-{}", std::process::id()));
        std::fs::write(&log, "r5xx_doc-1 a\nr5xx_doc-1 b\nr5xx_doc-1 a\n\n").unwrap();
        assert_eq!(super::skipped_doc_checks(&log), 2);
        std::fs::remove_file(&log).unwrap();
        assert_eq!(super::skipped_doc_checks(&log), 0, "no log: nothing skipped");
    }

    #[test]
    fn fuzz_target_list_matches_the_fuzz_manifest() {
        let manifest = std::fs::read_to_string(super::repo_root().join("fuzz/Cargo.toml")).unwrap();
        let names: Vec<&str> = manifest
            .lines()
            .filter_map(|l| l.strip_prefix("name = \"")?.strip_suffix('"'))
            .filter(|n| *n != "baregpu-fuzz")
            .collect();
        assert_eq!(names, super::FUZZ_TARGETS);
    }

    /// Every file named `file_name` under `dir` (not in `target/` or `.git/`).
    fn files_named(dir: &Path, file_name: &str, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() && name != "target" && name != ".git" {
                files_named(&path, file_name, out);
            } else if name.to_str().is_some_and(|n| n.ends_with(file_name)) {
                out.push(path);
            }
        }
    }

    /// The published crates: name and directory.
    fn published_crates() -> Vec<(String, PathBuf)> {
        let mut found = Vec::new();
        files_named(&super::repo_root(), "Cargo.toml", &mut found);
        let mut published: Vec<(String, PathBuf)> = found
            .iter()
            .filter_map(|p| {
                let m = std::fs::read_to_string(p).unwrap();
                m.lines().any(|l| l.trim() == "publish = true").then_some(())?;
                let name = m.lines().find_map(|l| l.strip_prefix("name = \""))?;
                Some((name.trim_end_matches('"').to_string(), p.parent()?.to_path_buf()))
            })
            .collect();
        published.sort();
        published
    }

    /// Every manifest that says `publish = true` is packaged and MSRV-built, and nothing else:
    /// a crate made publishable joins the checks, a test crate cannot slip in.
    #[test]
    fn published_crates_are_the_manifests_with_publish_true() {
        let published: Vec<String> = published_crates().into_iter().map(|(n, _)| n).collect();
        let mut expected: Vec<&str> = super::PUBLISHED_CRATES.to_vec();
        expected.sort();
        assert_eq!(published, expected);
        assert_eq!(super::declared_rust_version().as_deref(), Some("1.88"));
    }

    /// The documentation is built for the second bare-metal target only for the crates whose
    /// source depends on the target: a crate that gains `cfg(target_arch)` joins that list.
    #[test]
    fn target_dependent_crates_are_the_published_sources_with_target_cfgs() {
        let mut dependent: Vec<String> = published_crates()
            .into_iter()
            .filter(|(_, dir)| {
                let mut sources = Vec::new();
                files_named(&dir.join("src"), ".rs", &mut sources);
                sources.iter().any(|f| {
                    let text = std::fs::read_to_string(f).unwrap();
                    text.contains("target_arch") || text.contains("target_os")
                })
            })
            .map(|(n, _)| n)
            .collect();
        dependent.sort();
        assert_eq!(dependent, super::TARGET_DEPENDENT_CRATES);
    }

    /// The test command runs property tests under a fixed seed unless the developer sets one.
    #[test]
    fn property_tests_run_under_a_fixed_seed_unless_one_is_set() {
        let fixed = super::DEFAULT_PROPTEST_SEED.to_string();
        assert_eq!(super::proptest_seed(None), fixed);
        assert_eq!(super::proptest_seed(Some("")), fixed);
        assert_eq!(super::proptest_seed(Some(" 7 ")), "7");
    }

    #[test]
    fn phase_times_add_up_per_name_in_first_run_order() {
        use std::time::Duration;
        let mut p = super::Phases::default();
        p.add("workspace build", Duration::from_millis(1500));
        p.add("QEMU cases", Duration::from_secs(60));
        p.add("workspace build", Duration::from_millis(500));
        let table = p.table();
        let rows: Vec<&str> = table.lines().collect();
        assert_eq!(rows.len(), 4, "{table}");
        assert!(rows[1].starts_with("workspace build") && rows[1].ends_with("  2.0 s"), "{table}");
        assert!(rows[2].starts_with("QEMU cases") && rows[2].ends_with(" 60.0 s"), "{table}");
        assert!(rows[3].starts_with("total") && rows[3].ends_with(" 62.0 s"), "{table}");
    }

    #[test]
    fn test_executables_are_found_in_cargos_messages() {
        let messages = r#"{"reason":"compiler-artifact","manifest_path":"/r/drivers/radeon-r5xx/Cargo.toml","profile":{"test":true},"executable":"/r/target/debug/deps/driver-1"}
{"reason":"compiler-artifact","manifest_path":"/r/hal/core/Cargo.toml","profile":{"test":false},"executable":null}
{"reason":"compiler-artifact","manifest_path":"/r/examples/register-tour/Cargo.toml","profile":{"test":false},"executable":"/r/target/debug/register-tour"}
{"reason":"build-finished","success":true}
not json"#;
        let found = super::test_binaries(messages);
        assert_eq!(found.len(), 1, "only test-profile executables");
        assert_eq!(found[0].executable, Path::new("/r/target/debug/deps/driver-1"));
        assert_eq!(found[0].package_dir, Path::new("/r/drivers/radeon-r5xx"));
    }

    #[test]
    fn libtest_summaries_are_summed() {
        let out = "running 3 tests\n\
                   test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n\
                   test result: FAILED. 5 passed; 2 failed; 1 ignored; 0 measured; 0 filtered out\n";
        assert_eq!(parse_libtest(out), (8, 2));
    }
}
