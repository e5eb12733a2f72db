//! The family-generic contract suite (`gpu-contract`, issue #17 §1) over the Evergreen driver
//! and its in-process Cypress and Cayman models (the fixture is in `common`).

mod common;

use common::with_evergreen;

gpu_contract::contract_suite!(with_evergreen);
