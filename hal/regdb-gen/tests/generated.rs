//! The generated register modules checked in under `hal/regs/src/generated/` are exactly what
//! the generator makes of the databases: a database or generator change without
//! `cargo xtask regen` fails here (the hardware documents are not needed).

#[test]
fn generated_code_is_up_to_date() {
    let stale = regdb_gen::stale_files().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        stale.is_empty(),
        "stale generated files (run `cargo xtask regen`): {:?}",
        stale.iter().map(|p| p.display().to_string()).collect::<Vec<_>>()
    );
}

#[test]
fn every_family_and_the_fixture_have_a_generated_file() {
    let files = regdb_gen::generated_files();
    assert_eq!(files.len(), regdb_gen::FAMILIES.len() + 1);
    for (db, out) in files {
        assert!(db.exists(), "{}", db.display());
        assert!(out.exists(), "{} is missing (run `cargo xtask regen`)", out.display());
    }
}
