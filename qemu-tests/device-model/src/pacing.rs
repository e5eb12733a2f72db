//! Engine pacing: how far a device's self-running engines (command processors, DMA engines)
//! advance relative to what the driver does.
//!
//! Real engines run on their own clock: a driver that writes a doorbell and reads a status
//! register right after sees the work partly done, a read pointer written back late, a fence
//! still in flight. A device model that finishes everything before the doorbell write returns
//! hides every driver bug that depends on that. [`Pacing`] chooses how the framework ticks
//! a model ([`crate::GpuModel::tick`]), for every model alike:
//!
//! | pacing | engines advance | use |
//! |---|---|---|
//! | `run-to-idle` | to idle after every mailbox request and clock reading | speed, the pre-pacing behaviour |
//! | `seeded:<u64>` | after every request and every clock reading ([`crate::ModelClock`]; the server's timer, see below), by a pseudo-random count of 0..=[`SEEDED_MAX_TICKS`] ticks from a [`SplitMix64`] stream seeded with the value, with long stalls ([`SeededPacer`]) | the default: partial progress is the normal case, and a failure reproduces from its seed |
//! | `threaded:<ticks-per-ms>` | on an engine thread (`model-server`'s, or an [`InProcess`](crate::InProcess) device's), `ticks-per-ms` ticks every millisecond of wall time while the model has work, independent of requests ([`crate::ModelClock`] then reads the wall clock) | closest to hardware; not reproducible |
//!
//! The pacing is chosen in code ([`crate::InProcessOptions::pacing`], the server's options) or
//! by the environment variable [`PACING_ENV`] (`GPU_MODEL_PACING`), read by
//! [`InProcess`](crate::InProcess) and `model-server` when the code does not choose; without
//! either it is [`Pacing::DEFAULT`] (seeded with [`DEFAULT_SEED`]). The device prints the pacing
//! it runs under, so a failing test's captured output says how to reproduce it.
//!
//! # Long windows
//!
//! Hardware is sometimes slow for a long while (memory refresh, another client, a context
//! switch of the host): a fence stays unwritten, a read pointer stands still for hundreds of
//! polls. Under seeded pacing one request or clock reading in [`STALL_ODDS`] starts a stall:
//! the engines get no tick for the next 2^k..2^(k+1) requests and clock readings, k drawn
//! uniformly from [`STALL_MIN_LOG2`]..=[`STALL_MAX_LOG2`] (a long tail: half the stalls are
//! longer than 64, the longest 1023). The work per request stays bounded: a stall only
//! withholds ticks.
//!
//! # Under the ivshmem server
//!
//! A guest that polls DMA memory (a fence, the written-back read pointer) makes no request,
//! so under `seeded` pacing the server also advances the engines on a timer: every
//! `poll_interval_ms` (1 ms) while the model is busy or waiting, by the next pseudo-random
//! count. Requests stay deterministic (their tick counts come from the seed in request
//! order); the timer's share depends on wall time. The timer is not stalled: a guest waiting
//! on memory with a wall-clock timeout would otherwise see a stall of a thousand timer periods
//! (a second).
//!
//! # Hang detection
//!
//! A model whose [`tick`](crate::GpuModel::tick) reports [`Activity::Busy`](crate::Activity)
//! for [`TICK_BUDGET`](crate::TICK_BUDGET) ticks in a row, across requests and clock readings,
//! is declared hung (a model bug: bounded work per tick makes any real workload go idle or
//! wait long before that). `Waiting` and `Idle` end the streak.

use std::fmt;
use std::str::FromStr;

/// The environment variable choosing the pacing: `run-to-idle`, `seeded:<u64>` (decimal or
/// `0x` hex), `threaded:<ticks-per-ms>`.
pub const PACING_ENV: &str = "GPU_MODEL_PACING";

/// The seed of [`Pacing::DEFAULT`].
pub const DEFAULT_SEED: u64 = 0x5EED_0009;

/// Most ticks one request or clock reading advances a model under seeded pacing. Small, so a
/// doorbell is rarely served in one go: the R5xx command processor fetches one `MAX_FETCH`
/// chunk per tick, so a 16-dword batch needs one to three ticks.
pub const SEEDED_MAX_TICKS: u32 = 3;

/// One request or clock reading in this many starts a stall (see "Long windows").
pub const STALL_ODDS: u32 = 1024;
/// Shortest stall: 2^STALL_MIN_LOG2 requests and clock readings.
pub const STALL_MIN_LOG2: u32 = 2;
/// Longest stall: just under 2^(STALL_MAX_LOG2 + 1) requests and clock readings.
pub const STALL_MAX_LOG2: u32 = 9;

/// The tick counts of seeded pacing: 0..=[`SEEDED_MAX_TICKS`] per request or clock reading,
/// with stalls of a long-tailed length (see "Long windows").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeededPacer {
    rng: SplitMix64,
    /// Requests and clock readings left in the current stall.
    stalled: u32,
}

impl SeededPacer {
    /// The counts for `seed`.
    pub const fn new(seed: u64) -> Self {
        SeededPacer { rng: SplitMix64::new(seed), stalled: 0 }
    }

    /// Ticks for the next request or clock reading.
    pub fn next_ticks(&mut self) -> u32 {
        if self.stalled > 0 {
            self.stalled -= 1;
            return 0;
        }
        if self.rng.up_to(STALL_ODDS - 1) == 0 {
            let log = STALL_MIN_LOG2 + self.rng.up_to(STALL_MAX_LOG2 - STALL_MIN_LOG2);
            let length = (1 << log) + self.rng.up_to((1 << log) - 1);
            self.stalled = length - 1;
            return 0;
        }
        self.rng.up_to(SEEDED_MAX_TICKS)
    }

    /// Ticks for the server's timer: never stalled, and a stall in progress stays.
    pub fn timer_ticks(&mut self) -> u32 {
        self.rng.up_to(SEEDED_MAX_TICKS)
    }
}

/// How the framework advances a model's engines (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pacing {
    /// To idle after every request and clock reading.
    RunToIdle,
    /// 0..=[`SEEDED_MAX_TICKS`] ticks per request and clock reading, from this seed.
    Seeded(u64),
    /// `ticks_per_ms` ticks per millisecond on an engine thread (the server's or an in-process device's).
    Threaded {
        /// Ticks per millisecond of wall time (at least 1).
        ticks_per_ms: u32,
    },
}

impl Pacing {
    /// The pacing when neither code nor environment chooses one: seeded with [`DEFAULT_SEED`].
    pub const DEFAULT: Pacing = Pacing::Seeded(DEFAULT_SEED);

    /// The pacing [`PACING_ENV`] names, `None` when it is unset or empty.
    pub fn from_env() -> Result<Option<Pacing>, BadPacing> {
        match std::env::var(PACING_ENV) {
            Ok(text) if text.trim().is_empty() => Ok(None),
            Ok(text) => text.parse().map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(v)) => {
                Err(BadPacing(v.to_string_lossy().into_owned()))
            }
        }
    }

    /// `explicit` if given, else the environment's, else [`Pacing::DEFAULT`].
    pub fn resolve(explicit: Option<Pacing>) -> Result<Pacing, BadPacing> {
        match explicit {
            Some(p) => Ok(p),
            None => Ok(Self::from_env()?.unwrap_or(Self::DEFAULT)),
        }
    }
}

impl Default for Pacing {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The spelling [`FromStr`] accepts, e.g. `seeded:1577058313`.
impl fmt::Display for Pacing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pacing::RunToIdle => f.write_str("run-to-idle"),
            Pacing::Seeded(seed) => write!(f, "seeded:{seed}"),
            Pacing::Threaded { ticks_per_ms } => write!(f, "threaded:{ticks_per_ms}"),
        }
    }
}

/// A pacing specification that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPacing(pub String);

impl fmt::Display for BadPacing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad engine pacing `{}` (expected run-to-idle, seeded:<u64> or threaded:<ticks-per-ms>)",
            self.0
        )
    }
}

impl std::error::Error for BadPacing {}

use crate::parse_number as parse_u64;

impl FromStr for Pacing {
    type Err = BadPacing;
    fn from_str(s: &str) -> Result<Self, BadPacing> {
        let bad = || BadPacing(s.to_owned());
        let s = s.trim();
        match s.split_once(':') {
            None if s == "run-to-idle" => Ok(Pacing::RunToIdle),
            Some(("seeded", seed)) => parse_u64(seed).map(Pacing::Seeded).ok_or_else(bad),
            Some(("threaded", rate)) => match parse_u64(rate).and_then(|r| u32::try_from(r).ok()) {
                Some(ticks_per_ms) if ticks_per_ms > 0 => Ok(Pacing::Threaded { ticks_per_ms }),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a 64-bit counter passed through a mixing function. Every seed, 0 included,
/// gives a full-period stream; two devices with the same seed see the same tick counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The stream for `seed`.
    pub const fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..=max` (modulo reduction: the bias is below 2^-60 for small `max`).
    pub fn up_to(&mut self, max: u32) -> u32 {
        (self.next_u64() % (u64::from(max) + 1)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip_and_bad_ones_are_typed_errors() {
        for p in [Pacing::RunToIdle, Pacing::Seeded(0), Pacing::Seeded(u64::MAX), Pacing::DEFAULT] {
            assert_eq!(p.to_string().parse::<Pacing>(), Ok(p));
        }
        assert_eq!("threaded:250".parse(), Ok(Pacing::Threaded { ticks_per_ms: 250 }));
        assert_eq!("seeded:0x10".parse(), Ok(Pacing::Seeded(16)));
        assert_eq!(" run-to-idle ".parse(), Ok(Pacing::RunToIdle));
        for bad in ["", "seeded", "seeded:", "seeded:-1", "threaded:0", "threaded:1e9", "fast"] {
            assert_eq!(bad.parse::<Pacing>(), Err(BadPacing(bad.into())), "{bad:?}");
        }
        assert_eq!(Pacing::default(), Pacing::Seeded(DEFAULT_SEED));
        assert_eq!(Pacing::resolve(Some(Pacing::RunToIdle)), Ok(Pacing::RunToIdle));
    }

    #[test]
    fn splitmix64_matches_the_reference_stream() {
        // Reference values of SplitMix64 seeded with 0 (the algorithm's published test vector
        // as used by e.g. the xoshiro seeding code).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn seeded_pacing_stalls_for_hundreds_of_requests_now_and_then() {
        let mut p = SeededPacer::new(DEFAULT_SEED);
        let mut q = SeededPacer::new(DEFAULT_SEED);
        let (mut zeros, mut run, mut longest, mut stalls_over_256) = (0u32, 0u32, 0u32, 0);
        let draws = 1_000_000;
        for _ in 0..draws {
            let n = p.next_ticks();
            assert_eq!(n, q.next_ticks(), "reproducible");
            assert!(n <= SEEDED_MAX_TICKS);
            if n == 0 {
                zeros += 1;
                run += 1;
            } else {
                if run > 256 {
                    stalls_over_256 += 1;
                }
                longest = longest.max(run);
                run = 0;
            }
        }
        assert!((512..2048).contains(&longest), "the tail reaches hundreds: {longest}");
        assert!(stalls_over_256 > 100, "{stalls_over_256} stalls over 256 requests");
        // A quarter of the draws are 0 anyway; stalls take less than half the time besides.
        let idle = f64::from(zeros) / f64::from(draws);
        assert!((0.3..0.7).contains(&idle), "{idle}");
        // The timer's counts never stall.
        assert!((0..1000).map(|_| p.timer_ticks()).any(|n| n > 0));
    }

    #[test]
    fn tick_counts_cover_the_range_and_repeat_for_a_seed() {
        let mut a = SplitMix64::new(42);
        let mut b = SplitMix64::new(42);
        let mut seen = [0u32; SEEDED_MAX_TICKS as usize + 1];
        for _ in 0..1000 {
            let n = a.up_to(SEEDED_MAX_TICKS);
            assert_eq!(n, b.up_to(SEEDED_MAX_TICKS));
            seen[n as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 150), "roughly uniform: {seen:?}");
    }
}
