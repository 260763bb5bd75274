//! Assembling `.anie` projects by code the way AnimeEffects' PSD import and its editing tools
//! lay them out (spec §1.5, §2, §3, Addendum 3–4 and 9–13), so that the program opens them and
//! its tools can keep editing them:
//!
//! * [`Scene`]: a root folder with layers under it, as a PSD import makes them: one resource
//!   tree (`topnode` and one resource node per layer, with the layer's canvas rect), default
//!   Move (the rect centre), Rotate, Scale, Depth (0, −1, −2, … from the top) and Opa keys, a
//!   default Image key centring the image (`imageOffset = −size/2`) with its grid mesh;
//! * [`grid_mesh`]: the triangular lattice AnimeEffects builds over an image (Addendum 9), or
//!   its quad for small images (§3 `createQuadMesh`);
//! * [`Rig`]: a bone tree with the influence shapes the bone editor stores (Addendum 10,
//!   §4.5), a Bone key with its influence caches and binding caches, and Pose keys.

use std::f32::consts::{PI, TAU};

use glam::{Affine2, Mat4, Vec2, Vec3};

use super::paint::Painter;
use rigplay::anie::skinning::{BoneJoint, bone_world_transforms, signed_angle, vertex_influences};
use rigplay::anie::transform::local_matrix;
use rigplay::formats::anie::{
    AnieFile, BindingCache, BlendMode, Bone, BoneCache, BoneKey, BoneRef, BoneShape, DepthKey,
    Easing, FRect, Frame, GridMesh, IRect, Image, ImageKey, KeyKind, KeyRef, KeySlot, MoveKey,
    NodeKind, ObjectNode, OpaKey, PoseKey, ResourceNode, ResourceRef, ResourceTree, RotateKey,
    ScaleKey, TimeKey,
};

/// AnimeEffects' default grid cell (§3).
pub const DEFAULT_CELL: i32 = 16;

/// The grid mesh AnimeEffects builds over `image` with cells of `cell` pixels (§3,
/// Addendum 9), with `origin_offset` equal to the Image key's offset.
///
/// * Small images (`cell ≥ w − 2` and `cell ≥ h − 2`) get the quad `(0,0) (w,0) (0,h) (w,h)`,
///   indices `0 1 2, 1 3 2`, as `GridMesh::createQuadMesh` makes it.
/// * Otherwise a triangular lattice: rows `cell·√3/2` apart down to the first row at or below
///   the image, even rows at `x = −cell/2 + i·cell` and odd rows at `x = i·cell`, both reaching
///   the first column at or beyond the right edge; vertices row by row; triangles in
///   AnimeEffects' order and winding (those of `bones.anie`). Triangles that cover no visible
///   pixel are left out, as AnimeEffects skips fully transparent cells, and unused vertices are
///   dropped. Each vertex lists its six neighbours (right, down-right, down-left, left,
///   up-left, up-right; −1 where no kept triangle joins them), texcoords equal positions,
///   offsets are 0 and normals +z.
///
/// AnimeEffects also pulls the border vertices onto an outline around the opaque pixels; this
/// lattice keeps them on the grid (the stored mesh is what plays, §3 "Use the stored mesh").
/// `vertex_rect` is the positions' bounding box ([`GridMesh::bounding_rect`]).
pub fn grid_mesh(image: &Image, cell: i32, origin_offset: Vec2) -> GridMesh {
    let (w, h) = (image.width as i32, image.height as i32);
    if cell >= w - 2 && cell >= h - 2 {
        return quad_mesh(w, h, cell, origin_offset);
    }
    let c = cell as f32;
    let row_step = c * 3f32.sqrt() / 2.0;
    let rows = (h as f32 / row_step).ceil() as usize + 1;
    // Row j holds row_len(j) vertices at x = row_x(j, i); even rows start half a cell left.
    let row_x = |j: usize, i: usize| -> f32 {
        if j.is_multiple_of(2) {
            -c / 2.0 + i as f32 * c
        } else {
            i as f32 * c
        }
    };
    let row_len = |j: usize| -> usize {
        if j.is_multiple_of(2) {
            ((w as f32 + c / 2.0) / c).ceil() as usize + 1
        } else {
            (w as f32 / c).ceil() as usize + 1
        }
    };
    let mut first = Vec::with_capacity(rows);
    let mut positions = Vec::new();
    for j in 0..rows {
        first.push(positions.len());
        for i in 0..row_len(j) {
            positions.push(Vec2::new(row_x(j, i), j as f32 * row_step));
        }
    }
    let id = |j: usize, i: usize| -> Option<usize> { (i < row_len(j)).then(|| first[j] + i) };
    let mut triangles: Vec<[usize; 3]> = Vec::new();
    for j in 0..rows - 1 {
        for i in 0..row_len(j) {
            let top = id(j, i).expect("a vertex of the row");
            // Even rows start half a cell left of the odd rows below them (AnimeEffects'
            // triangle order and winding).
            let tris: [Option<[usize; 3]>; 2] = if j.is_multiple_of(2) {
                [
                    id(j, i + 1).zip(id(j + 1, i)).map(|(b, c)| [top, b, c]),
                    id(j, i + 1)
                        .zip(id(j + 1, i + 1))
                        .zip(id(j + 1, i))
                        .map(|((a, b), c)| [a, b, c]),
                ]
            } else {
                [
                    id(j + 1, i + 1).zip(id(j + 1, i)).map(|(b, c)| [top, b, c]),
                    id(j, i + 1).zip(id(j + 1, i + 1)).map(|(b, c)| [top, b, c]),
                ]
            };
            triangles.extend(tris.into_iter().flatten());
        }
    }
    triangles.retain(|t| covers_visible_pixel(image, t.map(|v| positions[v])));
    // Keep the used vertices, in order; neighbours through kept triangles.
    let mut used = vec![false; positions.len()];
    for t in &triangles {
        for &v in t {
            used[v] = true;
        }
    }
    let kept: Vec<usize> = (0..positions.len()).filter(|&v| used[v]).collect();
    let mut new_index = vec![usize::MAX; positions.len()];
    for (k, &v) in kept.iter().enumerate() {
        new_index[v] = k;
    }
    let mut edges = std::collections::HashSet::new();
    for t in &triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            edges.insert((a.min(b), a.max(b)));
        }
    }
    let joined = |a: usize, b: Option<usize>| -> i32 {
        b.filter(|&b| edges.contains(&(a.min(b), a.max(b))))
            .map_or(-1, |b| new_index[b] as i32)
    };
    let mut connections = Vec::with_capacity(kept.len());
    for &v in &kept {
        let j = first.partition_point(|&f| f <= v) - 1;
        let i = v - first[j];
        // Columns of the rows above and below that lie half a cell left and right.
        let (left_other, right_other) = if j.is_multiple_of(2) {
            (i.checked_sub(1), Some(i))
        } else {
            (Some(i), Some(i + 1))
        };
        let other = |jj: Option<usize>, ii: Option<usize>| -> Option<usize> {
            let jj = jj.filter(|&jj| jj < rows)?;
            id(jj, ii?)
        };
        let below = Some(j + 1);
        let above = j.checked_sub(1);
        connections.push([
            joined(v, id(j, i + 1)),
            joined(v, other(below, right_other)),
            joined(v, other(below, left_other)),
            joined(v, i.checked_sub(1).and_then(|i| id(j, i))),
            joined(v, other(above, left_other)),
            joined(v, other(above, right_other)),
        ]);
    }
    let positions: Vec<Vec2> = kept.iter().map(|&v| positions[v]).collect();
    let mut mesh = GridMesh {
        size: [w, h],
        origin_offset,
        cell_px: cell,
        indices: triangles
            .iter()
            .flat_map(|t| t.map(|v| new_index[v] as u32))
            .collect(),
        positions: positions.iter().map(|p| p.extend(0.0)).collect(),
        offsets: vec![Vec3::ZERO; positions.len()],
        texcoords: positions.clone(),
        normals: vec![Vec3::Z; positions.len()],
        connections,
        vertex_rect: IRect::default(),
    };
    mesh.vertex_rect = mesh.bounding_rect();
    mesh
}

/// The quad mesh of a `w × h` image (§3 `createQuadMesh`); its neighbour lists are those of
/// the reference projects' quads.
pub fn quad_mesh(w: i32, h: i32, cell: i32, origin_offset: Vec2) -> GridMesh {
    let (wf, hf) = (w as f32, h as f32);
    let corners = [
        Vec2::ZERO,
        Vec2::new(wf, 0.0),
        Vec2::new(0.0, hf),
        Vec2::new(wf, hf),
    ];
    GridMesh {
        size: [w, h],
        origin_offset,
        cell_px: cell,
        indices: vec![0, 1, 2, 1, 3, 2],
        positions: corners.iter().map(|p| p.extend(0.0)).collect(),
        offsets: vec![Vec3::ZERO; 4],
        texcoords: corners.to_vec(),
        normals: vec![Vec3::Z; 4],
        connections: vec![
            [1, 2, -1, -1, -1, -1],
            [0, 2, 3, -1, -1, -1],
            [0, 1, 3, -1, -1, -1],
            [1, 2, -1, -1, -1, -1],
        ],
        vertex_rect: IRect {
            x: 0,
            y: 0,
            width: w,
            height: h,
        },
    }
}

/// Whether any pixel of `image` with alpha > 0 has its centre inside (or within half a pixel
/// of) the triangle `t` (image pixels).
fn covers_visible_pixel(image: &Image, t: [Vec2; 3]) -> bool {
    let lo = t[0].min(t[1]).min(t[2]).floor() - Vec2::ONE;
    let hi = t[0].max(t[1]).max(t[2]).ceil() + Vec2::ONE;
    let (w, h) = (image.width as i32, image.height as i32);
    for y in (lo.y as i32).max(0)..(hi.y as i32).min(h) {
        for x in (lo.x as i32).max(0)..(hi.x as i32).min(w) {
            if image.rgba[((y * w + x) * 4 + 3) as usize] == 0 {
                continue;
            }
            let p = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            if distance_to_triangle(p, t) <= 0.75 {
                return true;
            }
        }
    }
    false
}

/// Distance from `p` to the triangle `t` (0 inside).
fn distance_to_triangle(p: Vec2, t: [Vec2; 3]) -> f32 {
    let side = |a: Vec2, b: Vec2| (b - a).perp_dot(p - a);
    let s = [side(t[0], t[1]), side(t[1], t[2]), side(t[2], t[0])];
    if s.iter().all(|&v| v >= 0.0) || s.iter().all(|&v| v <= 0.0) {
        return 0.0;
    }
    (0..3)
        .map(|k| {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            let ab = b - a;
            let u = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
            (p - (a + ab * u)).length()
        })
        .fold(f32::MAX, f32::min)
}

/// A project being built: a root folder (object node 0) whose children are layers, and one
/// resource tree whose `topnode` holds their images, as AnimeEffects' PSD import lays them
/// out. Layers are added from the top of the layer panel down.
#[derive(Clone, Debug)]
pub struct Scene {
    pub project: AnieFile,
}

impl Scene {
    /// An empty scene: canvas size, last frame, frame rate, loop flag; `source` is the
    /// resource tree's file path and `root` the root folder's name. The root folder gets the
    /// default Move, Rotate, Scale and Opa keys an import gives it, and no Depth map
    /// (Addendum 4).
    pub fn new(
        size: [u32; 2],
        max_frame: u32,
        fps: u32,
        looping: bool,
        source: &str,
        root: &str,
    ) -> Self {
        let mut folder = ObjectNode {
            kind: NodeKind::Folder,
            name: root.into(),
            visible: true,
            initial_rect: IRect {
                x: 0,
                y: 0,
                width: size[0] as i32,
                height: size[1] as i32,
            },
            ..ObjectNode::default()
        };
        let tl = &mut folder.timeline;
        tl.moves.default = Some(TimeKey::new(-1, MoveKey::default()));
        tl.rotates.default = Some(TimeKey::new(-1, RotateKey::default()));
        tl.scales.default = Some(TimeKey::new(-1, ScaleKey::default()));
        tl.opacities.default = Some(TimeKey::new(-1, OpaKey::default()));
        Self {
            project: AnieFile {
                canvas_width: size[0],
                canvas_height: size[1],
                max_frame,
                fps,
                looping,
                resources: vec![ResourceTree {
                    file_path: source.into(),
                    nodes: vec![ResourceNode {
                        identifier: "topnode".into(),
                        ..ResourceNode::default()
                    }],
                }],
                objects: vec![folder],
            },
        }
    }

    /// Adds a layer below the ones added before: its image and canvas rect come from
    /// `painter`; `cell` is the grid mesh's cell size. Returns the layer's object node index.
    pub fn layer(&mut self, name: &str, painter: Painter, blend: BlendMode, cell: i32) -> usize {
        let rect = painter.rect();
        let image = painter.into_image();
        let p = &mut self.project;
        let tree = &mut p.resources[0];
        let res = tree.nodes.len();
        tree.nodes[0].children.push(res);
        tree.nodes.push(ResourceNode {
            identifier: name.into(),
            is_layer: true,
            rect,
            blend_mode: blend,
            image: Some(image.clone()),
            parent: Some(0),
            children: Vec::new(),
        });
        let node = p.objects.len();
        p.objects[0].children.push(node);
        let depth = -((p.objects[0].children.len() - 1) as f32);
        let size = Vec2::new(rect.width as f32, rect.height as f32);
        let centre = Vec2::new(rect.x as f32, rect.y as f32) + size / 2.0;
        let offset = -size / 2.0;
        let mut layer = ObjectNode {
            kind: NodeKind::Layer,
            name: name.into(),
            visible: true,
            initial_rect: rect,
            parent: Some(0),
            ..ObjectNode::default()
        };
        let tl = &mut layer.timeline;
        tl.moves.default = Some(TimeKey::new(
            -1,
            MoveKey {
                pos: centre,
                ..MoveKey::default()
            },
        ));
        tl.rotates.default = Some(TimeKey::new(-1, RotateKey::default()));
        tl.scales.default = Some(TimeKey::new(-1, ScaleKey::default()));
        tl.depths.default = Some(TimeKey::new(
            -1,
            DepthKey {
                depth,
                ..DepthKey::default()
            },
        ));
        tl.opacities.default = Some(TimeKey::new(-1, OpaKey::default()));
        tl.images.default = Some(TimeKey::new(
            -1,
            ImageKey {
                easing: Easing::default(),
                resource: Some(ResourceRef { tree: 0, node: res }),
                blend_mode: blend,
                image_offset: offset,
                mesh: grid_mesh(&image, cell, offset),
            },
        ));
        p.objects.push(layer);
        node
    }

    /// The default Image key's mesh of a layer.
    pub fn mesh(&self, node: usize) -> &GridMesh {
        &self.project.objects[node]
            .timeline
            .images
            .default
            .as_ref()
            .expect("a layer made by Scene::layer")
            .value
            .mesh
    }

    /// The `KeyRef` of a layer's default Image key (the parent of its FFD keys, Addendum 11).
    pub fn image_key(node: usize) -> KeyRef {
        KeyRef {
            node,
            kind: KeyKind::Image,
            slot: KeySlot::Default,
        }
    }

    /// A node's local matrix from its default keys (§4.3).
    fn rest_local(&self, node: usize) -> Affine2 {
        let tl = &self.project.objects[node].timeline;
        let mv = tl
            .moves
            .default
            .as_ref()
            .map(|k| k.value)
            .unwrap_or_default();
        let rot = tl.rotates.default.as_ref().map_or(0.0, |k| k.value.rotate);
        let scale = tl
            .scales
            .default
            .as_ref()
            .map_or(Vec2::ONE, |k| k.value.scale);
        local_matrix(mv.pos, rot, scale, mv.centroid)
    }
}

/// A bone of a [`Rig`], given by its joint in the Bone key owner's space (canvas pixels at
/// rest).
#[derive(Clone, Debug)]
pub struct RigBone {
    /// Index of the parent bone (a smaller index: bones are listed in DFS pre-order); `None`
    /// for a top bone (a root joint without a segment).
    pub parent: Option<usize>,
    /// The joint at the end of the bone's segment (for a top bone, the joint itself).
    pub joint: Vec2,
    /// The influence range at both joints: x across, y along the bone (the editor's
    /// handles). Ignored for top bones, which weigh nothing.
    pub range: Vec2,
    /// Object nodes rigidly bound to this bone (§4.6).
    pub binds: Vec<usize>,
}

/// Half-ellipse samples of a capsule end (16 segments over half a turn, as in `bones.anie`).
const CAP_SEGMENTS: usize = 16;

/// The capsule around the segment `start → end`: a half-ellipse at each joint (`radius.x`
/// across, `radius.y` along the bone) joined by straight sides; tail cap first, sampled at
/// 11.25° steps of the ellipse parameter.
pub fn capsule_polygon(start: Vec2, end: Vec2, radius: [Vec2; 2]) -> Vec<Vec2> {
    let u = (end - start).normalize_or_zero();
    let n = u.perp();
    let mut out = Vec::with_capacity(2 * (CAP_SEGMENTS + 1));
    for (centre, r, from) in [(end, radius[1], -PI / 2.0), (start, radius[0], PI / 2.0)] {
        for k in 0..=CAP_SEGMENTS {
            let t = from + k as f32 * PI / CAP_SEGMENTS as f32;
            out.push(centre + u * (r.y * t.cos()) + n * (r.x * t.sin()));
        }
    }
    out
}

fn bounds(poly: &[Vec2]) -> (Vec2, Vec2) {
    poly.iter().fold(
        (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN)),
        |(lo, hi), &p| (lo.min(p), hi.max(p)),
    )
}

fn boxes_overlap((alo, ahi): (Vec2, Vec2), (blo, bhi): (Vec2, Vec2)) -> bool {
    alo.x <= bhi.x && alo.y <= bhi.y && ahi.x >= blo.x && ahi.y >= blo.y
}

/// A convex polygon with its vertices turning positively (`a × b` summed over its edges
/// > 0: increasing angle, clockwise on screen with y down), and its bounding box.
struct Convex {
    points: Vec<Vec2>,
    bounds: (Vec2, Vec2),
}

impl Convex {
    fn new(points: &[Vec2]) -> Self {
        let mut points = points.to_vec();
        let area: f32 = (0..points.len())
            .map(|i| points[i].perp_dot(points[(i + 1) % points.len()]))
            .sum();
        if area < 0.0 {
            points.reverse();
        }
        let bounds = bounds(&points);
        Self { points, bounds }
    }

    fn edges(&self) -> impl Iterator<Item = (Vec2, Vec2)> + '_ {
        let n = self.points.len();
        (0..n).map(move |i| (self.points[i], self.points[(i + 1) % n]))
    }

    /// Strictly inside (the interior is on the left of every edge).
    fn contains(&self, q: Vec2) -> bool {
        boxes_overlap((q, q), self.bounds)
            && self
                .edges()
                .all(|(a, b)| (b - a).length_squared() < 1e-12 || (b - a).perp_dot(q - a) > 0.0)
    }
}

/// The region `own ∩ (others[0] ∪ others[1] ∪ …)` of convex polygons as one closed polygon
/// (the first point repeated at the end), as a polygon boolean operation gives it: every edge
/// of every polygon is split where it crosses or touches another's; a piece is on the
/// region's boundary when the point just inside its polygon is in the region and the point
/// just outside is not; the pieces are chained into loops and the loop around `centre` is
/// kept. Points on straight runs (within 0.001 px) are dropped. The points turn positively
/// (increasing angle about `centre`; clockwise on screen, y down), starting behind
/// `start_angle`.
fn clipped_union(own: &[Vec2], others: &[Vec<Vec2>], centre: Vec2, start_angle: f32) -> Vec<Vec2> {
    let own = Convex::new(own);
    let others: Vec<Convex> = others
        .iter()
        .map(|o| Convex::new(o))
        .filter(|o| boxes_overlap(o.bounds, own.bounds))
        .collect();
    let in_region = |q: Vec2| own.contains(q) && others.iter().any(|o| o.contains(q));
    let all: Vec<&Convex> = std::iter::once(&own).chain(&others).collect();
    const EPS: f32 = 2e-3;

    // Boundary pieces.
    let mut pieces: Vec<(Vec2, Vec2)> = Vec::new();
    for (i, poly) in all.iter().enumerate() {
        for (a, b) in poly.edges() {
            let ab = b - a;
            let len2 = ab.length_squared();
            if len2 < 1e-12 {
                continue;
            }
            let edge_box = (a.min(b), a.max(b));
            let mut cuts = vec![0.0f32, 1.0];
            for (j, other) in all.iter().enumerate() {
                if j == i || !boxes_overlap(edge_box, other.bounds) {
                    continue;
                }
                for (c, d) in other.edges() {
                    let cd = d - c;
                    let den = ab.perp_dot(cd);
                    if den.abs() > 1e-9 * len2.sqrt() * cd.length() {
                        let t = (c - a).perp_dot(cd) / den;
                        let u = (c - a).perp_dot(ab) / den;
                        if (-1e-6..=1.0 + 1e-6).contains(&u) && t > 0.0 && t < 1.0 {
                            cuts.push(t);
                        }
                    } else if (c - a).perp_dot(ab).abs() / len2.sqrt() < 1e-4 {
                        // Collinear: cut where the other edge starts and ends.
                        for e in [c, d] {
                            let t = (e - a).dot(ab) / len2;
                            if t > 0.0 && t < 1.0 {
                                cuts.push(t);
                            }
                        }
                    }
                }
            }
            cuts.sort_by(f32::total_cmp);
            let inward = ab.perp() / len2.sqrt();
            for w in cuts.windows(2) {
                let (p, q) = (a + ab * w[0], a + ab * w[1]);
                if p.distance(q) < 1e-5 {
                    continue;
                }
                let m = (p + q) / 2.0;
                if in_region(m + inward * EPS) && !in_region(m - inward * EPS) {
                    pieces.push((p, q));
                }
            }
        }
    }
    // Collinear edges running the same way give the same piece twice.
    let mut unique: Vec<(Vec2, Vec2)> = Vec::with_capacity(pieces.len());
    for piece in pieces {
        if !unique
            .iter()
            .any(|u| u.0.distance(piece.0) < 1e-3 && u.1.distance(piece.1) < 1e-3)
        {
            unique.push(piece);
        }
    }

    // Chain the pieces into loops; keep the one around the centre (else the largest).
    let mut used = vec![false; unique.len()];
    let mut best: Option<(bool, f32, Vec<Vec2>)> = None;
    while let Some(first) = used.iter().position(|u| !u) {
        used[first] = true;
        let mut ring = vec![unique[first].0];
        let mut end = unique[first].1;
        while end.distance(ring[0]) >= 1e-3 {
            let next = (0..unique.len())
                .filter(|&k| !used[k])
                .min_by(|&x, &y| {
                    unique[x]
                        .0
                        .distance(end)
                        .total_cmp(&unique[y].0.distance(end))
                })
                .filter(|&k| unique[k].0.distance(end) < 1e-2);
            let Some(k) = next else { break };
            used[k] = true;
            ring.push(unique[k].0);
            end = unique[k].1;
        }
        let area: f32 = (0..ring.len())
            .map(|i| ring[i].perp_dot(ring[(i + 1) % ring.len()]))
            .sum::<f32>()
            / 2.0;
        let around = rigplay::anie::skinning::polygon_contains(&ring, centre);
        if best
            .as_ref()
            .is_none_or(|(b_around, b_area, _)| (around, area) > (*b_around, *b_area))
        {
            best = Some((around, area, ring));
        }
    }
    let mut points = best.map(|(_, _, ring)| ring).unwrap_or_default();

    // Drop repeated points and points on straight runs.
    loop {
        let n = points.len();
        if n < 4 {
            break;
        }
        let straight = (0..n).find(|&i| {
            let (a, b, c) = (points[(i + n - 1) % n], points[i], points[(i + 1) % n]);
            let off_line = (c - a).perp_dot(b - a).abs() / (c - a).length().max(1e-12);
            a.distance(b) < 1e-4 || off_line < 1e-3 && (b - a).dot(c - b) >= 0.0
        });
        match straight {
            Some(i) => {
                points.remove(i);
            }
            None => break,
        }
    }
    // Start behind `start_angle`, then close the ring.
    let turn = |p: Vec2| {
        let d = p - centre;
        (d.y.atan2(d.x) - start_angle).rem_euclid(TAU)
    };
    if let Some(start) =
        (0..points.len()).min_by(|&x, &y| turn(points[x]).total_cmp(&turn(points[y])))
    {
        points.rotate_left(start);
        points.push(points[0]);
    }
    points
}

/// Bend range angles at a joint (§4.5 "Influence weights", `BendRange`): the directions of the
/// other bones at the joint, measured from `base` (radians). With none, the invalid default
/// (−1, 1); otherwise (the nearest direction turning positive, in (0, 2π]; the nearest turning
/// negative, in (−2π, 0]).
fn bend_range(base: f32, neighbours: &[f32]) -> [f32; 2] {
    if neighbours.is_empty() {
        return [-1.0, 1.0];
    }
    let rel: Vec<f32> = neighbours
        .iter()
        .map(|&d| {
            let r = (d - base).rem_euclid(TAU);
            if r == 0.0 { TAU } else { r }
        })
        .collect();
    let pos = rel.iter().copied().fold(f32::MAX, f32::min);
    let neg = rel.iter().copied().fold(f32::MIN, f32::max) - TAU;
    [pos, neg]
}

/// A skeleton for a Bone key: bones in DFS pre-order with their joints and ranges.
#[derive(Clone, Debug)]
pub struct Rig {
    pub bones: Vec<RigBone>,
}

impl Rig {
    /// The bone records of a Bone key (§3): local and world transforms at rest (`rotate` 0;
    /// a top bone's angle is 0), ranges, bindings, and the influence shapes the bone editor
    /// builds (Addendum 10, §4.5):
    /// * `radius = range + 0.3·max(range0.x, range1.x)` in both components;
    /// * the segment from the parent joint to the bone's joint, its unit vector, angle and
    ///   length;
    /// * the polygon: the bone's capsule with those radii, intersected with the union of every
    ///   bone's capsule with its plain ranges ([`capsule_polygon`]), as one closed polygon;
    ///   `bounding` is its bounding box;
    /// * bend ranges from the directions of the other bones at each joint: at the root joint
    ///   the parent's segment (pointing back) and the siblings, at the tail joint the
    ///   children: (the nearest turning positive, the nearest turning negative), measured
    ///   from the bone (at the tail, from the bone reversed); none → the invalid (−1, 1).
    ///
    /// Top bones have no segment, zero ranges and an invalid, empty shape.
    ///
    /// Checked against `bones.anie`, whose shapes AnimeEffects' bone tools made, for a
    /// straight chain; bend ranges with several bones at a joint are this function's choice.
    pub fn bones(&self) -> Vec<Bone> {
        let n = self.bones.len();
        for (i, b) in self.bones.iter().enumerate() {
            assert!(b.parent.is_none_or(|p| p < i), "bones in pre-order");
        }
        let seg = |i: usize| -> Option<(Vec2, Vec2)> {
            self.bones[i]
                .parent
                .map(|p| (self.bones[p].joint, self.bones[i].joint))
        };
        let range = |i: usize| -> Vec2 {
            if self.bones[i].parent.is_some() {
                self.bones[i].range
            } else {
                Vec2::ZERO
            }
        };
        let radius = |i: usize| -> Vec2 { range(i) + Vec2::splat(0.3 * range(i).x) };
        let capsules: Vec<Vec<Vec2>> = (0..n)
            .filter_map(|i| seg(i).map(|(s, e)| capsule_polygon(s, e, [range(i); 2])))
            .collect();
        let direction = |i: usize| -> f32 {
            let (s, e) = seg(i).expect("a bone with a segment");
            let d = e - s;
            d.y.atan2(d.x)
        };
        // World angles: a top bone's is 0; others point along their segment.
        let world_angle: Vec<f32> = (0..n)
            .map(|i| if seg(i).is_some() { direction(i) } else { 0.0 })
            .collect();
        let children = |i: usize| -> Vec<usize> {
            (0..n)
                .filter(|&c| self.bones[c].parent == Some(i))
                .collect()
        };
        (0..n)
            .map(|i| {
                let b = &self.bones[i];
                let (local_pos, local_angle) = match b.parent {
                    None => (b.joint, 0.0),
                    Some(p) => (
                        Vec2::new((b.joint - self.bones[p].joint).length(), 0.0),
                        signed_angle(world_angle[i] - world_angle[p]),
                    ),
                };
                let shape = match seg(i) {
                    None => BoneShape {
                        root_bend: [-1.0, 1.0],
                        tail_bend: [-1.0, 1.0],
                        ..BoneShape::default()
                    },
                    Some((start, end)) => {
                        let dir = end - start;
                        let angle = direction(i);
                        let parent = b.parent.expect("a segment has a parent");
                        let mut root_neighbours: Vec<f32> = children(parent)
                            .into_iter()
                            .filter(|&s| s != i)
                            .map(direction)
                            .collect();
                        if seg(parent).is_some() {
                            root_neighbours.push(direction(parent) + PI);
                        }
                        let tail_neighbours: Vec<f32> =
                            children(i).into_iter().map(direction).collect();
                        let own = capsule_polygon(start, end, [radius(i); 2]);
                        let polygon = clipped_union(&own, &capsules, (start + end) / 2.0, angle);
                        let (lo, hi) = bounds(&polygon);
                        BoneShape {
                            valid: true,
                            seg_start: start,
                            seg_dir: dir,
                            v_unit: dir.normalize(),
                            v_dir_angle: angle,
                            length: dir.length(),
                            radius: [radius(i); 2],
                            root_bend: bend_range(angle, &root_neighbours),
                            tail_bend: bend_range(angle + PI, &tail_neighbours),
                            bounding: FRect {
                                x: lo.x,
                                y: lo.y,
                                width: hi.x - lo.x,
                                height: hi.y - lo.y,
                            },
                            polygon,
                        }
                    }
                };
                Bone {
                    parent: b.parent,
                    children: children(i),
                    origin: None,
                    local_pos,
                    local_angle,
                    range: [range(i); 2],
                    shape,
                    binding_nodes: b.binds.clone(),
                    world_pos: b.joint,
                    world_angle: world_angle[i],
                    rotate: 0.0,
                }
            })
            .collect()
    }

    /// A Bone key at frame 0 for `owner`, with the key's caches (§3, §4.5, §4.6): one
    /// influence cache per layer under the owner that is not bound (in object order), holding
    /// `cacheInner` (the layer's local matrices up to the owner at frame 0), the frame stored
    /// as (−1, 0) as AnimeEffects does for frame 0 (Addendum 12), 32 as the bone limit, and
    /// every vertex's 8 influences computed from the shapes exactly as AnimeEffects recomputes
    /// them on load (§4.5 steps 1–5, [`vertex_influences`]); and one binding cache per bound
    /// node (bone DFS index, the node's matrix up to the owner). Layers must sit directly under
    /// the owner and be animated by no SRT keys of their own.
    pub fn bone_key(&self, scene: &Scene, owner: usize) -> TimeKey<BoneKey> {
        let bones = self.bones();
        let objects = &scene.project.objects;
        let bound: Vec<usize> = bones
            .iter()
            .flat_map(|b| b.binding_nodes.iter().copied())
            .collect();
        let weighing: Vec<(i32, &BoneShape)> = bones
            .iter()
            .enumerate()
            .take(rigplay::anie::skinning::MAX_PALETTE_BONES)
            .filter(|(_, b)| b.parent.is_some() && b.range != [Vec2::ZERO; 2])
            .map(|(i, b)| (i as i32, &b.shape))
            .collect();
        let mut caches = Vec::new();
        for &node in &objects[owner].children {
            let layer = &objects[node];
            let tl = &layer.timeline;
            assert!(
                tl.moves.keys.is_empty() && tl.rotates.keys.is_empty() && tl.scales.keys.is_empty(),
                "rig layers keep their rest transform"
            );
            if layer.kind != NodeKind::Layer || bound.contains(&node) {
                continue;
            }
            let inner = scene.rest_local(node);
            let mesh = scene.mesh(node);
            let origin = mesh.origin_offset;
            let (indices, weights) = mesh
                .positions
                .iter()
                .map(|p| {
                    let q = inner.transform_point2(p.truncate() + origin);
                    let inf = vertex_influences(weighing.iter().copied(), q);
                    (inf.bones, inf.weights)
                })
                .unzip();
            caches.push(BoneCache {
                node,
                inner_matrix: mat4(inner),
                obsolete: Vec2::ZERO,
                frame_sign: Frame {
                    value: -1,
                    milli: 0,
                },
                max_bone_count: 32,
                indices,
                weights,
            });
        }
        let binding_caches = bones
            .iter()
            .enumerate()
            .flat_map(|(i, b)| b.binding_nodes.iter().map(move |&n| (i, n)))
            .map(|(i, node)| BindingCache {
                node,
                bone_index: i as i32,
                inner_matrix: mat4(scene.rest_local(node)),
            })
            .collect();
        TimeKey::new(
            0,
            BoneKey {
                bones,
                cache_owner: Some(owner),
                caches,
                binding_caches,
            },
        )
    }

    /// A Pose key of the Bone key `bone_key`: copies of its bones (`origin` pointing at each),
    /// each turned by `rotate[i]` (radians; a top bone's is not applied and stored as 0), with
    /// the world transforms those turns give (§4.5, Addendum 13).
    pub fn pose(&self, bone_key: KeyRef, rotate: &[f32], easing: Easing) -> PoseKey {
        let rest = self.bones();
        assert_eq!(rotate.len(), rest.len(), "one rotation per bone");
        let joints: Vec<BoneJoint> = rest
            .iter()
            .zip(rotate)
            .map(|(b, &r)| BoneJoint {
                parent: b.parent,
                local_pos: b.local_pos,
                local_angle: b.local_angle,
                rotate: if b.parent.is_some() { r } else { 0.0 },
            })
            .collect();
        let world = bone_world_transforms(&joints);
        let bones = rest
            .into_iter()
            .enumerate()
            .map(|(i, b)| Bone {
                origin: Some(BoneRef {
                    key: bone_key,
                    bone: i,
                }),
                world_pos: world[i].pos,
                world_angle: world[i].angle,
                rotate: joints[i].rotate,
                ..b
            })
            .collect();
        PoseKey { easing, bones }
    }
}

/// A 2D affine matrix as the 4×4 matrix AnimeEffects stores (§1.1: z untouched).
pub fn mat4(m: Affine2) -> Mat4 {
    let a = m.matrix2;
    Mat4::from_cols(
        a.x_axis.extend(0.0).extend(0.0),
        a.y_axis.extend(0.0).extend(0.0),
        glam::Vec4::Z,
        m.translation.extend(0.0).extend(1.0),
    )
}
