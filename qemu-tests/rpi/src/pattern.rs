//! The test pattern, as one function of the pixel position. The harness runner checks the
//! screendump against the description below (qemu-tests/runner/src/raspi.rs).
//!
//! - Rows `0 .. 3h/4`: eight vertical bars of width `w/8`: white, yellow, cyan, green, magenta,
//!   red, blue, black (full intensity).
//! - Rows `3h/4 .. 7h/8`: a grey ramp, `v = x * 255 / (w - 1)`.
//! - Rows `7h/8 .. h`: a checkerboard of [`CHECKER`]-pixel squares, white where
//!   `(x / CHECKER + (y - 7h/8) / CHECKER)` is even, black elsewhere.

use crate::framebuffer::Rgb;

/// The bar colours, left to right.
pub const BARS: [Rgb; 8] = [
    Rgb::new(0xFF, 0xFF, 0xFF),
    Rgb::new(0xFF, 0xFF, 0x00),
    Rgb::new(0x00, 0xFF, 0xFF),
    Rgb::new(0x00, 0xFF, 0x00),
    Rgb::new(0xFF, 0x00, 0xFF),
    Rgb::new(0xFF, 0x00, 0x00),
    Rgb::new(0x00, 0x00, 0xFF),
    Rgb::new(0x00, 0x00, 0x00),
];

/// Side of a checkerboard square in pixels.
pub const CHECKER: u32 = 20;

/// The colour of pixel (`x`, `y`) in a `w` x `h` pattern (`w`, `h` >= 8).
pub fn color_at(x: u32, y: u32, w: u32, h: u32) -> Rgb {
    let bars_end = h * 3 / 4;
    let ramp_end = h * 7 / 8;
    if y < bars_end {
        BARS[((x * 8 / w) as usize).min(7)]
    } else if y < ramp_end {
        let v = (x * 255 / (w - 1)).min(255) as u8;
        Rgb::new(v, v, v)
    } else if (x / CHECKER + (y - ramp_end) / CHECKER).is_multiple_of(2) {
        Rgb::new(0xFF, 0xFF, 0xFF)
    } else {
        Rgb::new(0, 0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_regions_for_640x480() {
        assert_eq!(color_at(40, 10, 640, 480), BARS[0]);
        assert_eq!(color_at(600, 359, 640, 480), BARS[7]);
        assert_eq!(color_at(0, 360, 640, 480), Rgb::new(0, 0, 0));
        assert_eq!(color_at(639, 419, 640, 480), Rgb::new(255, 255, 255));
        assert_eq!(color_at(320, 400, 640, 480), Rgb::new(127, 127, 127));
        assert_eq!(color_at(10, 430, 640, 480), Rgb::new(255, 255, 255));
        assert_eq!(color_at(30, 430, 640, 480), Rgb::new(0, 0, 0));
        assert_eq!(color_at(30, 450, 640, 480), Rgb::new(255, 255, 255));
    }
}
