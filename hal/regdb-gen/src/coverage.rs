//! Register coverage per family: what the main command prints.

use crate::model::Database;
use std::fmt::Write;

/// Counts describing one family's database.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Family name.
    pub family: String,
    /// Blocks.
    pub blocks: usize,
    /// Register entries (one per type; an array counts once).
    pub registers: usize,
    /// Distinct register names.
    pub names: usize,
    /// Register instances with arrays expanded.
    pub instances: usize,
    /// Arrays among the registers.
    pub arrays: usize,
    /// Fields listed in the database.
    pub fields: usize,
    /// Fields with enumerated values.
    pub enum_fields: usize,
    /// Enumerated values.
    pub enum_values: usize,
    /// Registers with a chipset range.
    pub variants: usize,
    /// Registers whose facts come from outside the family's document.
    pub outside_doc: usize,
}

impl Coverage {
    /// Count a database.
    pub fn of(db: &Database) -> Coverage {
        let mut names: Vec<&str> = db.registers.iter().map(|r| r.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let fields = db.registers.iter().flat_map(|r| &r.fields);
        Coverage {
            family: db.meta.family.clone(),
            blocks: db.blocks.len(),
            registers: db.registers.len(),
            names: names.len(),
            instances: db.registers.iter().map(|r| r.instances() as usize).sum(),
            arrays: db.registers.iter().filter(|r| r.count.is_some()).count(),
            fields: fields.clone().count(),
            enum_fields: fields.clone().filter(|f| !f.values.is_empty()).count(),
            enum_values: fields.map(|f| f.values.len()).sum(),
            variants: db.registers.iter().filter(|r| r.chipsets.is_some()).count(),
            outside_doc: db
                .registers
                .iter()
                .filter(|r| !r.source.starts_with(&db.meta.doc_label))
                .count(),
        }
    }
}

/// A table of coverage rows.
pub fn table(rows: &[Coverage]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<10} {:>6} {:>9} {:>6} {:>9} {:>6} {:>7} {:>10} {:>11} {:>8} {:>11}",
        "family",
        "blocks",
        "registers",
        "names",
        "instances",
        "arrays",
        "fields",
        "enum-fields",
        "enum-values",
        "variants",
        "outside-doc"
    );
    for c in rows {
        let _ = writeln!(
            out,
            "{:<10} {:>6} {:>9} {:>6} {:>9} {:>6} {:>7} {:>10} {:>11} {:>8} {:>11}",
            c.family,
            c.blocks,
            c.registers,
            c.names,
            c.instances,
            c.arrays,
            c.fields,
            c.enum_fields,
            c.enum_values,
            c.variants,
            c.outside_doc
        );
    }
    out
}
