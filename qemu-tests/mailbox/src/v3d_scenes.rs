//! The frames the `v3d-*` render cases draw, described once: the test kernel renders them
//! through the V3D driver, the runner rasterises them itself and compares the stored frame
//! pixel by pixel. Plain data (no driver or model types), so both sides read the same scene.
//!
//! Coordinates are frame buffer pixels with row 0 at the bottom (broadcom-videocore-iv-3d §11:
//! "images are assumed to have a bottom-left origin"), on the 1/16-pixel grid of the s12.4
//! screen coordinates (§9 Figure 12), so no rounding separates the two sides. Colours are
//! RGBA8888 words as the tile buffer stores them: red in bits 7:0, green 15:8, blue 23:16,
//! alpha 31:24.

/// One vertex: position in pixels and the colour its varyings carry (red, green, blue in
/// 0.0..=1.0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vertex {
    /// X in pixels.
    pub x: f32,
    /// Y in pixels (row 0 at the bottom).
    pub y: f32,
    /// Red, green, blue varyings.
    pub rgb: [f32; 3],
}

/// How the scene's fragments are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shading {
    /// Every covered pixel gets this RGBA8888 word (the constant-colour fragment shader).
    Constant(u32),
    /// The three varyings interpolated across each triangle (§6), alpha 1.0 (the
    /// varying-colour fragment shader).
    Varyings,
}

/// A frame: size, clear colour and triangles drawn in order (later ones over earlier ones:
/// the driver draws with the depth test always passing and no Z writes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scene {
    /// Its name in the kernel's `v3d: frame` log line.
    pub name: &'static str,
    /// Pixels.
    pub width: u16,
    /// Pixels.
    pub height: u16,
    /// RGBA8888 clear colour.
    pub clear: u32,
    /// How fragments are coloured.
    pub shading: Shading,
    /// Triangles, three vertices each, in drawing order.
    pub triangles: &'static [[Vertex; 3]],
}

const fn v(x: f32, y: f32, rgb: [f32; 3]) -> Vertex {
    Vertex { x, y, rgb }
}

const WHITE: [f32; 3] = [1.0, 1.0, 1.0];
const RED: [f32; 3] = [1.0, 0.0, 0.0];
const GREEN: [f32; 3] = [0.0, 1.0, 0.0];
const BLUE: [f32; 3] = [0.0, 0.0, 1.0];

/// `v3d-triangle`: one orange triangle across all four 64x64 tiles of a 128x96 frame, on
/// opaque dark blue.
pub const TRIANGLE: Scene = Scene {
    name: "triangle",
    width: 128,
    height: 96,
    clear: 0xFF40_1010,
    shading: Shading::Constant(0xFF00_80FF),
    triangles: &[[v(10.0, 8.0, WHITE), v(120.5, 30.25, WHITE), v(40.0, 90.0, WHITE)]],
};

/// `v3d-scene`: four overlapping triangles with interpolated colours on a 160x120 frame (3x2
/// tiles): counter-clockwise and clockwise ones (both facings are drawn), a shared edge
/// between the first two (the fill rule decides its pixels), and a later triangle over the
/// earlier ones.
pub const SCENE: Scene = Scene {
    name: "scene",
    width: 160,
    height: 120,
    clear: 0xFF20_2020,
    shading: Shading::Varyings,
    triangles: &[
        [v(8.0, 8.0, RED), v(88.0, 8.0, GREEN), v(8.0, 88.0, BLUE)],
        // Clockwise; shares the edge (88, 8)-(8, 88) with the first.
        [v(88.0, 8.0, GREEN), v(8.0, 88.0, BLUE), v(88.0, 88.0, WHITE)],
        [v(60.0, 30.5, [1.0, 1.0, 0.0]), v(152.0, 50.0, [0.0, 1.0, 1.0]), v(100.0, 114.0, RED)],
        [v(20.25, 100.0, GREEN), v(70.0, 60.0, [1.0, 0.0, 1.0]), v(130.75, 110.5, BLUE)],
    ],
};

/// Most triangles a scene has (the kernel converts them into a fixed array, without
/// allocating).
pub const MAX_TRIANGLES: usize = 8;

/// Every scene, for the runner's lookup by name.
pub const SCENES: &[Scene] = &[TRIANGLE, SCENE];

/// The scene called `name`.
pub fn by_name(name: &str) -> Option<&'static Scene> {
    SCENES.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenes_are_named_once_and_their_vertices_sit_on_the_subpixel_grid_inside_the_frame() {
        for (i, s) in SCENES.iter().enumerate() {
            assert!(SCENES[i + 1..].iter().all(|o| o.name != s.name), "{} twice", s.name);
            assert_eq!(by_name(s.name), Some(s));
            assert!(!s.triangles.is_empty() && s.triangles.len() <= MAX_TRIANGLES, "{}", s.name);
            for v in s.triangles.iter().flatten() {
                // Exactly representable in s12.4: the driver's rounding changes nothing.
                assert_eq!((v.x * 16.0).fract(), 0.0, "{}: x {}", s.name, v.x);
                assert_eq!((v.y * 16.0).fract(), 0.0, "{}: y {}", s.name, v.y);
                assert!((0.0..=f32::from(s.width)).contains(&v.x), "{}", s.name);
                assert!((0.0..=f32::from(s.height)).contains(&v.y), "{}", s.name);
                assert!(v.rgb.iter().all(|c| (0.0..=1.0).contains(c)), "{}", s.name);
            }
        }
        assert_eq!(by_name("nope"), None);
    }
}
