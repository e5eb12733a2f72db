//! The device side of every fixture: the driver's in-process model, stalled, gone, advanced
//! and its interrupts taken the same way for every family, through the fault switches all
//! models share (`gpu_mailbox::gpu_faults`).

use gpu_device_model::{GpuModel, InProcess};
use gpu_mailbox::gpu_faults::{ALL_ONES, CP_STALL};

/// An in-process model and how to read its current fault switches (each model keeps its own
/// fault set; a switch is changed by reading them, flipping one bit and injecting them back,
/// so the model's other faults stay as a test set them).
pub struct InProcessDevice<'a, M: GpuModel + 'static> {
    device: &'a InProcess<M>,
    switches: fn(&M) -> u32,
}

impl<'a, M: GpuModel + 'static> InProcessDevice<'a, M> {
    /// `device`, whose current fault switches `switches` reads (e.g.
    /// `|m| m.faults().switches()`).
    pub fn new(device: &'a InProcess<M>, switches: fn(&M) -> u32) -> Self {
        InProcessDevice { device, switches }
    }

    fn set_switch(&self, bit: u32, on: bool) {
        let mut model = self.device.model_mut();
        let current = (self.switches)(&model);
        let switches = if on { current | bit } else { current & !bit };
        assert!(model.inject(switches), "the model has fault switches");
    }

    /// Stall (or release) the command processor.
    pub fn set_stalled(&self, stalled: bool) {
        self.set_switch(CP_STALL, stalled);
    }

    /// Make every register read all-ones (or stop).
    pub fn set_gone(&self, gone: bool) {
        self.set_switch(ALL_ONES, gone);
    }

    /// Advance the model without the driver.
    pub fn run(&self) {
        self.device.poll();
    }

    /// Interrupts delivered since the last call, acknowledging the latched lines as the
    /// platform's handler would, so the next interrupt is delivered again.
    pub fn take_interrupts(&self) -> u32 {
        let delivered = self.device.take_interrupts();
        self.device.ack_irq(u32::MAX);
        delivered
    }
}
