//! Triangle setup: edge functions in the vertices' own 12.4 fixed point (exact), the fill rule,
//! facing, and the interpolation the front-end pipe does (§6 "Varyings Interpolation": Z, W
//! and the varyings' partial results).
//!
//! Orientation: pixel row 0 is the bottom of the image (§11: "images are assumed to have a
//! bottom-left origin"), so y grows upwards and a positive signed area is counter-clockwise.
//! Fill rule (the document gives none): a pixel belongs to a triangle when its centre
//! (x + 0.5, y + 0.5) is strictly inside, or exactly on a top edge (horizontal, the triangle
//! below it) or a left edge: OpenGL's top-left convention, so two triangles sharing an edge
//! never both draw, nor both miss, a pixel on it.

use super::state::Vertex;

/// Subpixel steps per pixel (12.4 fixed point, §9 Figure 12).
pub const SUBPIXELS: i64 = 16;

/// Which primitives are drawn (Configuration Bits, §9 Table 38 id 96, bits 0-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facing {
    /// Enable Forward Facing Primitive.
    pub front: bool,
    /// Enable Reverse Facing Primitive.
    pub back: bool,
    /// Clockwise Primitives: clockwise triangles face forward.
    pub clockwise: bool,
}

/// A set-up triangle: vertices counter-clockwise, edge functions ready.
#[derive(Debug, Clone)]
pub struct Triangle {
    v: [Vertex; 3],
    /// Twice the area in subpixels squared (positive).
    area: i64,
    /// The triangle faces backward (REV_FLAG, §6 Table 29).
    pub reverse: bool,
    /// Which of `v` was the application's last vertex (flat shading).
    provoking: usize,
}

/// The edge function of a→b at p: positive when p is left of a→b (inside a CCW triangle).
fn edge(a: (i64, i64), b: (i64, i64), p: (i64, i64)) -> i64 {
    (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0)
}

/// Whether a→b of a counter-clockwise triangle is a top edge (horizontal, running right to
/// left with y up) or a left edge (running downwards).
fn top_left(a: (i64, i64), b: (i64, i64)) -> bool {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    (dy == 0 && dx < 0) || dy < 0
}

impl Triangle {
    /// Set up `v` (application order); `None` when it has no area or its facing is disabled.
    pub fn new(mut v: [Vertex; 3], facing: Facing) -> Option<Triangle> {
        let p = |v: &Vertex| (i64::from(v.x), i64::from(v.y));
        let mut area = edge(p(&v[0]), p(&v[1]), p(&v[2]));
        if area == 0 {
            return None;
        }
        let ccw = area > 0;
        let mut provoking = 2;
        if !ccw {
            v.swap(1, 2);
            area = -area;
            provoking = 1;
        }
        let front = ccw != facing.clockwise;
        if (front && !facing.front) || (!front && !facing.back) {
            return None;
        }
        Some(Triangle { v, area, reverse: !front, provoking })
    }

    fn p(&self, i: usize) -> (i64, i64) {
        (i64::from(self.v[i].x), i64::from(self.v[i].y))
    }

    /// Whether pixel (x, y)'s centre is covered, with the fill rule.
    pub fn covers(&self, x: i64, y: i64) -> bool {
        let c = (x * SUBPIXELS + SUBPIXELS / 2, y * SUBPIXELS + SUBPIXELS / 2);
        (0..3).all(|i| {
            let (a, b) = (self.p((i + 1) % 3), self.p((i + 2) % 3));
            let e = edge(a, b, c);
            e > 0 || (e == 0 && top_left(a, b))
        })
    }

    /// The pixel rectangle the triangle can cover: `[x0, x1) x [y0, y1)`.
    pub fn bounds(&self) -> [i64; 4] {
        let xs = [self.p(0).0, self.p(1).0, self.p(2).0];
        let ys = [self.p(0).1, self.p(1).1, self.p(2).1];
        let lo = |v: [i64; 3]| v.into_iter().min().unwrap_or(0).div_euclid(SUBPIXELS);
        let hi = |v: [i64; 3]| v.into_iter().max().unwrap_or(0).div_euclid(SUBPIXELS) + 1;
        [lo(xs), lo(ys), hi(xs), hi(ys)]
    }

    /// Whether the triangle touches the pixel rectangle `[x0, x1) x [y0, y1)` at all
    /// (conservatively: the rectangle overlaps the bounds and no edge has it wholly outside).
    pub fn touches(&self, rect: [i64; 4]) -> bool {
        let b = self.bounds();
        if rect[0] >= b[2] || rect[2] <= b[0] || rect[1] >= b[3] || rect[3] <= b[1] {
            return false;
        }
        let corners = [
            (rect[0] * SUBPIXELS, rect[1] * SUBPIXELS),
            (rect[2] * SUBPIXELS, rect[1] * SUBPIXELS),
            (rect[0] * SUBPIXELS, rect[3] * SUBPIXELS),
            (rect[2] * SUBPIXELS, rect[3] * SUBPIXELS),
        ];
        (0..3).all(|i| {
            let (a, b) = (self.p((i + 1) % 3), self.p((i + 2) % 3));
            corners.iter().any(|&c| edge(a, b, c) >= 0)
        })
    }

    /// Gradients (per pixel in x and y) of a quantity with values `f` at the three vertices.
    fn gradient(&self, f: [f64; 3]) -> (f64, f64) {
        let s = SUBPIXELS as f64;
        let (x0, y0) = (self.v[0].x as f64 / s, self.v[0].y as f64 / s);
        let (x1, y1) = (self.v[1].x as f64 / s, self.v[1].y as f64 / s);
        let (x2, y2) = (self.v[2].x as f64 / s, self.v[2].y as f64 / s);
        let area = self.area as f64 / (s * s);
        let a = ((f[1] - f[0]) * (y2 - y0) - (f[2] - f[0]) * (y1 - y0)) / area;
        let b = ((f[2] - f[0]) * (x1 - x0) - (f[1] - f[0]) * (x2 - x0)) / area;
        (a, b)
    }

    /// Offset of pixel (x, y)'s centre from vertex 0, in pixels.
    fn delta(&self, x: i64, y: i64) -> (f64, f64) {
        let s = SUBPIXELS as f64;
        ((x as f64 + 0.5) - self.v[0].x as f64 / s, (y as f64 + 0.5) - self.v[0].y as f64 / s)
    }

    /// The interpolation set-up of this triangle (§6).
    pub fn interpolation(&self, flat: u32) -> Interpolation {
        let q = [self.v[0].inv_w, self.v[1].inv_w, self.v[2].inv_w].map(f64::from);
        let z = [self.v[0].z, self.v[1].z, self.v[2].z].map(f64::from);
        let count = self.v[0].varyings.len();
        let varyings = (0..count)
            .map(|i| {
                let v0 = f64::from(self.v[0].varyings[i]);
                if flat & (1 << i) != 0 {
                    return Coefficients { a: 0.0, b: 0.0, c: self.v[self.provoking].varyings[i] };
                }
                // v = W * (v/W interpolated): with g the gradient of v*q and h that of q,
                // v = W * ((g - v0 h) . d) + v0, so A = gx - v0 hx, B = gy - v0 hy, C = v0.
                let vq = [0, 1, 2].map(|k| f64::from(self.v[k].varyings[i]) * q[k]);
                let g = self.gradient(vq);
                let h = self.gradient(q);
                Coefficients { a: g.0 - v0 * h.0, b: g.1 - v0 * h.1, c: v0 as f32 }
            })
            .collect();
        Interpolation { q0: q[0], q: self.gradient(q), z0: z[0], z: self.gradient(z), varyings }
    }

    /// Offset helper for [`Interpolation`].
    pub fn offset(&self, x: i64, y: i64) -> (f64, f64) {
        self.delta(x, y)
    }
}

/// A varying's coefficients: `partial = A*(x-x0) + B*(y-y0)`, value `partial * W + C` (§6).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coefficients {
    /// A (per pixel in x).
    pub a: f64,
    /// B (per pixel in y).
    pub b: f64,
    /// C.
    pub c: f32,
}

/// What the front-end pipe interpolates for one triangle.
#[derive(Debug, Clone)]
pub struct Interpolation {
    q0: f64,
    q: (f64, f64),
    z0: f64,
    z: (f64, f64),
    /// Per varying.
    pub varyings: Vec<Coefficients>,
}

/// Largest 24-bit Z (§6 Table 29: "Fixed-point Z, 24 bits").
pub const Z_MAX: u32 = 0xFF_FFFF;

impl Interpolation {
    /// W at offset `d` from vertex 0 (1 / the interpolated 1/Wc).
    pub fn w(&self, d: (f64, f64)) -> f32 {
        (1.0 / (self.q0 + self.q.0 * d.0 + self.q.1 * d.1)) as f32
    }

    /// 24-bit fixed-point Z at offset `d`.
    pub fn z(&self, d: (f64, f64)) -> u32 {
        let z = (self.z0 + self.z.0 * d.0 + self.z.1 * d.1).clamp(0.0, 1.0);
        (z * f64::from(Z_MAX)).round() as u32
    }

    /// Varying `i`'s partial result at offset `d`.
    pub fn partial(&self, i: usize, d: (f64, f64)) -> f32 {
        let c = self.varyings[i];
        (c.a * d.0 + c.b * d.1) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: i32, y: i32) -> Vertex {
        Vertex { x: x * 16, y: y * 16, z: 0.5, inv_w: 1.0, varyings: vec![] }
    }

    const BOTH: Facing = Facing { front: true, back: true, clockwise: false };

    #[test]
    fn two_triangles_sharing_an_edge_cover_each_pixel_of_a_square_once() {
        let a = Triangle::new([v(0, 0), v(8, 0), v(8, 8)], BOTH).unwrap();
        let b = Triangle::new([v(0, 0), v(8, 8), v(0, 8)], BOTH).unwrap();
        for y in 0..8 {
            for x in 0..8 {
                assert_eq!(a.covers(x, y) as u32 + b.covers(x, y) as u32, 1, "({x}, {y})");
            }
        }
    }

    #[test]
    fn facing_culls_and_flags_reverse() {
        let cw = [v(0, 0), v(0, 8), v(8, 0)];
        assert!(Triangle::new(cw.clone(), Facing { back: false, ..BOTH }).is_none());
        assert!(Triangle::new(cw.clone(), BOTH).unwrap().reverse);
        let front_cw = Facing { clockwise: true, ..BOTH };
        assert!(!Triangle::new(cw, front_cw).unwrap().reverse);
        assert!(Triangle::new([v(0, 0), v(1, 1), v(2, 2)], BOTH).is_none(), "no area");
    }
}
