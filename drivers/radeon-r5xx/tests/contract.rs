//! The family-generic contract suite (`gpu-contract`, issue #17 §1) over the R5xx driver and
//! its in-process R520 model (the fixture is in `common`).

mod common;

use common::with_r5xx;

gpu_contract::contract_suite!(with_r5xx);
