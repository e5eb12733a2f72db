//! The family-generic contract suite (`gpu-contract`, issue #17 §1) over the nVidia queue (an
//! IB-mode channel) and the emulated GT215 in process, under the pacing `cargo xtask test`
//! chooses (`GPU_MODEL_PACING`).

use std::cell::{Cell, RefCell};
use std::time::Duration;

use baregpu_nvidia_tesla::hal::dma::{BusAddress, DmaAllocator, DmaLayout, DmaRegion};
use baregpu_nvidia_tesla::queue::Submission;
use baregpu_nvidia_tesla::ring::nvidia::PushbufferError;
use baregpu_nvidia_tesla::{ChannelId, Queue, QueueConfig, Tesla, TeslaConfig};
use gpu_contract::{Fixture, InProcessDevice};
use gpu_device_model::{InProcess, ModelClock};
use gt215_model::Gt215;

type Model = InProcess<Gt215>;
type Gpu = Tesla<&'static Model, ModelClock<'static, Gt215>>;
type Q = Queue<'static, &'static Model, ModelClock<'static, Gt215>>;

/// Main pushbuffer bytes: small, so the suite's wrap and back-pressure tests go round it often.
const MAIN_BYTES: usize = 4096;

thread_local! {
    /// Where this thread's fixture keeps its marker (a semaphore the submissions release).
    static MARKER: Cell<u64> = const { Cell::new(0) };
}

struct TeslaFixture {
    model: &'static Model,
    marker: &'static DmaRegion,
    queue: Q,
}

impl Fixture for TeslaFixture {
    type Queue = Q;

    fn queue(&mut self) -> &mut Q {
        &mut self.queue
    }
    type Model = Gt215;

    fn device(&self) -> InProcessDevice<'_, Self::Model> {
        InProcessDevice::new(self.model, |m| m.faults().switches())
    }
    /// A G84 semaphore release (§2.8.4): the 5 words of `SEMAPHORE_ADDRESS_HIGH..TRIGGER`.
    const MARKER_UNITS: usize = 5;
    fn write_marker(
        s: &mut Submission<'_, 'static, &'static Model>,
        value: u32,
    ) -> Result<(), PushbufferError> {
        let address = BusAddress(MARKER.with(Cell::get));
        s.writer().semaphore_release(address, value)
    }
    fn read_marker(&self) -> u32 {
        self.marker.read_u32(0).expect("the marker word")
    }
    fn closure_error() -> PushbufferError {
        PushbufferError::BadSubchannel { subchannel: 8 }
    }
    fn ring_units(&self) -> usize {
        MAIN_BYTES / 4
    }
    const TIMEOUT: Duration = Duration::from_secs(2);
}

fn with_tesla(test: impl Fn(&mut TeslaFixture)) {
    let model: &'static Model = Box::leak(Box::new(InProcess::new(Gt215::new()).expect("model")));
    let alloc = |bytes: usize, align: usize| -> &'static DmaRegion {
        Box::leak(Box::new(model.allocate(DmaLayout::new(bytes, align).unwrap()).unwrap()))
    };
    let marker = alloc(16, 16);
    MARKER.with(|m| m.set(marker.bus_address().0));
    let config = TeslaConfig::new(1 << 20, 1 << 20);
    let gpu = Tesla::init(model, ModelClock::new(model), config).expect("bring-up");
    let gpu: &'static RefCell<Gpu> = Box::leak(Box::new(RefCell::new(gpu)));
    let (main, ib, fences) = (alloc(MAIN_BYTES, 4096), alloc(4096, 4096), alloc(32, 16));
    let id = ChannelId::new(1).unwrap();
    let queue = Queue::new(gpu, id, main, ib, fences, QueueConfig::default()).expect("queue");
    test(&mut TeslaFixture { model, marker, queue });
}

gpu_contract::contract_suite!(with_tesla);
