//! `gpu-ring`: command-stream writers and DMA command rings.
//!
//! Placeholder crate: the PM4 encoders and ring buffer arrive with the R5xx driver issue,
//! nVidia pushbuffers and VideoCore IV control lists with their drivers. It builds for the
//! bare-metal targets so the workspace layout is final.
#![no_std]
