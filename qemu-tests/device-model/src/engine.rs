//! The device behind a lock, and under `threaded` pacing ([`crate::pacing`]) the engine thread
//! that ticks it on the wall clock; shared by the ivshmem server and [`crate::InProcess`].
//!
//! The engine thread sleeps while the model is idle (a request wakes it), then every
//! millisecond ticks the model up to `ticks-per-ms` times ([`Device::tick_engines`]: stops
//! early when the model goes idle or waits; hang detection as for every pacing) and calls its
//! `progress` callback (the server's signals its loop's eventfd, which publishes the header and
//! delivers interrupts: all transport I/O stays on the server thread). A thread the host
//! scheduled late makes up for the milliseconds it missed, at most [`MAX_CATCH_UP_MS`] of them
//! in one burst: the model's time keeps up with the wall clock a driver's timeouts read on a
//! loaded host, and the lock is held for a bounded number of ticks. A host that does not
//! schedule the engine thread at all for a while (two cores, many busy processes) cannot hold
//! the model back either: whoever polls the device in process ([`Engine::catch_up`], every
//! [`crate::ModelClock`] reading) ticks the milliseconds the thread is late, so a driver
//! timeout read on the wall clock always saw the engines run that long.

use crate::device::Device;
use crate::model::{Activity, GpuModel};
use crate::pacing::Pacing;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

struct Shared<M> {
    device: Mutex<Device<M>>,
    /// Signalled after a request (the model may have work).
    work: Condvar,
    stop: AtomicBool,
    /// The wall-clock instant the engines have ticked through (locked after `device` when
    /// both are held).
    ticked_through: Mutex<Instant>,
    /// The engine thread sleeps while the model is idle (idle time is owed no ticks).
    sleeping: AtomicBool,
}

/// The device, and the engine thread when the pacing is `threaded`.
pub(crate) struct Engine<M: GpuModel + 'static> {
    shared: Arc<Shared<M>>,
    thread: Option<JoinHandle<()>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while ticking is a model bug; the device state is still the best there is.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<M: GpuModel + 'static> Engine<M> {
    /// Wrap `device`; under `threaded` pacing start the engine thread, which calls `progress`
    /// after the ticks of every millisecond.
    pub(crate) fn start(
        device: Device<M>,
        progress: impl Fn() + Send + 'static,
    ) -> io::Result<Self> {
        let pacing = device.pacing();
        let shared = Arc::new(Shared {
            device: Mutex::new(device),
            work: Condvar::new(),
            stop: AtomicBool::new(false),
            ticked_through: Mutex::new(Instant::now()),
            sleeping: AtomicBool::new(false),
        });
        let thread = match pacing {
            Pacing::Threaded { ticks_per_ms } => {
                let shared = Arc::clone(&shared);
                let handle = std::thread::Builder::new()
                    .name("engines".into())
                    .spawn(move || run_engines(&shared, ticks_per_ms, &progress))?;
                Some(handle)
            }
            Pacing::RunToIdle | Pacing::Seeded(_) => None,
        };
        Ok(Engine { shared, thread })
    }

    /// Whether the engine thread runs (the server loop then needs no timer).
    pub(crate) fn threaded(&self) -> bool {
        self.thread.is_some()
    }

    /// The device, locked.
    pub(crate) fn device(&self) -> MutexGuard<'_, Device<M>> {
        lock(&self.shared.device)
    }

    /// A request was served: wake the engine thread if it sleeps.
    pub(crate) fn notify(&self) {
        if self.shared.sleeping.load(Ordering::Acquire) {
            // The engines owe nothing for the idle time before this request.
            *lock(&self.shared.ticked_through) = Instant::now();
        }
        self.shared.work.notify_one();
    }

    /// Under `threaded` pacing, tick the milliseconds the engine thread is late by
    /// ([`LATE`] or more: the host did not schedule it), as the thread itself would have.
    /// `device` is this engine's device, locked by the caller.
    pub(crate) fn catch_up(&self, device: &mut Device<M>) {
        let Pacing::Threaded { ticks_per_ms } = device.pacing() else { return };
        if device.activity() == Activity::Idle {
            return;
        }
        let mut through = lock(&self.shared.ticked_through);
        if through.elapsed() >= LATE {
            tick_through(device, &mut through, ticks_per_ms);
        }
    }
}

impl<M: GpuModel + 'static> Drop for Engine<M> {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.work.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

const MILLISECOND: Duration = Duration::from_millis(1);

/// How late the engine thread may be before a poll ticks for it ([`Engine::catch_up`]): two of
/// its periods, so a thread the host runs on time does all the ticking.
const LATE: Duration = Duration::from_millis(2);

/// Tick the milliseconds since `through` (at least one, at most [`MAX_CATCH_UP_MS`]); the
/// engines have then ticked through now.
fn tick_through<M: GpuModel>(device: &mut Device<M>, through: &mut Instant, ticks_per_ms: u32) {
    let now = Instant::now();
    let missed = now.duration_since(*through).as_millis().clamp(1, MAX_CATCH_UP_MS.into()) as u32;
    *through = now;
    device.tick_engines(ticks_per_ms.saturating_mul(missed));
}

/// Most milliseconds of ticks one burst makes up for: the drivers' default timeout (100 ms), so
/// after a pause of the whole process shorter than a timeout the model catches up at once.
pub(crate) const MAX_CATCH_UP_MS: u32 = 100;

fn run_engines<M: GpuModel>(shared: &Shared<M>, ticks_per_ms: u32, progress: &impl Fn()) {
    let stopped = || shared.stop.load(Ordering::Acquire);
    let mut next = Instant::now();
    loop {
        {
            let mut device = lock(&shared.device);
            if device.activity() == Activity::Idle {
                shared.sleeping.store(true, Ordering::Release);
                while device.activity() == Activity::Idle && !stopped() {
                    // The timeout only bounds how late a stop is noticed.
                    device = match shared.work.wait_timeout(device, Duration::from_millis(100)) {
                        Ok((d, _)) => d,
                        Err(poisoned) => poisoned.into_inner().0,
                    };
                }
                shared.sleeping.store(false, Ordering::Release);
                next = Instant::now();
                *lock(&shared.ticked_through) = next;
            }
        }
        if stopped() {
            return;
        }
        next = (next + MILLISECOND).max(Instant::now());
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        if stopped() {
            return;
        }
        {
            let mut device = lock(&shared.device);
            tick_through(&mut device, &mut lock(&shared.ticked_through), ticks_per_ms);
        }
        progress();
    }
}
