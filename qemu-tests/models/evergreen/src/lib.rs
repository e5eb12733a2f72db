//! Emulated Radeon Evergreen (Cypress) and Northern Islands (Cayman) GPU, written from the AMD
//! "Evergreen/Cayman acceleration" document (`amd-evergreen-cayman-acceleration` §3 compute
//! shaders, §4 Cayman shader changes, §8.6 RATs) and the public facts it omits (Mesa r600,
//! LLVM R600 backend: cited where used), independently of the project's driver and assembler.
//!
//! This crate holds the compute **shader core** ([`shader`]): the decoder of the shader ISA
//! subset and its executor, driven one bounded step at a time. The command processor that
//! fills a [`shader::DispatchState`] from PM4 packets and register writes is built on it.
#![forbid(unsafe_code)]

pub mod shader;
