//! [`PlatformDevice`]: a device that is not PCI on real hardware (a register window on a
//! system bus, like the VideoCore IV V3D) presented as a PCI function with project-defined IDs
//! (`gpu_mailbox::platform`), so its model only implements [`PlatformModel`] (the register
//! window, its engines, reset) and gets the configuration space, BAR, transport and in-process
//! harness of every other model without writing that plumbing again.

use crate::context::DeviceContext;
use crate::model::{Activity, GpuModel, PciIdentity};
use crate::register_bar::RegisterBar;
use gpu_mailbox::platform;

/// What a non-PCI device model implements: its register window and engines. Offsets are
/// byte offsets into the window, dword aligned and inside it.
pub trait PlatformModel: Send {
    /// Bytes of the register window (a power of two, at least 16).
    fn window_bytes(&self) -> u64;

    /// Read the dword at `offset`, with its side effects.
    fn read(&mut self, offset: u32, dev: &mut DeviceContext<'_>) -> u32;

    /// Write the dword at `offset`, with its side effects.
    fn write(&mut self, offset: u32, value: u32, dev: &mut DeviceContext<'_>);

    /// One bounded step of the engines (see [`GpuModel::tick`]).
    fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        let _ = dev;
        Activity::Idle
    }

    /// Return to the power-on state.
    fn reset(&mut self);

    /// Fault-injection switches (see [`GpuModel::inject`]); `false`: none.
    fn inject(&mut self, switches: u32) -> bool {
        let _ = switches;
        false
    }
}

/// A [`PlatformModel`] as a PCI function: vendor [`platform::VENDOR`], the given device ID,
/// class [`platform::CLASS`], the register window as BAR0 ([`platform::REGISTER_BAR`]).
#[derive(Debug)]
pub struct PlatformDevice<M> {
    model: M,
    device_id: u16,
}

impl<M: PlatformModel> PlatformDevice<M> {
    /// `model` presented with PCI device ID `device_id` (one of `gpu_mailbox::platform`'s).
    pub fn new(model: M, device_id: u16) -> Self {
        PlatformDevice { model, device_id }
    }

    /// The wrapped model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The wrapped model, mutably.
    pub fn model_mut(&mut self) -> &mut M {
        &mut self.model
    }

    fn bar(&self) -> RegisterBar {
        RegisterBar::new(platform::REGISTER_BAR, self.model.window_bytes())
    }
}

impl<M: PlatformModel> GpuModel for PlatformDevice<M> {
    fn pci_identity(&self) -> PciIdentity {
        self.bar().present(PciIdentity::new(platform::VENDOR, self.device_id, platform::CLASS))
    }

    fn mmio_read(&mut self, bar: u8, offset: u32, dev: &mut DeviceContext<'_>) -> u32 {
        self.bar().read(bar, false, || self.model.read(offset, dev))
    }

    fn mmio_write(&mut self, bar: u8, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        self.bar().write(bar, false, || self.model.write(offset, value, dev));
    }

    fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        self.model.tick(dev)
    }

    fn reset(&mut self) {
        self.model.reset();
    }

    fn inject(&mut self, switches: u32) -> bool {
        self.model.inject(switches)
    }
}
