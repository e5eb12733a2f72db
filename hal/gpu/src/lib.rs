//! The family-generic GPU layer of baregpu: what every family's driver shares, written once.
//!
//! - [`fence`]: the 64-bit fence [`Timeline`] (emission, completed-up-to, 32-bit write-back
//!   extension, rollback of a discarded submission, fences completed with an error status).
//! - [`submit`]: submission all or nothing over the per-family [`Batch`] trait (reserve, build
//!   within the reservation, pad, commit, one doorbell; a failed closure leaves nothing).
//! - [`wait`]: the bounded fence wait with liveness checks while it polls, over
//!   [`FenceSource`].
//! - [`recovery`]: reset and recovery as one protocol over [`Recovery`]: fences of lost work
//!   complete with [`FenceFailure::Lost`] only after the ring test passed.
//! - [`liveness`]: the health-checked poll loop every wait uses.
//! - [`GpuQueue`]: the interface a scheduler drives any family through.
//! - The shared errors ([`DeviceGone`], [`FenceError`], [`TestError`], [`Overrun`]) and
//!   [`Stats`].
//!
//! A family's driver keeps its registers, packets, microcode and chip differences, and
//! implements the small traits here (the way nova-core writes its `Falcon<E>` once over a
//! per-chipset `FalconHal`). The Radeon R5xx and Evergreen drivers are the first two.
//!
//! ```
//! use baregpu_gpu::{FenceFailure, FenceStatus, Timeline};
//!
//! let mut timeline = Timeline::new();
//! let a = timeline.emit();
//! let b = timeline.emit();
//! timeline.observe(a.seq());                    // the device wrote back 1
//! assert_eq!(timeline.status(&a), FenceStatus::Signalled);
//! assert_eq!(timeline.status(&b), FenceStatus::Pending);
//! // A reset discarded the ring: after its ring test, the lost fence completes with an error.
//! let lost = timeline.fail_pending(FenceFailure::Lost).unwrap();
//! assert_eq!((lost.first, lost.last), (2, 2));
//! assert_eq!(timeline.status(&b), FenceStatus::Failed(FenceFailure::Lost));
//! ```
//!
//! Safe Rust only, `no_std`, no allocation.
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod error;
pub mod fence;
pub mod gpu;
pub mod liveness;
pub mod recovery;
pub mod stats;
pub mod submit;
pub mod wait;

pub use error::{DeviceGone, FenceError, FenceFailure, Overrun, TestError};
pub use fence::{Checkpoint, Fence, FenceStatus, LostRange, Timeline};
pub use gpu::GpuQueue;
pub use recovery::{Recovery, ResetReport};
pub use stats::Stats;
pub use submit::{Allowance, Batch, Budget};
pub use wait::FenceSource;
