//! The bundled sample ped (`assets/characters/ped.dff`, `assets/characters/ped.txd`): a
//! low-poly San Andreas style skinned ped and its texture dictionary, laid out the way SA ped
//! files are (`docs/formats/dff.md` §1.4, §7.1), written by the small writer of [`crate::rw`].
//!
//! * One Clump (RW 3.6.0.3, stamp 0x1803FFFF on every chunk): frame 0 the clump root (no name,
//!   empty extension), frame 1 `Normal` with the HAnim hierarchy of the 32 SA nodes, then one
//!   frame per bone with its name (as the built-in SA table spells it, leading spaces kept) and
//!   node ID. The frames are emitted depth-first with children in reverse order, so frame order
//!   differs from node order (as in real files, §2.3).
//! * Rest transforms are the built-in SA table's ([`Skeleton::gta_sa`]), except `Normal`, which
//!   has the real DFF bind rotation (−0.5, −0.5, −0.5, 0.5) (§6.3) instead of the clip-relative
//!   ≈90° about Z. In the Frame List's own pose the ped therefore stands along +Y.
//! * Atomic 0: the skinned body on `Normal` (flags 5, Right To Render (0x116, 1)), a tube or box
//!   per bone in skin space (`Normal`'s bind space: Z up, toes +X, left +Y), two materials
//!   (clothes, skin) on the `ped` atlas, Bin Mesh strips, an SA-layout Skin PLG whose joint
//!   rings blend two bones (three or four at the hips and the top of the chest).
//! * Atomic 1: a rigid cap on ` Head`, in that frame's space, textured `ped_cap` (alpha).
//! * The TXD: `ped` as DXT1 128×128 with its full mip chain, `ped_cap` as B8G8R8A8 with fully
//!   transparent vents.

use crate::rw::{self, Bytes, Image, TexFormat, TexSpec, id};
use glam::{Mat3, Mat4, Quat, Vec3};
use rigplay::skeleton::Skeleton;
use std::f32::consts::TAU;

/// The rotation of `Normal` in a real SA ped's Frame List, x y z w (§6.3).
pub const NORMAL_BIND: [f32; 4] = [-0.5, -0.5, -0.5, 0.5];

/// The body texture's name.
pub const BODY_TEXTURE: &str = "ped";
/// The cap texture's name.
pub const CAP_TEXTURE: &str = "ped_cap";
/// Width and height of the body atlas.
pub const ATLAS_SIZE: u32 = 128;

/// A part of the body atlas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// Top left quarter: a blue striped shirt.
    Shirt,
    /// Top right quarter: checked trousers.
    Trousers,
    /// Bottom left quarter: skin with darker bands.
    Skin,
    /// Bottom right, upper half: shoes.
    Shoes,
}

impl Region {
    /// The region's pixel rectangle in the atlas: x0, y0, x1, y1 (exclusive), y down.
    pub fn rect(self) -> [u32; 4] {
        match self {
            Region::Shirt => [0, 0, 64, 64],
            Region::Trousers => [64, 0, 128, 64],
            Region::Skin => [0, 64, 64, 128],
            Region::Shoes => [64, 64, 128, 96],
        }
    }

    /// The region's UV rectangle, inset by 3 texels: u0, v0, u1, v1 (v down, D3D).
    pub fn uv_rect(self) -> [f32; 4] {
        let [x0, y0, x1, y1] = self.rect();
        let s = ATLAS_SIZE as f32;
        [
            (x0 + 3) as f32 / s,
            (y0 + 3) as f32 / s,
            (x1 - 3) as f32 / s,
            (y1 - 3) as f32 / s,
        ]
    }

    /// The region's base colour (sRGB).
    pub fn colour(self) -> [u8; 3] {
        match self {
            Region::Shirt => [40, 90, 170],
            Region::Trousers => [50, 55, 75],
            Region::Skin => [225, 180, 150],
            Region::Shoes => [95, 55, 30],
        }
    }

    fn material(self) -> u16 {
        if self == Region::Skin { 1 } else { 0 }
    }
}

/// The body atlas: shirt (stripes across the limb, a dark line along it), trousers (checks),
/// skin (darker bands), shoes (lighter laces), hair (unused corner), so that motion and twist
/// show on the pixels.
pub fn body_atlas() -> Image {
    Image::from_fn(ATLAS_SIZE, ATLAS_SIZE, |x, y| {
        let shade = |c: [u8; 3], k: f32| -> [u8; 4] {
            let f = |v: u8| (f32::from(v) * k).round().clamp(0.0, 255.0) as u8;
            [f(c[0]), f(c[1]), f(c[2]), 255]
        };
        let inside = |r: Region| {
            let [x0, y0, x1, y1] = r.rect();
            x >= x0 && x < x1 && y >= y0 && y < y1
        };
        if inside(Region::Shirt) {
            if y % 8 >= 6 {
                [230, 230, 235, 255]
            } else if x % 16 < 2 {
                shade(Region::Shirt.colour(), 0.6)
            } else {
                shade(Region::Shirt.colour(), 1.0)
            }
        } else if inside(Region::Trousers) {
            shade(
                Region::Trousers.colour(),
                if (x / 8 + y / 8) % 2 == 0 { 1.0 } else { 1.35 },
            )
        } else if inside(Region::Skin) {
            shade(
                Region::Skin.colour(),
                if (y / 6) % 4 == 0 { 0.85 } else { 1.0 },
            )
        } else if inside(Region::Shoes) {
            if x % 12 < 2 {
                [200, 190, 170, 255]
            } else {
                shade(Region::Shoes.colour(), 1.0)
            }
        } else {
            [40, 30, 25, 255]
        }
    })
}

/// The cap texture, 64×64 RGBA: a red crown with a white band, and a row of vents that are
/// fully transparent (alpha 0) for alpha testing; everything else opaque.
pub fn cap_image() -> Image {
    Image::from_fn(64, 64, |x, y| {
        if (16..24).contains(&y) && x % 8 < 4 {
            [0, 0, 0, 0]
        } else if (36..44).contains(&y) {
            [240, 240, 240, 255]
        } else {
            [190, 30, 35, 255]
        }
    })
}

/// How finely the body is divided: rings per tube and sides of the round tubes (boxes keep 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detail {
    /// Rings of vertices along each tube (≥ 2).
    pub rings: usize,
    /// Sides of the round tubes (limbs, torso).
    pub sides: usize,
}

impl Detail {
    /// The bundled sample's: 3 rings, 8 sides.
    pub const SAMPLE: Detail = Detail { rings: 3, sides: 8 };
}

/// The SA bones in HAnim (node) order with their local rest transforms and skin-space
/// matrices.
struct Rig {
    skeleton: Skeleton,
    /// Local rotation matrices (right/up/at columns) and positions, as written to the frames.
    local: Vec<(Mat3, Vec3)>,
    /// `W(Normal)⁻¹ · W(bone)`: each bone's bind matrix in skin space (§6.2).
    skin: Vec<Mat4>,
}

impl Rig {
    fn new() -> Self {
        let skeleton = Skeleton::gta_sa();
        let local: Vec<(Mat3, Vec3)> = skeleton
            .bones
            .iter()
            .map(|b| {
                let q = if b.parent.is_none() {
                    Quat::from_array(NORMAL_BIND)
                } else {
                    b.rest.rotation
                };
                (Mat3::from_quat(q), b.rest.translation)
            })
            .collect();
        let mut world: Vec<Mat4> = Vec::with_capacity(local.len());
        for (b, &(r, p)) in skeleton.bones.iter().zip(&local) {
            let l = Mat4::from_cols(
                r.x_axis.extend(0.0),
                r.y_axis.extend(0.0),
                r.z_axis.extend(0.0),
                p.extend(1.0),
            );
            world.push(b.parent.map_or(l, |p| world[p] * l));
        }
        let to_skin = world[0].inverse();
        let skin = world.iter().map(|w| to_skin * *w).collect();
        Rig {
            skeleton,
            local,
            skin,
        }
    }

    /// The node index of an SA bone id.
    fn node(&self, id: i32) -> usize {
        self.skeleton
            .bones
            .iter()
            .position(|b| b.id == Some(id))
            .unwrap_or_else(|| unreachable!("SA bone {id} is in the table"))
    }

    /// A child bone's offset in its parent's space (its rest translation).
    fn offset(&self, id: i32) -> Vec3 {
        self.local[self.node(id)].1
    }

    /// Frame order: the clump root, then the nodes depth-first with children in reverse
    /// order. Returns the node of each frame after the root.
    fn frame_nodes(&self) -> Vec<usize> {
        let n = self.skeleton.bones.len();
        let mut out = Vec::with_capacity(n);
        let mut stack = vec![0];
        while let Some(k) = stack.pop() {
            out.push(k);
            // Pushed in order, popped last child first.
            stack.extend((0..n).filter(|&c| self.skeleton.bones[c].parent == Some(k)));
        }
        out
    }
}

/// One vertex of a body part.
#[derive(Debug, Clone, Copy)]
struct Vertex {
    position: Vec3,
    normal: Vec3,
    uv: [f32; 2],
    /// (node, weight), up to 4, weights summing to 1.
    weights: [(u8, f32); 4],
}

/// A tube or box along a bone, in that bone's space.
struct Part {
    bone: i32,
    from: Vec3,
    to: Vec3,
    /// Half widths across the tube (along `u`, `v`), at the start.
    half: [f32; 2],
    /// End half widths as a fraction of the start's.
    taper: f32,
    /// A box (4 sides) rather than a round tube.
    boxy: bool,
    region: Region,
    /// Weights of the first and last ring, by SA bone id; empty = rigid to `bone`.
    start: Vec<(i32, f32)>,
    end: Vec<(i32, f32)>,
}

fn parts(rig: &Rig) -> Vec<Part> {
    let x = |l: f32| Vec3::new(l, 0.0, 0.0);
    let part = |bone, from, to, half, region, start, end| Part {
        bone,
        from,
        to,
        half,
        taper: 0.85,
        boxy: false,
        region,
        start,
        end,
    };
    let mut out = vec![
        // Hips: from below the pelvis up to the spine; the bottom ring on both thighs too.
        part(
            1,
            x(-0.1),
            x(0.05),
            [0.12, 0.17],
            Region::Trousers,
            vec![(1, 0.5), (41, 0.25), (51, 0.25)],
            vec![(1, 0.6), (2, 0.4)],
        ),
        part(
            2,
            x(0.05),
            rig.offset(3),
            [0.11, 0.16],
            Region::Shirt,
            vec![],
            vec![(2, 0.5), (3, 0.5)],
        ),
        // Chest: the top ring on the neck and both clavicles as well.
        part(
            3,
            Vec3::ZERO,
            rig.offset(4) * 0.9,
            [0.12, 0.18],
            Region::Shirt,
            vec![],
            vec![(3, 0.4), (4, 0.3), (31, 0.15), (21, 0.15)],
        ),
        part(
            4,
            Vec3::ZERO,
            rig.offset(5),
            [0.05, 0.05],
            Region::Skin,
            vec![],
            vec![(4, 0.5), (5, 0.5)],
        ),
        Part {
            boxy: true,
            taper: 0.9,
            ..part(
                5,
                x(0.0),
                x(0.2),
                [0.1, 0.085],
                Region::Skin,
                vec![],
                vec![],
            )
        },
    ];
    for (clav, upper, fore, hand, finger, finger01) in
        [(31, 32, 33, 34, 35, 36), (21, 22, 23, 24, 25, 26)]
    {
        let w = |a: i32, b: i32| -> Vec<(i32, f32)> { vec![(a, 0.5), (b, 0.5)] };
        let w2 = |a: i32, wa: f32, b: i32| -> Vec<(i32, f32)> { vec![(a, wa), (b, 1.0 - wa)] };
        out.extend([
            part(
                clav,
                Vec3::ZERO,
                rig.offset(upper),
                [0.06, 0.06],
                Region::Shirt,
                w2(clav, 0.7, 4),
                w(clav, upper),
            ),
            part(
                upper,
                Vec3::ZERO,
                rig.offset(fore),
                [0.055, 0.055],
                Region::Shirt,
                vec![],
                w(upper, fore),
            ),
            part(
                fore,
                Vec3::ZERO,
                rig.offset(hand),
                [0.045, 0.045],
                Region::Skin,
                vec![],
                w2(fore, 0.6, hand),
            ),
            Part {
                boxy: true,
                taper: 1.0,
                ..part(
                    hand,
                    Vec3::ZERO,
                    rig.offset(finger),
                    [0.02, 0.045],
                    Region::Skin,
                    vec![],
                    w2(hand, 0.7, finger),
                )
            },
            Part {
                boxy: true,
                taper: 0.8,
                ..part(
                    finger,
                    Vec3::ZERO,
                    rig.offset(finger01) + x(0.03),
                    [0.017, 0.04],
                    Region::Skin,
                    vec![],
                    w(finger, finger01),
                )
            },
        ]);
    }
    for (thigh, calf, foot, toe) in [(41, 42, 43, 44), (51, 52, 53, 54)] {
        let w = |a: i32, wa: f32, b: i32| -> Vec<(i32, f32)> { vec![(a, wa), (b, 1.0 - wa)] };
        out.extend([
            part(
                thigh,
                Vec3::ZERO,
                rig.offset(calf),
                [0.085, 0.085],
                Region::Trousers,
                w(thigh, 0.6, 1),
                w(thigh, 0.5, calf),
            ),
            part(
                calf,
                Vec3::ZERO,
                rig.offset(foot),
                [0.065, 0.065],
                Region::Trousers,
                vec![],
                w(calf, 0.6, foot),
            ),
            Part {
                boxy: true,
                taper: 1.0,
                ..part(
                    foot,
                    Vec3::ZERO,
                    rig.offset(toe),
                    [0.05, 0.045],
                    Region::Shoes,
                    vec![],
                    w(foot, 0.5, toe),
                )
            },
            Part {
                boxy: true,
                taper: 0.8,
                ..part(
                    toe,
                    Vec3::ZERO,
                    x(0.07),
                    [0.045, 0.03],
                    Region::Shoes,
                    vec![],
                    vec![],
                )
            },
        ]);
    }
    out
}

/// Vertices and triangles (material, a, b, c counter-clockwise) of a mesh.
#[derive(Default)]
struct Mesh {
    vertices: Vec<Vertex>,
    triangles: Vec<(u16, [u16; 3])>,
}

impl Mesh {
    /// Adds a tube from `from` to `to` (in the space `m` maps to the mesh's), `sides` around,
    /// `rings` along, closed by a centre vertex at each end; `weight(ring)` gives each ring's
    /// influences. Triangles face outwards.
    #[allow(clippy::too_many_arguments)]
    fn tube(
        &mut self,
        m: Mat4,
        (from, to): (Vec3, Vec3),
        half: [f32; 2],
        taper: f32,
        sides: usize,
        rings: usize,
        uv: [f32; 4],
        material: u16,
        weight: impl Fn(usize) -> [(u8, f32); 4],
    ) {
        let d = (to - from).normalize();
        let pick = if d.z.abs() < 0.9 { Vec3::Z } else { Vec3::Y };
        let u = (pick - d * pick.dot(d)).normalize();
        let v = d.cross(u);
        let base = self.vertices.len();
        let rot = Mat3::from_mat4(m);
        let boxy = sides == 4;
        let mut push = |p: Vec3, n: Vec3, t: [f32; 2], w| {
            self.vertices.push(Vertex {
                position: m.transform_point3(p),
                normal: (rot * n).normalize(),
                uv: t,
                weights: w,
            })
        };
        for r in 0..rings {
            let t = r as f32 / (rings - 1) as f32;
            let k = 1.0 + (taper - 1.0) * t;
            let centre = from + (to - from) * t;
            for j in 0..=sides {
                let a = TAU * j as f32 / sides as f32 + if boxy { TAU / 8.0 } else { 0.0 };
                let s = if boxy { std::f32::consts::SQRT_2 } else { 1.0 };
                let (c, sn) = (a.cos() * s, a.sin() * s);
                let (hu, hv) = (half[0] * k, half[1] * k);
                let (c, sn) = if boxy {
                    (c.round(), sn.round())
                } else {
                    (c, sn)
                };
                let p = centre + u * (hu * c) + v * (hv * sn);
                let n = (u * (c / hu) + v * (sn / hv)).normalize();
                let uv_ = [
                    uv[0] + (uv[2] - uv[0]) * j as f32 / sides as f32,
                    uv[1] + (uv[3] - uv[1]) * t,
                ];
                push(p, n, uv_, weight(r));
            }
        }
        let mid = [(uv[0] + uv[2]) / 2.0, (uv[1] + uv[3]) / 2.0];
        push(from, -d, mid, weight(0));
        push(to, d, mid, weight(rings - 1));
        let ring = |r: usize, j: usize| (base + r * (sides + 1) + j) as u16;
        let (c0, c1) = (
            (base + rings * (sides + 1)) as u16,
            (base + rings * (sides + 1) + 1) as u16,
        );
        let mut tris = Vec::new();
        for r in 0..rings - 1 {
            for j in 0..sides {
                let (a, b, c, e) = (
                    ring(r, j),
                    ring(r, j + 1),
                    ring(r + 1, j),
                    ring(r + 1, j + 1),
                );
                tris.push([a, b, e]);
                tris.push([a, e, c]);
            }
        }
        for j in 0..sides {
            tris.push([c0, ring(0, j + 1), ring(0, j)]);
            tris.push([c1, ring(rings - 1, j), ring(rings - 1, j + 1)]);
        }
        // Face outwards: the face normal agrees with its vertices' normals.
        for t in tris {
            let [a, b, c] = t.map(|i| self.vertices[usize::from(i)]);
            let n = (b.position - a.position).cross(c.position - a.position);
            let out = a.normal + b.normal + c.normal;
            let t = if n.dot(out) < 0.0 {
                [t[0], t[2], t[1]]
            } else {
                t
            };
            self.triangles.push((material, t));
        }
    }
}

fn weights(rig: &Rig, list: &[(i32, f32)], rigid: i32) -> [(u8, f32); 4] {
    let mut w = [(0u8, 0.0f32); 4];
    if list.is_empty() {
        w[0] = (rig.node(rigid) as u8, 1.0);
        return w;
    }
    let mut sorted = list.to_vec();
    sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (slot, &(id, weight)) in w.iter_mut().zip(&sorted) {
        *slot = (rig.node(id) as u8, weight);
    }
    w
}

/// The body in skin space.
fn body(rig: &Rig, detail: Detail) -> Mesh {
    let mut mesh = Mesh::default();
    for p in parts(rig) {
        let k = rig.node(p.bone);
        let sides = if p.boxy { 4 } else { detail.sides };
        mesh.tube(
            rig.skin[k],
            (p.from, p.to),
            p.half,
            p.taper,
            sides,
            detail.rings,
            p.region.uv_rect(),
            p.region.material(),
            |r| {
                if r == 0 {
                    weights(rig, &p.start, p.bone)
                } else if r == detail.rings - 1 {
                    weights(rig, &p.end, p.bone)
                } else {
                    weights(rig, &[], p.bone)
                }
            },
        );
    }
    mesh
}

/// The cap in ` Head`'s space: a crown over the top of the head box and a closed top.
fn cap() -> Mesh {
    let mut mesh = Mesh::default();
    mesh.tube(
        Mat4::IDENTITY,
        (Vec3::new(0.15, 0.0, 0.0), Vec3::new(0.235, 0.0, 0.0)),
        [0.145, 0.13],
        0.8,
        12,
        3,
        [0.0, 0.0, 1.0, 1.0],
        0,
        |_| [(0, 1.0), (0, 0.0), (0, 0.0), (0, 0.0)],
    );
    mesh
}

/// A triangle strip of `tris` (all one material): each next triangle extends the strip by
/// one index when it shares the strip's last edge in the right orientation, else the strip
/// jumps with degenerate triangles (§3.6: odd triangles have their first two indices swapped).
fn strip(tris: &[[u16; 3]]) -> Vec<u32> {
    let mut s: Vec<u32> = Vec::new();
    for t in tris {
        let t = t.map(u32::from);
        let rotations = [[t[0], t[1], t[2]], [t[1], t[2], t[0]], [t[2], t[0], t[1]]];
        if s.len() >= 2 {
            let k = s.len() - 2;
            let (x, y) = (s[k], s[k + 1]);
            // The window (x, y, z) is drawn as (x, y, z) when k is even, (y, x, z) when odd.
            let want = if k.is_multiple_of(2) { (x, y) } else { (y, x) };
            if let Some(r) = rotations.iter().find(|r| (r[0], r[1]) == want) {
                s.push(r[2]);
                continue;
            }
            let last = s[s.len() - 1];
            s.push(last);
            // The triangle starts at an even position: repeat its first index once or twice.
            s.push(t[0]);
            if s.len() % 2 == 1 {
                s.push(t[0]);
            }
        }
        s.extend(t);
    }
    s
}

/// Writes a Geometry chunk: Struct (§3.2), Material List (§3.3–3.5), Extension with Bin Mesh,
/// Skin PLG (when `skin` is given) and Breakable (0) (§3.6).
fn geometry(b: &mut Bytes, mesh: &Mesh, textures: &[&str], strips: bool, skin: Option<&Rig>) {
    let n = mesh.vertices.len();
    let flags = if strips { 0x01 } else { 0 }
        | 0x02
        | 0x04
        | 0x10
        | 0x20
        | if skin.is_none() { 0x40 } else { 0 }
        | 1 << 16;
    b.chunk(id::GEOMETRY, |b| {
        b.chunk(id::STRUCT, |b| {
            b.u32(flags)
                .i32(mesh.triangles.len() as i32)
                .i32(n as i32)
                .i32(1);
            for v in &mesh.vertices {
                b.f32s(&v.uv);
            }
            for &(m, [a, bb, c]) in &mesh.triangles {
                b.u16(bb).u16(a).u16(m).u16(c);
            }
            let (lo, hi) = mesh.vertices.iter().fold(
                (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
                |(lo, hi), v| (lo.min(v.position), hi.max(v.position)),
            );
            let centre = (lo + hi) / 2.0;
            let radius = mesh
                .vertices
                .iter()
                .map(|v| v.position.distance(centre))
                .fold(0.0f32, f32::max)
                * 1.0001;
            b.f32s(&centre.to_array()).f32(radius).u32(1).u32(1);
            for v in &mesh.vertices {
                b.f32s(&v.position.to_array());
            }
            for v in &mesh.vertices {
                b.f32s(&v.normal.to_array());
            }
        });
        b.chunk(id::MATERIAL_LIST, |b| {
            b.chunk(id::STRUCT, |b| {
                b.i32(textures.len() as i32);
                for _ in textures {
                    b.i32(-1);
                }
            });
            for name in textures {
                b.chunk(id::MATERIAL, |b| {
                    b.chunk(id::STRUCT, |b| {
                        b.u32(0).raw(&[255, 255, 255, 255]).i32(0).u32(1);
                        b.f32s(&[1.0, 1.0, 1.0]);
                    });
                    b.chunk(id::TEXTURE, |b| {
                        b.chunk(id::STRUCT, |b| {
                            b.u32(0x1106);
                        });
                        b.string_chunk(name).string_chunk("");
                        b.chunk(id::EXTENSION, |_| {});
                    });
                    b.chunk(id::EXTENSION, |_| {});
                });
            }
        });
        b.chunk(id::EXTENSION, |b| {
            let meshes: Vec<(u32, Vec<u32>)> = (0..textures.len() as u16)
                .map(|m| {
                    let tris: Vec<[u16; 3]> = mesh
                        .triangles
                        .iter()
                        .filter(|t| t.0 == m)
                        .map(|t| t.1)
                        .collect();
                    let ix = if strips {
                        strip(&tris)
                    } else {
                        tris.iter().flatten().map(|&i| u32::from(i)).collect()
                    };
                    (u32::from(m), ix)
                })
                .collect();
            b.chunk(id::BIN_MESH, |b| {
                b.u32(u32::from(strips))
                    .u32(meshes.len() as u32)
                    .u32(meshes.iter().map(|m| m.1.len() as u32).sum());
                for (m, ix) in &meshes {
                    b.u32(ix.len() as u32).u32(*m);
                    for &i in ix {
                        b.u32(i);
                    }
                }
            });
            if let Some(rig) = skin {
                b.chunk(id::SKIN, |b| skin_plg(b, mesh, rig));
            }
            b.chunk(id::BREAKABLE, |b| {
                b.u32(0);
            });
        });
    });
}

/// The Skin PLG in SA's layout (§3.6).
fn skin_plg(b: &mut Bytes, mesh: &Mesh, rig: &Rig) {
    let num_bones = rig.skeleton.bones.len();
    let mut used = vec![false; num_bones];
    let mut max_weights = 0;
    for v in &mesh.vertices {
        let n = v.weights.iter().filter(|w| w.1 != 0.0).count();
        max_weights = max_weights.max(n);
        for w in v.weights.iter().filter(|w| w.1 != 0.0) {
            used[usize::from(w.0)] = true;
        }
    }
    let used: Vec<u8> = (0..num_bones as u8).filter(|&k| used[k as usize]).collect();
    b.u8(num_bones as u8)
        .u8(used.len() as u8)
        .u8(max_weights as u8)
        .u8(0)
        .raw(&used);
    for v in &mesh.vertices {
        for w in v.weights {
            b.u8(w.0);
        }
    }
    for v in &mesh.vertices {
        for w in v.weights {
            b.f32(w.1);
        }
    }
    for m in &rig.skin {
        b.f32s(&m.inverse().to_cols_array());
    }
    b.u32(0).u32(0).u32(0);
}

/// The frame list: frame 0 the clump root, then the bones in [`Rig::frame_nodes`] order.
fn frame_list(b: &mut Bytes, rig: &Rig) -> Vec<usize> {
    let order = rig.frame_nodes();
    let mut frame_of_node = vec![0; order.len()];
    for (f, &k) in order.iter().enumerate() {
        frame_of_node[k] = f + 1;
    }
    let bones = &rig.skeleton.bones;
    b.chunk(id::FRAME_LIST, |b| {
        b.chunk(id::STRUCT, |b| {
            b.i32(order.len() as i32 + 1);
            b.f32s(&Mat3::IDENTITY.to_cols_array())
                .f32s(&[0.0; 3])
                .i32(-1)
                .u32(0x20003);
            for &k in &order {
                let (r, p) = rig.local[k];
                let parent = bones[k].parent.map_or(0, |p| frame_of_node[p]);
                b.f32s(&r.to_cols_array())
                    .f32s(&p.to_array())
                    .i32(parent as i32)
                    .u32(3);
            }
        });
        b.chunk(id::EXTENSION, |_| {});
        for &k in &order {
            let bone = &bones[k];
            b.chunk(id::EXTENSION, |b| {
                b.chunk(id::HANIM, |b| {
                    b.u32(0x100).i32(bone.id.unwrap_or(-1));
                    if k == 0 {
                        b.i32(bones.len() as i32).u32(0).i32(36);
                        for (i, node) in bones.iter().enumerate() {
                            let has_children = bones.iter().any(|c| c.parent == Some(i));
                            let later_sibling =
                                bones[i + 1..].iter().any(|c| c.parent == node.parent);
                            let flags =
                                u32::from(!has_children) | if later_sibling { 2 } else { 0 };
                            b.i32(node.id.unwrap_or(-1)).i32(i as i32).u32(flags);
                        }
                    } else {
                        b.i32(0);
                    }
                });
                b.chunk(id::FRAME_NAME, |b| {
                    b.raw(bone.name.as_bytes());
                });
            });
        }
    });
    frame_of_node
}

fn atomic(b: &mut Bytes, frame: usize, geometry: u32, rtr: (u32, u32)) {
    b.chunk(id::ATOMIC, |b| {
        b.chunk(id::STRUCT, |b| {
            b.i32(frame as i32).u32(geometry).u32(5).u32(0);
        });
        b.chunk(id::EXTENSION, |b| {
            b.chunk(id::RIGHT_TO_RENDER, |b| {
                b.u32(rtr.0).u32(rtr.1);
            });
        });
    });
}

/// The sample ped DFF at a level of detail (see the module docs for its layout).
pub fn ped_dff_with(detail: Detail) -> Vec<u8> {
    assert!(
        detail.rings >= 2 && detail.sides >= 3,
        "a tube needs 2 rings and 3 sides"
    );
    let rig = Rig::new();
    let body = body(&rig, detail);
    let cap = cap();
    let mut b = Bytes::new();
    b.chunk(id::CLUMP, |b| {
        b.chunk(id::STRUCT, |b| {
            b.i32(2).i32(0).i32(0);
        });
        let frame_of_node = frame_list(b, &rig);
        b.chunk(id::GEOMETRY_LIST, |b| {
            b.chunk(id::STRUCT, |b| {
                b.i32(2);
            });
            geometry(b, &body, &[BODY_TEXTURE, BODY_TEXTURE], true, Some(&rig));
            geometry(b, &cap, &[CAP_TEXTURE], false, None);
        });
        atomic(b, frame_of_node[0], 0, (0x116, 1));
        atomic(b, frame_of_node[rig.node(5)], 1, (0x120, 0));
        b.chunk(id::EXTENSION, |_| {});
    });
    b.0
}

/// The bundled sample ped DFF (`assets/characters/ped.dff`).
pub fn ped_dff() -> Vec<u8> {
    ped_dff_with(Detail::SAMPLE)
}

/// The bundled sample ped TXD (`assets/characters/ped.txd`): `ped` DXT1 128×128 with 8 mip
/// levels (down to 1×1), `ped_cap` B8G8R8A8 64×64 with one.
pub fn ped_txd() -> Vec<u8> {
    let body = body_atlas().mip_chain(16);
    let cap = [cap_image()];
    rw::txd_bytes(&[
        TexSpec {
            name: BODY_TEXTURE,
            format: TexFormat::Dxt1,
            levels: &body,
        },
        TexSpec {
            name: CAP_TEXTURE,
            format: TexFormat::Bgra8888,
            levels: &cap,
        },
    ])
}
