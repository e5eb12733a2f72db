//! A 32-bpp framebuffer from the firmware (property tags 0x48003-0x48009, 0x40001, 0x40008; see
//! the raspberrypi/firmware wiki "Mailbox property interface").
//!
//! All tags go in one message, so the firmware (and QEMU's `bcm2835_property`) applies the
//! geometry before it allocates. The firmware may adjust what it was asked for: size and depth
//! must come back as requested, while the pixel order and alpha mode it answers are honoured
//! when encoding colours. The returned bus address is masked with 0x3FFFFFFF for the ARM.

use baregpu_hal::RegisterIo;
use baregpu_hal::dma::{BusAddress, DmaError, DmaRegion};
use baregpu_hal::time::Clock;
use core::fmt;
use core::ptr::NonNull;

use crate::mailbox::{Mailbox, MailboxError, Message, bus_to_arm, tag};

/// Byte order of a 32-bit pixel in memory (tag 0x48006).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PixelOrder {
    /// 0: blue in byte 0, red in byte 2 (`0x00RRGGBB` as a little-endian word).
    Bgr,
    /// 1: red in byte 0, blue in byte 2 (`0x00BBGGRR`).
    Rgb,
}

/// Meaning of byte 3 of a pixel (tag 0x48007).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlphaMode {
    /// 0: alpha used, 0 = opaque.
    Enabled,
    /// 1: alpha used, 0 = transparent.
    Reversed,
    /// 2: alpha ignored.
    Ignored,
}

/// A colour, 8 bits per channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
}

impl Rgb {
    /// A colour from its channels.
    pub const fn new(r: u8, g: u8, b: u8) -> Self {
        Rgb { r, g, b }
    }
}

/// What to ask the firmware for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FramebufferRequest {
    /// Visible and buffer width in pixels.
    pub width: u32,
    /// Visible and buffer height in pixels.
    pub height: u32,
    /// Preferred pixel order.
    pub pixel_order: PixelOrder,
    /// Alignment of the buffer's bus address (the allocate tag's request).
    pub align: u32,
}

/// Why no usable framebuffer was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FramebufferError {
    /// The property call or one of its tags failed.
    Mailbox(MailboxError),
    /// The firmware answered a different geometry or depth than requested.
    Mismatch {
        /// Which value.
        what: &'static str,
        /// Requested.
        requested: u32,
        /// Answered.
        got: u32,
    },
    /// A pixel order or alpha mode outside the documented values.
    Unknown {
        /// Which value.
        what: &'static str,
        /// Answered.
        got: u32,
    },
    /// The allocate tag returned a null buffer (the firmware could not allocate).
    NoBuffer,
    /// Pitch or size too small for the geometry.
    TooSmall {
        /// Which value.
        what: &'static str,
        /// Answered.
        got: u32,
        /// Needed at least.
        needed: u64,
    },
}

impl From<MailboxError> for FramebufferError {
    fn from(e: MailboxError) -> Self {
        FramebufferError::Mailbox(e)
    }
}

impl fmt::Display for FramebufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FramebufferError::Mailbox(e) => write!(f, "{e}"),
            FramebufferError::Mismatch { what, requested, got } => {
                write!(f, "framebuffer {what} {got}, requested {requested}")
            }
            FramebufferError::Unknown { what, got } => write!(f, "unknown {what} {got}"),
            FramebufferError::NoBuffer => write!(f, "firmware allocated no framebuffer"),
            FramebufferError::TooSmall { what, got, needed } => {
                write!(f, "framebuffer {what} {got} < {needed}")
            }
        }
    }
}

/// Bits per pixel this module draws.
pub const DEPTH: u32 = 32;

/// An allocated 32-bpp framebuffer.
#[derive(Debug)]
pub struct Framebuffer {
    memory: DmaRegion,
    width: u32,
    height: u32,
    pitch: u32,
    pixel_order: PixelOrder,
    alpha: AlphaMode,
}

fn expect(what: &'static str, requested: u32, got: u32) -> Result<(), FramebufferError> {
    if requested == got { Ok(()) } else { Err(FramebufferError::Mismatch { what, requested, got }) }
}

impl Framebuffer {
    /// Ask the firmware for a framebuffer (one property message, every tag checked).
    pub fn allocate<IO: RegisterIo, C: Clock>(
        mailbox: &mut Mailbox<IO, C>,
        request: &FramebufferRequest,
    ) -> Result<Framebuffer, FramebufferError> {
        let (w, h) = (request.width, request.height);
        let order = match request.pixel_order {
            PixelOrder::Bgr => 0,
            PixelOrder::Rgb => 1,
        };
        let mut msg = Message::new();
        let physical = msg.push(tag::SET_PHYSICAL_SIZE, &[w, h], 2)?;
        let virtual_size = msg.push(tag::SET_VIRTUAL_SIZE, &[w, h], 2)?;
        let offset = msg.push(tag::SET_VIRTUAL_OFFSET, &[0, 0], 2)?;
        let depth = msg.push(tag::SET_DEPTH, &[DEPTH], 1)?;
        let pixel_order = msg.push(tag::SET_PIXEL_ORDER, &[order], 1)?;
        let alpha = msg.push(tag::SET_ALPHA_MODE, &[2], 1)?;
        let allocate = msg.push(tag::ALLOCATE_BUFFER, &[request.align, 0], 2)?;
        let pitch = msg.push(tag::GET_PITCH, &[], 1)?;
        mailbox.call(&mut msg)?;

        let v = msg.value(physical)?;
        expect("physical width", w, v[0])?;
        expect("physical height", h, v[1])?;
        let v = msg.value(virtual_size)?;
        expect("virtual width", w, v[0])?;
        expect("virtual height", h, v[1])?;
        let v = msg.value(offset)?;
        expect("virtual x offset", 0, v[0])?;
        expect("virtual y offset", 0, v[1])?;
        expect("depth", DEPTH, msg.value(depth)?[0])?;
        let pixel_order = match msg.value(pixel_order)?[0] {
            0 => PixelOrder::Bgr,
            1 => PixelOrder::Rgb,
            got => return Err(FramebufferError::Unknown { what: "pixel order", got }),
        };
        let alpha = match msg.value(alpha)?[0] {
            0 => AlphaMode::Enabled,
            1 => AlphaMode::Reversed,
            2 => AlphaMode::Ignored,
            got => return Err(FramebufferError::Unknown { what: "alpha mode", got }),
        };
        let v = msg.value(allocate)?;
        let (bus, size) = (v[0], v[1]);
        let pitch = msg.value(pitch)?[0];
        if pitch < w * (DEPTH / 8) {
            return Err(FramebufferError::TooSmall {
                what: "pitch",
                got: pitch,
                needed: u64::from(w * (DEPTH / 8)),
            });
        }
        let needed = u64::from(pitch) * u64::from(h);
        if u64::from(size) < needed {
            return Err(FramebufferError::TooSmall { what: "size", got: size, needed });
        }
        let cpu = NonNull::new(core::ptr::with_exposed_provenance_mut::<u8>(bus_to_arm(bus)))
            .ok_or(FramebufferError::NoBuffer)?;
        // SAFETY: the firmware handed this buffer to the ARM (bus address masked to ARM physical,
        // inside the VideoCore's share of RAM, which this image never touches otherwise); it is
        // `size` bytes, 4-byte aligned (pitch and base are), and with the MMU and data cache off
        // (boot.rs) the scanout sees every CPU write.
        let memory =
            unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(u64::from(bus)), size as usize) };
        Ok(Framebuffer { memory, width: w, height: h, pitch, pixel_order, alpha })
    }

    /// Width in pixels.
    pub const fn width(&self) -> u32 {
        self.width
    }
    /// Height in pixels.
    pub const fn height(&self) -> u32 {
        self.height
    }
    /// Bytes per line.
    pub const fn pitch(&self) -> u32 {
        self.pitch
    }
    /// Pixel order the firmware answered.
    pub const fn pixel_order(&self) -> PixelOrder {
        self.pixel_order
    }
    /// Alpha mode the firmware answered.
    pub const fn alpha_mode(&self) -> AlphaMode {
        self.alpha
    }
    /// Bus address as the firmware returned it.
    pub const fn bus_address(&self) -> BusAddress {
        self.memory.bus_address()
    }
    /// ARM physical address (bus address & 0x3FFFFFFF).
    pub fn arm_address(&self) -> usize {
        self.memory.cpu_ptr().as_ptr().addr()
    }
    /// Size in bytes as allocated.
    pub const fn size(&self) -> usize {
        self.memory.size()
    }

    /// The 32-bit word for `c` in this buffer's pixel order, opaque in its alpha mode.
    pub const fn encode(&self, c: Rgb) -> u32 {
        encode(c, self.pixel_order, self.alpha)
    }

    /// Write one pixel; outside the buffer is an error.
    pub fn put(&self, x: u32, y: u32, c: Rgb) -> Result<(), DmaError> {
        if x >= self.width || y >= self.height {
            return Err(DmaError::OutOfBounds {
                offset: y as usize * self.pitch as usize + x as usize * 4,
                len: 4,
                size: self.memory.size(),
            });
        }
        let offset = y as usize * self.pitch as usize + x as usize * 4;
        self.memory.write_u32(offset, self.encode(c))
    }

    /// Fill every pixel from `color(x, y)`.
    pub fn fill_with(&self, color: impl Fn(u32, u32) -> Rgb) -> Result<(), DmaError> {
        for y in 0..self.height {
            for x in 0..self.width {
                self.put(x, y, color(x, y))?;
            }
        }
        Ok(())
    }
}

/// Pixel word for `c` (byte 3 = opaque for `alpha`).
pub const fn encode(c: Rgb, order: PixelOrder, alpha: AlphaMode) -> u32 {
    let a: u32 = match alpha {
        AlphaMode::Reversed => 0xFF,
        AlphaMode::Enabled | AlphaMode::Ignored => 0,
    };
    let (lo, hi) = match order {
        PixelOrder::Rgb => (c.r, c.b),
        PixelOrder::Bgr => (c.b, c.r),
    };
    lo as u32 | (c.g as u32) << 8 | (hi as u32) << 16 | a << 24
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_follows_pixel_order_and_alpha() {
        let yellow = Rgb::new(0xFF, 0xFF, 0);
        assert_eq!(encode(yellow, PixelOrder::Rgb, AlphaMode::Ignored), 0x0000_FFFF);
        assert_eq!(encode(yellow, PixelOrder::Bgr, AlphaMode::Ignored), 0x00FF_FF00);
        assert_eq!(encode(Rgb::new(1, 2, 3), PixelOrder::Bgr, AlphaMode::Reversed), 0xFF01_0203);
    }
}
