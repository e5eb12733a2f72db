//! The list in `src/lib.rs` is complete, and errors chain their causes.

use std::collections::BTreeSet;
use std::path::Path;

use api_check::LISTED;
use baregpu_hal::error::Chain;

/// Name endings of public error types (the HAL's `FieldOverflow`, `IndexOutOfRange`,
/// `InvalidEnumValue`, `TimedOut`, the ring's `NoSpace`, `BadReadPointer`, the driver's
/// `DeviceGone`, the GPU layer's `Overrun` and `FenceFailure`, every `*Error`).
const ERROR_SUFFIXES: &[&str] = &[
    "Error",
    "Overflow",
    "OutOfRange",
    "Value",
    "TimedOut",
    "NoSpace",
    "Pointer",
    "Gone",
    "Overrun",
    "Failure",
];
/// Name beginnings of public error types (`UnknownChipset`, `BadReadPointer`).
const ERROR_PREFIXES: &[&str] = &["Unknown", "Bad", "Invalid"];

/// Public types whose names end like an error but are not errors.
const NOT_ERRORS: &[&str] = &[
    // baregpu-regs: the value of the R5xx field FORCE_COMPRESSED_STENCIL_VALUE.
    "ForceCompressedStencilValue",
];

/// `pub struct`/`pub enum` names in the `.rs` files under `dir`, recursively.
fn public_types(dir: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            public_types(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("source file");
            for line in text.lines() {
                let line = line.trim_start();
                let Some(rest) =
                    line.strip_prefix("pub struct ").or_else(|| line.strip_prefix("pub enum "))
                else {
                    continue;
                };
                let name: String =
                    rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
}

#[test]
fn every_public_error_type_of_every_library_crate_is_listed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut problems = Vec::new();
    for (dir, listed) in LISTED {
        let listed: BTreeSet<&str> = listed
            .iter()
            // A generic error is listed with its arguments (`TestError<Overrun>`): its name is
            // the last path segment before them.
            .map(|path| {
                let name = path.split('<').next().expect("a path");
                name.rsplit("::").next().expect("a type name").trim()
            })
            .collect();
        let mut found = BTreeSet::new();
        public_types(&root.join(dir).join("src"), &mut found);
        let errors: BTreeSet<&str> = found
            .iter()
            .map(String::as_str)
            .filter(|n| {
                ERROR_SUFFIXES.iter().any(|s| n.ends_with(s))
                    || ERROR_PREFIXES.iter().any(|p| n.starts_with(p))
            })
            .filter(|n| !NOT_ERRORS.contains(n))
            .collect();
        for missing in errors.difference(&listed) {
            problems.push(format!("{dir}: `{missing}` is not listed in api-check/src/lib.rs"));
        }
        for gone in listed.difference(&errors) {
            problems.push(format!("{dir}: `{gone}` is listed but not found in {dir}/src"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_library_crate_is_scanned() {
    let dirs: BTreeSet<&str> = LISTED.iter().map(|(dir, _)| *dir).collect();
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .expect("api-check/Cargo.toml");
    // Each library crate this crate depends on (`baregpu-*`) has its directory in the list.
    let deps = manifest.lines().filter(|l| l.starts_with("baregpu-")).count();
    assert_eq!(dirs.len(), deps, "{dirs:?} against {deps} baregpu-* dependencies");
    assert_eq!(dirs.len(), 16);
}

#[test]
fn a_wrapped_error_is_the_source_and_printed_once() {
    use baregpu_ring::pm4::{Pm4Error, Pm4Writer, SliceSink};
    let mut buf = [0u32; 2];
    let err = Pm4Writer::new(SliceSink::new(&mut buf)).nop(&[0; 4]).unwrap_err();
    assert!(matches!(err, Pm4Error::NoSpace(_)), "{err:?}");
    let source = core::error::Error::source(&err).expect("the NoSpace inside");
    assert_eq!(source.to_string(), "no room for 5 dwords (2 free)");
    assert_eq!(err.to_string(), "no room in the sink for the packet");
    assert_eq!(
        Chain(&err).to_string(),
        "no room in the sink for the packet: no room for 5 dwords (2 free)"
    );
}

#[test]
fn assembler_errors_keep_their_position_and_give_the_encoding_error_as_source() {
    let mut insts = [baregpu_dpp_asm::Instruction::default(); 4];
    let err = baregpu_dpp_asm::assemble("mad.exact o0, r1, r2, r3", &mut insts).unwrap_err();
    let source = core::error::Error::source(&err).expect("an encoding error");
    assert!(source.downcast_ref::<baregpu_dpp_asm::isa::EncodeError>().is_some());
    let chain = Chain(&err).to_string();
    assert!(chain.starts_with("1:1: the instruction cannot be encoded: "), "{chain}");

    // A builder error wraps the assembler's, which wraps the encoder's: three levels.
    let mut words = [[0u32; 6]; 4];
    let mut out = [0u8; 4096];
    let err = baregpu_dpp_asm::assemble_executable(
        "mad.exact o0, r1, r2, r3",
        &mut insts,
        &mut words,
        &mut out,
    )
    .unwrap_err();
    let chain = Chain(&err).to_string();
    assert_eq!(chain.matches(": ").count(), 3, "{chain}");
    assert!(chain.starts_with("assembly failed: 1:1: the instruction"), "{chain}");
}

#[test]
fn a_ring_wait_timeout_has_the_wait_as_source() {
    use baregpu_hal::time::TimedOut;
    use baregpu_ring::ring::WaitError;
    let waited = TimedOut::new(100, 7);
    let err = WaitError::TimedOut { needed: 16, free: 4, waited };
    let source = core::error::Error::source(&err).expect("the timeout");
    assert_eq!(source.downcast_ref::<TimedOut>(), Some(&waited));
    assert_eq!(
        Chain(&err).to_string(),
        "ring still has 4 of 16 dwords free: timed out after 100 us (7 polls)"
    );
}
