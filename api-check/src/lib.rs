//! Checks over the public API of the library crates, in one place because they span all of
//! them (this crate depends on every library crate and is not published).
//!
//! - Every public error type, listed once below and checked at compile time: each is a
//!   `core::error::Error + Send + Sync + 'static` (usable as `Box<dyn Error + Send + Sync>` and
//!   across threads), and with the `defmt` feature each is `defmt::Format` (the crates marked
//!   `+ defmt`; `cargo xtask test` builds this crate so for `x86_64-unknown-none`).
//!   `tests/listed.rs` scans the crates' sources and fails when a public error type is missing
//!   here, so a new one cannot skip the checks.
//! - The Rust examples of the top README, of every library crate's README and of
//!   `docs/porting.md` run as doctests of this crate (`ReadmeExamples`, `R5xxReadme`, ...,
//!   built only under `cfg(doctest)`), so they cannot rot.
#![no_std]
#![forbid(unsafe_code)]

/// Compiles only for a `core::error::Error` usable across threads.
pub const fn assert_error<E: core::error::Error + Send + Sync + 'static>() {}

/// Compiles only for a type `defmt` can log.
#[cfg(feature = "defmt")]
pub const fn assert_format<E: defmt::Format>() {}

macro_rules! error_types {
    ($( $dir:literal $(+ $defmt:ident)? => [$($ty:ty),* $(,)?] ),* $(,)?) => {
        /// `(crate directory, error types)`: every public error type of each library crate.
        pub const LISTED: &[(&str, &[&str])] = &[$(($dir, &[$(stringify!($ty)),*])),*];
        const _: () = { $($( assert_error::<$ty>(); )*)* };
        $( error_types!(@format [$($defmt)?] $($ty),*); )*
    };
    (@format [defmt] $($ty:ty),*) => {
        #[cfg(feature = "defmt")]
        const _: () = { $( assert_format::<$ty>(); )* };
    };
    (@format [] $($ty:ty),*) => {};
}

error_types! {
    "hal/core" + defmt => [
        baregpu_hal::register::IndexOutOfRange,
        baregpu_hal::register::FieldOverflow,
        baregpu_hal::register::InvalidEnumValue,
        baregpu_hal::register::AddressFieldError,
        baregpu_hal::register::UnknownChipset,
        baregpu_hal::dma::DmaError,
        baregpu_hal::time::TimedOut,
        baregpu_hal::pci::PciError,
        baregpu_hal::pci::GpuProbeError,
    ],
    "hal/platform" + defmt => [
        baregpu_platform::dma::PoolError,
        baregpu_platform::clock::CalibrationError,
        baregpu_platform::msi::MsiError,
        baregpu_platform::mmio::MapError,
        baregpu_platform::boot::BootError,
    ],
    // Generated register code returns the HAL's errors; packet bodies have their own.
    "hal/regs" + defmt => [
        baregpu_regs::packet::BodyError,
        baregpu_regs::packet::RecordError,
    ],
    "ring" + defmt => [
        baregpu_ring::pm4::NoSpace,
        baregpu_ring::pm4::Pm4Error,
        baregpu_ring::pm4::PadError,
        baregpu_ring::ib::IbError,
        baregpu_ring::ring::RingConfigError,
        baregpu_ring::ring::BadReadPointer,
        baregpu_ring::ring::WaitError,
        baregpu_ring::vc4::ControlListError,
        baregpu_ring::vc4::RelocationError,
        baregpu_ring::nvidia::PushbufferError,
        baregpu_ring::nvidia::IbSubmitError,
    ],
    "hal/gpu" + defmt => [
        baregpu_gpu::DeviceGone,
        baregpu_gpu::Overrun,
        baregpu_gpu::FenceFailure,
        baregpu_gpu::FenceError,
        // The drivers' `TestError`s (and `DeviceGone`, `FenceError`) are these, re-exported.
        baregpu_gpu::TestError<baregpu_radeon_r5xx::SubmitError>,
        baregpu_gpu::TestError<baregpu_radeon_evergreen::SubmitError>,
        baregpu_gpu::TestError<baregpu_nvidia_tesla::SubmitError>,
    ],
    "firmware-loader" + defmt => [
        baregpu_firmware::FirmwareError,
        baregpu_firmware::amd::LoadError,
        baregpu_firmware::amd::evergreen::ImageError,
        baregpu_firmware::amd::evergreen::LoadError,
        baregpu_firmware::falcon::FalconImageError,
        baregpu_firmware::falcon::FalconLoadError,
    ],
    "drivers/radeon-r5xx" + defmt => [
        baregpu_radeon_r5xx::ConfigError,
        baregpu_radeon_r5xx::SubmitError,
        baregpu_radeon_r5xx::InitError,
        baregpu_radeon_r5xx::ResetError,
        baregpu_radeon_r5xx::ctm::CtmLoadError,
        baregpu_radeon_r5xx::ctm::CtmWaitError,
    ],
    "drivers/radeon-evergreen" + defmt => [
        baregpu_radeon_evergreen::ScratchError,
        baregpu_radeon_evergreen::ConfigError,
        baregpu_radeon_evergreen::SubmitError,
        baregpu_radeon_evergreen::InitError,
        baregpu_radeon_evergreen::pm4::PacketError,
        baregpu_radeon_evergreen::compute::DispatchError,
        baregpu_radeon_evergreen::IrqError,
    ],
    "drivers/videocore-v3d" + defmt => [
        baregpu_videocore_v3d::ProbeError,
        baregpu_videocore_v3d::JobError,
        baregpu_videocore_v3d::BuildError,
        baregpu_videocore_v3d::SubmitError,
        baregpu_videocore_v3d::WaitError,
        baregpu_videocore_v3d::InitError,
    ],
    "drivers/nvidia-tesla" + defmt => [
        baregpu_nvidia_tesla::ProbeError,
        baregpu_nvidia_tesla::PciProbeError,
        baregpu_nvidia_tesla::MemoryError,
        baregpu_nvidia_tesla::InitError,
        baregpu_nvidia_tesla::ChannelError,
        baregpu_nvidia_tesla::FifoError,
        baregpu_nvidia_tesla::SubmitError,
        baregpu_nvidia_tesla::QueueError,
        baregpu_nvidia_tesla::FalconError,
    ],
    "drivers/ati-ctm" + defmt => [
        baregpu_ati_ctm::command::CtmError,
        baregpu_ati_ctm::elf::ElfError,
    ],
    "drivers/dpp-asm" + defmt => [
        baregpu_dpp_asm::AsmError,
        baregpu_dpp_asm::isa::EncodeError,
        baregpu_dpp_asm::elf::ElfError,
        baregpu_dpp_asm::BuildError,
    ],
    "drivers/evergreen-asm" + defmt => [
        baregpu_evergreen_asm::Error,
        baregpu_evergreen_asm::isa::EncodeError,
        baregpu_evergreen_asm::abi::AbiError,
    ],
    "drivers/falcon-asm" + defmt => [
        baregpu_falcon_asm::AsmError,
        baregpu_falcon_asm::BuildError,
        baregpu_falcon_asm::isa::EncodeError,
        baregpu_falcon_asm::isa::DecodeError,
    ],
    "drivers/qpu-asm" + defmt => [
        baregpu_qpu_asm::AsmError,
        baregpu_qpu_asm::BuildError,
        baregpu_qpu_asm::OperandError,
        baregpu_qpu_asm::RuleError,
        baregpu_qpu_asm::isa::EncodeError,
        baregpu_qpu_asm::isa::DecodeError,
    ],
    "drivers/vc4-validate" + defmt => [
        baregpu_vc4_validate::ListError,
        baregpu_vc4_validate::ShaderError,
    ],
}

/// The repository's README.md: its Rust code blocks are doctests of this crate.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;

/// Each library crate's README and the porting guide: their Rust blocks are doctests too, with
/// every feature of every crate on (this crate's dependencies), so no README shows code that
/// does not compile.
macro_rules! readme_doctests {
    ($($name:ident => $path:literal),* $(,)?) => {$(
        #[cfg(doctest)]
        #[doc = include_str!($path)]
        pub struct $name;
    )*};
}

readme_doctests! {
    HalReadme => "../../hal/core/README.md",
    PlatformReadme => "../../hal/platform/README.md",
    GpuReadme => "../../hal/gpu/README.md",
    RegsReadme => "../../hal/regs/README.md",
    RingReadme => "../../ring/README.md",
    FirmwareReadme => "../../firmware-loader/README.md",
    R5xxReadme => "../../drivers/radeon-r5xx/README.md",
    EvergreenReadme => "../../drivers/radeon-evergreen/README.md",
    VideoCoreV3dReadme => "../../drivers/videocore-v3d/README.md",
    NvidiaTeslaReadme => "../../drivers/nvidia-tesla/README.md",
    AtiCtmReadme => "../../drivers/ati-ctm/README.md",
    DppAsmReadme => "../../drivers/dpp-asm/README.md",
    EvergreenAsmReadme => "../../drivers/evergreen-asm/README.md",
    FalconAsmReadme => "../../drivers/falcon-asm/README.md",
    QpuAsmReadme => "../../drivers/qpu-asm/README.md",
    Vc4ValidateReadme => "../../drivers/vc4-validate/README.md",
    PortingGuide => "../../docs/porting.md",
}
