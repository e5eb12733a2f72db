//! Pictures of the V3D render cases: the kernel logs where a frame is (`v3d: frame scene=…
//! address=… width=… height=… format=rgba8888`); the runner reads those bytes from the guest
//! RAM file (q35's guest-physical layout, `gpu_device_model::SharedFileMemory`), saves
//! `frame.png` and compares it pixel by pixel with its own rasterisation of the same scene
//! (`gpu_mailbox::v3d_scenes`).
//!
//! The reference rasteriser is written here from the document and the model's README, not
//! taken from the model: edge functions on the 1/16-pixel grid of §9 Figure 12, pixel centres
//! at (x + 0.5, y + 0.5), the top-left fill rule, row 0 at the bottom of the frame (§11), both
//! windings drawn, later triangles over earlier ones. Varyings are interpolated linearly
//! (§6's `(A dx + B dy) W + C` with W = 1 for every vertex), then converted as the QPU's
//! float-to-colour pack does (`sat(round(f * 255))`, §3 "Pack/Unpack Bits").

use crate::raspi::Picture;
use gpu_device_model::{GuestMemory, RamLayout, SharedFileMemory};
use gpu_mailbox::v3d_scenes::{self, Scene, Shading, Vertex};
use std::path::Path;

/// A frame the kernel logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameLine {
    /// `gpu_mailbox::v3d_scenes` name.
    pub scene: String,
    /// Guest-physical address of pixel (0, 0).
    pub address: u64,
    /// Pixels.
    pub width: usize,
    /// Pixels.
    pub height: usize,
}

/// The frame in a decoded log line, if it is one.
pub fn parse_line(line: &str) -> Option<FrameLine> {
    let (_, fields) = line.split_once("v3d: frame ")?;
    let (mut scene, mut address, mut width, mut height, mut format) =
        (None, None, None, None, None);
    for kv in fields.split_whitespace() {
        match kv.split_once('=')? {
            ("scene", v) => scene = Some(v.to_string()),
            ("address", v) => address = u64::from_str_radix(v.strip_prefix("0x")?, 16).ok(),
            ("width", v) => width = v.parse().ok(),
            ("height", v) => height = v.parse().ok(),
            ("format", v) => format = Some(v),
            _ => {}
        }
    }
    (format? == "rgba8888").then_some(())?;
    Some(FrameLine { scene: scene?, address: address?, width: width?, height: height? })
}

/// RGBA8888 words of a frame, row 0 (the bottom) first.
pub struct Frame {
    /// Pixels.
    pub width: usize,
    /// Pixels.
    pub height: usize,
    /// One word per pixel: red in bits 7:0 … alpha in 31:24.
    pub words: Vec<u32>,
}

impl Frame {
    /// The word at (x, y), row 0 at the bottom.
    pub fn at(&self, x: usize, y: usize) -> u32 {
        self.words[y * self.width + x]
    }

    /// As a picture, top row first (PNG order), alpha dropped.
    pub fn picture(&self) -> Picture {
        let mut rgb = Vec::with_capacity(self.width * self.height * 3);
        for y in (0..self.height).rev() {
            for x in 0..self.width {
                rgb.extend_from_slice(&self.at(x, y).to_le_bytes()[..3]);
            }
        }
        Picture { width: self.width, height: self.height, rgb }
    }
}

/// Read `line`'s frame from the guest RAM file, laid out as `layout` (the machine's).
pub fn read(ram: &Path, layout: RamLayout, line: &FrameLine) -> Result<Frame, String> {
    let memory = SharedFileMemory::open(ram, layout)
        .map_err(|e| format!("guest RAM {}: {e}", ram.display()))?;
    let mut bytes = vec![0u8; line.width * line.height * 4];
    memory
        .read(line.address, &mut bytes)
        .map_err(|e| format!("frame at {:#x} not in guest RAM: {e:?}", line.address))?;
    let words = bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    Ok(Frame { width: line.width, height: line.height, words: words.collect() })
}

/// 1/16-pixel steps (§9 Figure 12's s12.4).
const SUB: i64 = 16;

fn fixed(v: &Vertex) -> (i64, i64) {
    ((f64::from(v.x) * SUB as f64).round() as i64, (f64::from(v.y) * SUB as f64).round() as i64)
}

/// Twice the signed area of a, b, p: positive when p is left of a→b with y up.
fn edge(a: (i64, i64), b: (i64, i64), p: (i64, i64)) -> i64 {
    (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0)
}

/// Which of a counter-clockwise triangle's edges own the pixels exactly on them: a top edge
/// (horizontal, going left, the triangle below it) or a left edge (going down).
fn owns_boundary(a: (i64, i64), b: (i64, i64)) -> bool {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    dy < 0 || (dy == 0 && dx < 0)
}

/// `scene` rasterised: the clear colour, then each triangle in order.
pub fn reference(scene: &Scene) -> Frame {
    let (w, h) = (usize::from(scene.width), usize::from(scene.height));
    let mut words = vec![scene.clear; w * h];
    for t in scene.triangles {
        let mut v = [t[0], t[1], t[2]];
        let mut p = v.map(|v| fixed(&v));
        let mut area = edge(p[0], p[1], p[2]);
        if area == 0 {
            continue;
        }
        if area < 0 {
            v.swap(1, 2);
            p.swap(1, 2);
            area = -area;
        }
        for y in 0..h {
            for x in 0..w {
                let c = (x as i64 * SUB + SUB / 2, y as i64 * SUB + SUB / 2);
                // Barycentric weight of vertex i: the edge opposite it.
                let e = [0, 1, 2].map(|i| {
                    let (a, b) = (p[(i + 1) % 3], p[(i + 2) % 3]);
                    (edge(a, b, c), owns_boundary(a, b))
                });
                if !e.iter().all(|&(e, owns)| e > 0 || (e == 0 && owns)) {
                    continue;
                }
                words[y * w + x] = match scene.shading {
                    Shading::Constant(rgba) => rgba,
                    Shading::Varyings => {
                        let weight = e.map(|(e, _)| e as f64 / area as f64);
                        let byte = |ch: usize| {
                            let f: f64 = (0..3).map(|i| weight[i] * f64::from(v[i].rgb[ch])).sum();
                            (f * 255.0).round().clamp(0.0, 255.0) as u32
                        };
                        byte(0) | byte(1) << 8 | byte(2) << 16 | 0xFF << 24
                    }
                };
            }
        }
    }
    Frame { width: w, height: h, words }
}

/// Pixels of `got` that differ from `want` (exactly: the scenes' colours stay clear of the
/// rounding boundaries where the model's f32 arithmetic and this f64 one could part), and the
/// first of them (x, y, got, want).
pub fn compare(got: &Frame, want: &Frame) -> (usize, Option<(usize, usize, u32, u32)>) {
    let mut count = 0;
    let mut first = None;
    for y in 0..want.height {
        for x in 0..want.width {
            let (g, w) = (got.at(x, y), want.at(x, y));
            if g != w {
                count += 1;
                first.get_or_insert((x, y, g, w));
            }
        }
    }
    (count, first)
}

/// Every frame `log` names: read, saved as `frame.png` (`frame-<scene>.png` from the second
/// on), compared with the reference. `Err` names the first frame that differs (the PNG and a
/// `reference-<scene>.png` kept) or could not be read. Returns the scenes checked, in order.
pub fn check(
    log: &[String],
    ram: &Path,
    layout: RamLayout,
    dir: &Path,
) -> Result<Vec<String>, String> {
    let lines: Vec<FrameLine> = log.iter().filter_map(|l| parse_line(l)).collect();
    for (i, line) in lines.iter().enumerate() {
        let scene = v3d_scenes::by_name(&line.scene)
            .ok_or_else(|| format!("the kernel logged a frame of unknown scene {}", line.scene))?;
        if (line.width, line.height) != (usize::from(scene.width), usize::from(scene.height)) {
            return Err(format!(
                "frame {}: {}x{}, the scene is {}x{}",
                line.scene, line.width, line.height, scene.width, scene.height
            ));
        }
        let frame = read(ram, layout, line)?;
        let name =
            if i == 0 { "frame.png".to_string() } else { format!("frame-{}.png", line.scene) };
        let png = dir.join(&name);
        frame.picture().save_png(&png)?;
        let want = reference(scene);
        let (differ, first) = compare(&frame, &want);
        if let Some((x, y, got, expected)) = first {
            let reference_png = dir.join(format!("reference-{}.png", line.scene));
            want.picture().save_png(&reference_png)?;
            return Err(format!(
                "frame {}: {differ} of {} pixels differ from the reference (first at ({x}, {y}): \
                 {got:#010x}, want {expected:#010x}); see {} and {}",
                line.scene,
                want.width * want.height,
                png.display(),
                reference_png.display()
            ));
        }
    }
    Ok(lines.into_iter().map(|l| l.scene).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLEAR: u32 = 0xFF00_0000;

    fn scene(triangles: &'static [[Vertex; 3]], shading: Shading) -> Scene {
        Scene { name: "t", width: 8, height: 8, clear: CLEAR, shading, triangles }
    }

    const fn v(x: f32, y: f32) -> Vertex {
        Vertex { x, y, rgb: [1.0, 0.0, 0.0] }
    }

    #[test]
    fn frame_lines_are_parsed_from_the_decoded_log() {
        let line =
            "INFO  v3d: frame scene=scene address=0xee14700 width=160 height=120 format=rgba8888";
        assert_eq!(
            parse_line(line),
            Some(FrameLine { scene: "scene".into(), address: 0xee14700, width: 160, height: 120 })
        );
        assert_eq!(parse_line(&line.replace("rgba8888", "bgr565")), None, "only RGBA8888");
        assert_eq!(parse_line("INFO  v3d: frames rendered 3"), None);
    }

    #[test]
    fn frames_are_read_at_the_machines_guest_physical_addresses() {
        let path = std::env::temp_dir().join(format!("runner-frame-{}", std::process::id()));
        let mut ram = vec![0u8; 1 << 16];
        ram[0x1000..0x1008].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        std::fs::write(&path, &ram).unwrap();
        let at = |address| FrameLine { scene: "t".into(), address, width: 2, height: 1 };
        let want = vec![0x0403_0201, 0x0807_0605];
        let q35 = read(&path, RamLayout::q35(1 << 16), &at(0x1000)).unwrap();
        assert_eq!(q35.words, want);
        // Arm virt: file offset 0 is guest-physical 0x4000_0000.
        let virt = read(&path, RamLayout::virt(1 << 16), &at(0x4000_1000)).unwrap();
        assert_eq!(virt.words, want);
        assert!(read(&path, RamLayout::virt(1 << 16), &at(0x1000)).is_err(), "below virt's RAM");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn shared_edges_are_drawn_once_and_both_windings_drawn() {
        // A square of two triangles (one clockwise) sharing a diagonal: every pixel of the
        // 8x8 frame is covered exactly once (counted through a colour per triangle).
        static SQUARE_A: [[Vertex; 3]; 1] = [[v(0.0, 0.0), v(8.0, 0.0), v(0.0, 8.0)]];
        static SQUARE_B: [[Vertex; 3]; 1] = [[v(8.0, 0.0), v(0.0, 8.0), v(8.0, 8.0)]];
        let a = reference(&scene(&SQUARE_A, Shading::Constant(1)));
        let b = reference(&scene(&SQUARE_B, Shading::Constant(2)));
        for (wa, wb) in a.words.iter().zip(&b.words) {
            assert!((*wa == 1) ^ (*wb == 2), "covered once: {wa:#x} {wb:#x}");
        }
        // The pixel centres on the diagonal (x + y + 1 = 8) belong to the second triangle: in
        // its counter-clockwise order the diagonal runs from (0, 8) down to (8, 0), a left
        // edge; in the first's it runs upwards, a right edge.
        assert_eq!(a.at(3, 4), CLEAR);
        assert_eq!(b.at(3, 4), 2);
    }

    #[test]
    fn row_zero_is_the_bottom_of_the_png() {
        static LOW: [[Vertex; 3]; 1] = [[v(0.0, 0.0), v(8.0, 0.0), v(0.0, 2.0)]];
        let f = reference(&scene(&LOW, Shading::Constant(0xFF00_00FF)));
        let pic = f.picture();
        assert_eq!(pic.pixel(0, 7), Some([0xFF, 0, 0]), "drawn at the bottom of the picture");
        assert_eq!(pic.pixel(0, 0), Some([0, 0, 0]));
    }

    #[test]
    fn varyings_interpolate_between_the_vertices() {
        static RAMP: [[Vertex; 3]; 1] = [[
            Vertex { x: 0.0, y: 0.0, rgb: [0.0, 0.0, 0.0] },
            Vertex { x: 8.0, y: 0.0, rgb: [1.0, 0.0, 0.0] },
            Vertex { x: 0.0, y: 8.0, rgb: [0.0, 0.0, 1.0] },
        ]];
        let f = reference(&scene(&RAMP, Shading::Varyings));
        // Pixel (3, 0)'s centre (3.5, 0.5): red 3.5/8, blue 0.5/8.
        let want =
            (3.5f64 / 8.0 * 255.0).round() as u32 | ((0.5f64 / 8.0 * 255.0).round() as u32) << 16;
        assert_eq!(f.at(3, 0), want | 0xFF00_0000);
    }

    #[test]
    fn a_wrong_pixel_is_counted_and_found() {
        static ONE: [[Vertex; 3]; 1] = [[v(0.0, 0.0), v(8.0, 0.0), v(0.0, 8.0)]];
        let want = reference(&scene(&ONE, Shading::Constant(0xFF10_2030)));
        let mut got = Frame { width: 8, height: 8, words: want.words.clone() };
        assert_eq!(compare(&got, &want), (0, None));
        got.words[9] = 0xFF10_2031;
        got.words[16] = CLEAR;
        assert_eq!(compare(&got, &want), (2, Some((1, 1, 0xFF10_2031, 0xFF10_2030))));
    }

    #[test]
    fn the_shared_scenes_fit_their_frames_and_draw_something() {
        for s in v3d_scenes::SCENES {
            let f = reference(s);
            let drawn = f.words.iter().filter(|&&w| w != s.clear).count();
            assert!(drawn > f.words.len() / 8, "{}: {drawn} pixels drawn", s.name);
        }
    }
}
