//! `firmware-loader`: parse, validate and upload GPU microcode.
//!
//! Placeholder crate: the AMD CP microengine loader (`radeon/R520_cp.bin`, Evergreen PFP/ME)
//! arrives with the R5xx driver issue, the falcon IMEM/DMEM loader with the nVidia driver. It
//! builds for the bare-metal targets so the workspace layout is final.
#![no_std]
