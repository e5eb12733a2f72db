//! The driver's errors: one `DeviceGone` wrapped by every operation's error, and `source()`
//! chains a caller can walk.

use core::error::Error;

use baregpu_firmware::amd::LoadError;
use baregpu_hal::dma::DmaError;
use baregpu_radeon_r5xx::{DeviceGone, FenceError, InitError, ResetError, SubmitError, TestError};

#[test]
fn every_device_gone_is_the_one_type_and_its_source() {
    let errors: [&dyn Error; 5] = [
        &SubmitError::DeviceGone(DeviceGone),
        &FenceError::DeviceGone(DeviceGone),
        &TestError::DeviceGone(DeviceGone),
        &InitError::DeviceGone(DeviceGone),
        &ResetError::DeviceGone(DeviceGone),
    ];
    for e in errors {
        let source = e.source().expect("wrapped");
        assert_eq!(source.downcast_ref::<DeviceGone>(), Some(&DeviceGone));
        assert_eq!(e.to_string(), "device gone", "the detail is the source's");
    }
    // Conversions keep it: a ring test that found the device gone fails init with it.
    let init = InitError::from(TestError::from(SubmitError::from(DeviceGone)));
    assert_eq!(init, InitError::DeviceGone(DeviceGone));
    assert_eq!(
        InitError::from(LoadError::DeviceGone { entry: Some(3) }),
        InitError::DeviceGone(DeviceGone)
    );
}

#[test]
fn a_failed_ring_test_is_the_source_of_the_init_error() {
    let test = TestError::Dma(DmaError::OutOfMemory);
    let init = InitError::RingTest(test);
    let source = init.source().expect("the ring test");
    assert_eq!(source.downcast_ref::<TestError>(), Some(&test));
}
