//! The DFF reader: walks the chunk tree by sizes (§1.5) and decodes the chunks of §2–§4.

use super::{
    Atomic, BinMesh, Clump, DffFile, Frame, Geometry, HAnim, HAnimHierarchy, HAnimNode, Material,
    Mesh, MorphTarget, Skin, SkinLayout, Texture, Triangle,
};
use crate::animation::hierarchy::HierarchyFault;
use crate::formats::Bounds;
use crate::formats::bytes::decode_name;
use crate::formats::rw::{
    ChunkHeader, Payload, RwError, RwErrorKind, RwWarning, RwWarningKind, Walker, id,
};
use glam::{Mat3, Mat4, Vec3};

/// A DFF file and what the reader tolerated on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct DffRead {
    /// The model.
    pub file: DffFile,
    /// What the reader accepted but reports, in file order.
    pub warnings: Vec<RwWarning>,
}

impl DffFile {
    /// Reads a whole `.dff` file: every top-level Clump; UV animation dictionaries and other
    /// top-level chunks are skipped, trailing zero padding is accepted (§1.5).
    pub fn read(bytes: &[u8]) -> Result<DffRead, RwError> {
        let mut w = Walker::new(bytes);
        let mut dff = DffFile::default();
        let mut pos = 0;
        while bytes.len() - pos >= 12 {
            let head = &bytes[pos..pos + 8];
            if head.iter().all(|&b| b == 0) {
                break;
            }
            let c = w.header(pos, bytes.len())?;
            pos = c.end();
            match c.chunk_type {
                id::CLUMP => {
                    w.enter("Clump");
                    let clump = read_clump(&mut w, &c)?;
                    w.leave();
                    dff.clumps.push(clump);
                }
                id::UV_ANIM_DICTIONARY => {}
                _ => w.skip_unknown(&c),
            }
        }
        if pos < bytes.len() {
            let rest = &bytes[pos..];
            w.warn(
                pos,
                RwWarningKind::TrailingBytes {
                    count: rest.len() as u64,
                    all_zero: rest.iter().all(|&b| b == 0),
                },
            );
        }
        if dff.clumps.is_empty() {
            return Err(w.error(pos, RwErrorKind::MissingChunk { expected: "Clump" }));
        }
        Ok(DffRead {
            file: dff,
            warnings: w.warnings,
        })
    }
}

/// Geometry lists exist and atomics carry a geometry index from RW 3.4 on (§1.2).
const V_GEOMETRY_LIST: u32 = 0x30400;

fn read_clump(w: &mut Walker<'_>, clump: &ChunkHeader) -> Result<Clump, RwError> {
    let children = w.children(clump)?;
    let mut out = Clump {
        version: clump.version(),
        ..Clump::default()
    };
    let s = w.require(&children, id::STRUCT, clump.data(), "Clump Struct")?;
    w.enter("Struct");
    let mut p = w.payload(&s);
    let num_atomics = p.count_i32("atomic", 0)?;
    if s.version() > 0x33000 {
        p.i32("numLights")?;
        p.i32("numCameras")?;
    }
    w.check_consumed(&p);
    w.leave();

    let mut seen_struct = false;
    let mut atomics = Vec::new();
    for c in &children {
        match c.chunk_type {
            id::STRUCT if !seen_struct => seen_struct = true,
            // Struct(4) frame index before each light or camera (§4.3).
            id::STRUCT | id::CAMERA => {}
            id::LIGHT => out.num_lights += 1,
            id::FRAME_LIST => {
                w.enter("FrameList");
                out.frames = read_frame_list(w, c)?;
                w.leave();
            }
            id::GEOMETRY_LIST => {
                w.enter("GeometryList");
                out.geometries = read_geometry_list(w, c)?;
                w.leave();
            }
            id::ATOMIC => {
                w.enter(format!("Atomic[{}]", atomics.len()));
                let a = read_atomic(w, c, &mut out.geometries)?;
                w.leave();
                atomics.push((c.offset, a));
            }
            id::EXTENSION => {
                w.enter("Extension");
                skip_extension(w, c, &[id::COLLISION_MODEL, id::SAMP_COLLISION])?;
                w.leave();
            }
            _ => w.skip_unknown(c),
        }
    }
    if atomics.len() != num_atomics {
        w.warn(
            s.data(),
            RwWarningKind::CountMismatch {
                what: "atomics",
                declared: num_atomics as u64,
                found: atomics.len() as u64,
            },
        );
    }
    for (i, (at, a)) in atomics.into_iter().enumerate() {
        w.enter(format!("Atomic[{i}]"));
        if a.frame >= out.frames.len() {
            return Err(w.error(
                at,
                RwErrorKind::IndexOutOfRange {
                    what: "atomic frame index",
                    index: a.frame as i64,
                    limit: out.frames.len() as u64,
                },
            ));
        }
        if a.geometry >= out.geometries.len() {
            return Err(w.error(
                at,
                RwErrorKind::IndexOutOfRange {
                    what: "atomic geometry index",
                    index: a.geometry as i64,
                    limit: out.geometries.len() as u64,
                },
            ));
        }
        w.leave();
        out.atomics.push(a);
    }
    Ok(out)
}

/// Skips an Extension's children: the `known` types silently, others with a warning.
fn skip_extension(w: &mut Walker<'_>, ext: &ChunkHeader, known: &[u32]) -> Result<(), RwError> {
    for c in w.children(ext)? {
        if !known.contains(&c.chunk_type) {
            w.skip_unknown(&c);
        }
    }
    Ok(())
}

/// Bytes of one Frame List record (§2.1).
const FRAME_RECORD: u64 = 56;

fn read_frame_list(w: &mut Walker<'_>, list: &ChunkHeader) -> Result<Vec<Frame>, RwError> {
    let children = w.children(list)?;
    let s = w.require(&children, id::STRUCT, list.data(), "Frame List Struct")?;
    w.enter("Struct");
    let mut p = w.payload(&s);
    let n = p.count_i32("frame", FRAME_RECORD)?;
    let mut frames = Vec::with_capacity(n);
    let mut parent_at = Vec::with_capacity(n);
    for _ in 0..n {
        let right = Vec3::from_array(p.f32s("frame right")?);
        let up = Vec3::from_array(p.f32s("frame up")?);
        let at = Vec3::from_array(p.f32s("frame at")?);
        let position = Vec3::from_array(p.f32s("frame position")?);
        parent_at.push(p.pos());
        let parent = p.i32("frame parent")?;
        let flags = p.u32("frame flags")?;
        frames.push((
            parent,
            Frame {
                rotation: Mat3::from_cols(right, up, at),
                position,
                parent: None,
                flags,
                name: None,
                hanim: None,
            },
        ));
    }
    w.check_consumed(&p);
    // Parents: -1 or an index in range; no cycles.
    for (i, (parent, _)) in frames.iter().enumerate() {
        if *parent < -1 || *parent >= n as i32 {
            return Err(w.error(
                parent_at[i],
                RwErrorKind::IndexOutOfRange {
                    what: "frame parent",
                    index: i64::from(*parent),
                    limit: n as u64,
                },
            ));
        }
    }
    let mut frames: Vec<Frame> = frames
        .into_iter()
        .map(|(parent, mut f)| {
            f.parent = usize::try_from(parent).ok();
            f
        })
        .collect();
    // No cycles (the parents are in range, checked above).
    let parents: Vec<Option<usize>> = frames.iter().map(|f| f.parent).collect();
    if let Err(fault) = crate::animation::hierarchy::parents_first(&parents) {
        let (frame, kind) = match fault {
            HierarchyFault::Cycle { node } => (node, RwErrorKind::FrameCycle { frame: node }),
            HierarchyFault::ParentOutOfRange { node, parent } => (
                node,
                RwErrorKind::IndexOutOfRange {
                    what: "frame parent",
                    index: parent as i64,
                    limit: n as u64,
                },
            ),
        };
        return Err(w.error(parent_at[frame], kind));
    }
    w.leave();

    let mut next = 0;
    for c in children.iter().filter(|c| c.offset != s.offset) {
        match c.chunk_type {
            id::EXTENSION if next < n => {
                w.enter(format!("Extension[{next}]"));
                read_frame_extension(w, c, &mut frames[next])?;
                w.leave();
                next += 1;
            }
            id::EXTENSION => {
                next += 1;
            }
            _ => w.skip_unknown(c),
        }
    }
    if next != n {
        w.warn(
            list.offset,
            RwWarningKind::CountMismatch {
                what: "frame extensions",
                declared: n as u64,
                found: next as u64,
            },
        );
    }
    Ok(frames)
}

fn read_frame_extension(
    w: &mut Walker<'_>,
    ext: &ChunkHeader,
    frame: &mut Frame,
) -> Result<(), RwError> {
    for c in w.children(ext)? {
        match c.chunk_type {
            id::FRAME_NAME => {
                // The name's bytes, no NUL (§2.2); a NUL would end it.
                frame.name = Some(decode_name(&w.data[c.data()..c.end()]));
            }
            id::HANIM => {
                w.enter("HAnim");
                frame.hanim = Some(read_hanim(w, &c)?);
                w.leave();
            }
            _ => w.skip_unknown(&c),
        }
    }
    Ok(())
}

fn read_hanim(w: &mut Walker<'_>, c: &ChunkHeader) -> Result<HAnim, RwError> {
    let mut p = w.payload(c);
    let version = p.u32("HAnim version")?;
    let node_id = p.i32("HAnim node ID")?;
    let at = p.pos();
    let num_nodes = p.i32("HAnim numNodes")?;
    let hierarchy = if num_nodes > 0 {
        let flags = p.u32("HAnim hierarchy flags")?;
        let key_frame_size = p.i32("HAnim key frame size")?;
        let n = p.signed_count("HAnim node", num_nodes, at, 12)?;
        let mut nodes = Vec::with_capacity(n);
        for _ in 0..n {
            nodes.push(HAnimNode {
                id: p.i32("HAnim node ID")?,
                index: p.i32("HAnim node index")?,
                flags: p.u32("HAnim node flags")?,
            });
        }
        Some(HAnimHierarchy {
            flags,
            key_frame_size,
            nodes,
        })
    } else if num_nodes < 0 {
        return Err(p.error(
            at,
            RwErrorKind::Bounds(Bounds::NegativeCount {
                what: "HAnim node",
                value: num_nodes,
            }),
        ));
    } else {
        None
    };
    Ok(HAnim {
        version,
        node_id,
        hierarchy,
    })
}

fn read_geometry_list(w: &mut Walker<'_>, list: &ChunkHeader) -> Result<Vec<Geometry>, RwError> {
    let children = w.children(list)?;
    let s = w.require(&children, id::STRUCT, list.data(), "Geometry List Struct")?;
    w.enter("Struct");
    let mut p = w.payload(&s);
    let declared = p.count_i32("geometry", 0)?;
    w.check_consumed(&p);
    w.leave();
    let mut out = Vec::new();
    for c in children.iter().filter(|c| c.offset != s.offset) {
        match c.chunk_type {
            id::GEOMETRY => {
                w.enter(format!("Geometry[{}]", out.len()));
                out.push(read_geometry(w, c)?);
                w.leave();
            }
            _ => w.skip_unknown(c),
        }
    }
    if out.len() != declared {
        w.warn(
            s.data(),
            RwWarningKind::CountMismatch {
                what: "geometries",
                declared: declared as u64,
                found: out.len() as u64,
            },
        );
    }
    Ok(out)
}

/// The number of UV sets of a format word (§3.2).
fn tex_sets(flags: u32) -> u32 {
    match (flags >> 16) & 0xFF {
        0 if flags & Geometry::TEXTURED != 0 => 1,
        0 if flags & Geometry::TEXTURED2 != 0 => 2,
        n => n,
    }
}

fn vec3s(p: &mut Payload<'_>, n: usize, what: &'static str) -> Result<Vec<Vec3>, RwError> {
    p.check(what, n as u64, 12)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(Vec3::from_array(p.f32s(what)?));
    }
    Ok(out)
}

fn read_geometry(w: &mut Walker<'_>, geo: &ChunkHeader) -> Result<Geometry, RwError> {
    let children = w.children(geo)?;
    let s = w.require(&children, id::STRUCT, geo.data(), "Geometry Struct")?;
    w.enter("Struct");
    let mut p = w.payload(&s);
    let flags = p.u32("geometry format")?;
    let tri_at = p.pos();
    let num_tris = p.i32("numTriangles")?;
    let vert_at = p.pos();
    let num_verts = p.i32("numVertices")?;
    let morph_at = p.pos();
    let num_morphs = p.i32("numMorphTargets")?;
    let surface = if s.version() < 0x34000 {
        Some(p.f32s("geometry surface properties")?)
    } else {
        None
    };
    if flags & Geometry::NATIVE != 0 {
        return Err(p.error(
            s.data(),
            RwErrorKind::UnsupportedPlatform {
                what: "native geometry (console DFF)",
                value: flags,
            },
        ));
    }
    if num_verts < 0 {
        return Err(p.error(
            vert_at,
            RwErrorKind::Bounds(Bounds::NegativeCount {
                what: "vertex",
                value: num_verts,
            }),
        ));
    }
    let nv = num_verts as usize;
    let mut g = Geometry {
        flags,
        surface,
        num_vertices: nv,
        ..Geometry::default()
    };
    if flags & Geometry::PRELIT != 0 {
        p.check("prelit colour", nv as u64, 4)?;
        let mut v = Vec::with_capacity(nv);
        for _ in 0..nv {
            v.push(p.array::<4>("prelit colour")?);
        }
        g.prelit = Some(v);
    }
    let sets = tex_sets(flags);
    if sets > 8 {
        return Err(p.error(s.data(), RwErrorKind::TooManyUvSets { count: sets }));
    }
    for _ in 0..sets {
        p.check("UV", nv as u64, 8)?;
        let mut v = Vec::with_capacity(nv);
        for _ in 0..nv {
            v.push(p.f32s::<2>("UV")?);
        }
        g.uv_sets.push(v);
    }
    let nt = p.signed_count("triangle", num_tris, tri_at, 8)?;
    g.triangles.reserve_exact(nt);
    for _ in 0..nt {
        let at = p.pos();
        let b = p.u16("triangle")?;
        let a = p.u16("triangle")?;
        let material = p.u16("triangle")?;
        let c = p.u16("triangle")?;
        for v in [a, b, c] {
            if usize::from(v) >= nv {
                return Err(p.error(
                    at,
                    RwErrorKind::IndexOutOfRange {
                        what: "triangle vertex index",
                        index: i64::from(v),
                        limit: nv as u64,
                    },
                ));
            }
        }
        g.triangles.push(Triangle {
            vertices: [a, b, c],
            material,
        });
    }
    let nm = p.signed_count("morph target", num_morphs, morph_at, 24)?;
    for _ in 0..nm {
        let sphere = p.f32s("bounding sphere")?;
        let has_positions = p.u32("hasVertices")? != 0;
        let has_normals = p.u32("hasNormals")? != 0;
        let positions = if has_positions {
            Some(vec3s(&mut p, nv, "position")?)
        } else {
            None
        };
        let normals = if has_normals {
            Some(vec3s(&mut p, nv, "normal")?)
        } else {
            None
        };
        g.morph_targets.push(MorphTarget {
            sphere,
            positions,
            normals,
        });
    }
    w.check_consumed(&p);
    w.leave();

    let mut material_list_at = None;
    for c in children.iter().filter(|c| c.offset != s.offset) {
        match c.chunk_type {
            id::MATERIAL_LIST if material_list_at.is_none() => {
                material_list_at = Some(c.offset);
                w.enter("MaterialList");
                g.materials = read_material_list(w, c)?;
                w.leave();
            }
            id::EXTENSION => {
                w.enter("Extension");
                read_geometry_extension(w, c, &mut g)?;
                w.leave();
            }
            _ => w.skip_unknown(c),
        }
    }
    let nmat = g.materials.len();
    let bad_material = g
        .triangles
        .iter()
        .map(|t| u64::from(t.material))
        .chain(
            g.bin_mesh
                .iter()
                .flat_map(|b| b.meshes.iter().map(|m| u64::from(m.material))),
        )
        .find(|&m| m >= nmat as u64);
    if let Some(m) = bad_material {
        return Err(w.error(
            material_list_at.unwrap_or(geo.offset),
            RwErrorKind::IndexOutOfRange {
                what: "material index",
                index: m as i64,
                limit: nmat as u64,
            },
        ));
    }
    Ok(g)
}

fn read_material_list(w: &mut Walker<'_>, list: &ChunkHeader) -> Result<Vec<Material>, RwError> {
    let children = w.children(list)?;
    let s = w.require(&children, id::STRUCT, list.data(), "Material List Struct")?;
    w.enter("Struct");
    let mut p = w.payload(&s);
    let n = p.count_i32("material", 4)?;
    let mut indices = Vec::with_capacity(n);
    for _ in 0..n {
        indices.push((p.pos(), p.i32("material index")?));
    }
    w.check_consumed(&p);
    w.leave();
    let mut chunks = children
        .iter()
        .filter(|c| c.chunk_type == id::MATERIAL && c.offset != s.offset);
    let mut out: Vec<Material> = Vec::with_capacity(n);
    for (i, (at, index)) in indices.into_iter().enumerate() {
        if index < 0 {
            let Some(c) = chunks.next() else {
                return Err(w.error(
                    list.end(),
                    RwErrorKind::MissingChunk {
                        expected: "Material",
                    },
                ));
            };
            w.enter(format!("Material[{i}]"));
            out.push(read_material(w, c)?);
            w.leave();
        } else {
            // Reuse of an earlier material (§3.3).
            let Some(m) = out.get(index as usize).cloned() else {
                return Err(w.error(
                    at,
                    RwErrorKind::IndexOutOfRange {
                        what: "reused material index",
                        index: i64::from(index),
                        limit: out.len() as u64,
                    },
                ));
            };
            out.push(m);
        }
    }
    for c in children
        .iter()
        .filter(|c| c.chunk_type != id::MATERIAL && c.offset != s.offset)
    {
        w.skip_unknown(c);
    }
    Ok(out)
}

fn read_material(w: &mut Walker<'_>, mat: &ChunkHeader) -> Result<Material, RwError> {
    let children = w.children(mat)?;
    let s = w.require(&children, id::STRUCT, mat.data(), "Material Struct")?;
    w.enter("Struct");
    let mut p = w.payload(&s);
    let flags = p.u32("material flags")?;
    let colour = p.array::<4>("material colour")?;
    p.i32("material unused word")?;
    let textured = p.u32("material textured")? != 0;
    let surface = if s.version() >= V_GEOMETRY_LIST {
        Some(p.f32s("material surface properties")?)
    } else {
        None
    };
    w.check_consumed(&p);
    w.leave();
    let mut texture = None;
    for c in children.iter().filter(|c| c.offset != s.offset) {
        match c.chunk_type {
            id::TEXTURE if textured && texture.is_none() => {
                w.enter("Texture");
                texture = Some(read_texture(w, c)?);
                w.leave();
            }
            id::EXTENSION => {
                w.enter("Extension");
                skip_extension(
                    w,
                    c,
                    &[
                        id::MATFX,
                        id::REFLECTION_MATERIAL,
                        id::SPECULAR_MATERIAL,
                        id::UV_ANIM,
                        id::RIGHT_TO_RENDER,
                    ],
                )?;
                w.leave();
            }
            _ => w.skip_unknown(c),
        }
    }
    if textured && texture.is_none() {
        return Err(w.error(
            mat.end(),
            RwErrorKind::MissingChunk {
                expected: "Texture",
            },
        ));
    }
    Ok(Material {
        flags,
        colour,
        surface,
        texture,
    })
}

fn read_texture(w: &mut Walker<'_>, tex: &ChunkHeader) -> Result<Texture, RwError> {
    let children = w.children(tex)?;
    let s = w.require(&children, id::STRUCT, tex.data(), "Texture Struct")?;
    w.enter("Struct");
    let mut p = w.payload(&s);
    let filter_addressing = p.u32("texture filter/addressing")?;
    w.check_consumed(&p);
    w.leave();
    let mut strings = children.iter().filter(|c| c.chunk_type == id::STRING);
    let mut string = |w: &Walker<'_>| match strings.next() {
        // Cut at the first NUL: bytes after it can be garbage (§3.5).
        Some(c) => Ok(decode_name(&w.data[c.data()..c.end()])),
        None => Err(w.error(tex.end(), RwErrorKind::MissingChunk { expected: "String" })),
    };
    let name = string(w)?;
    let mask = string(w)?;
    for c in children
        .iter()
        .filter(|c| !matches!(c.chunk_type, id::STRUCT | id::STRING | id::EXTENSION))
    {
        w.skip_unknown(c);
    }
    Ok(Texture {
        filter_addressing,
        name,
        mask,
    })
}

fn read_geometry_extension(
    w: &mut Walker<'_>,
    ext: &ChunkHeader,
    g: &mut Geometry,
) -> Result<(), RwError> {
    for c in w.children(ext)? {
        match c.chunk_type {
            id::BIN_MESH => {
                w.enter("BinMesh");
                g.bin_mesh = Some(read_bin_mesh(w, &c, g.num_vertices)?);
                w.leave();
            }
            id::SKIN => {
                w.enter("Skin");
                g.skin = Some(read_skin(w, &c, g.num_vertices)?);
                w.leave();
            }
            id::NATIVE_DATA => {
                w.enter("NativeData");
                return Err(w.error(
                    c.offset,
                    RwErrorKind::UnsupportedPlatform {
                        what: "Native Data PLG (console DFF)",
                        value: c.chunk_type,
                    },
                ));
            }
            id::MORPH
            | id::EFFECT_2D
            | id::EXTRA_VERT_COLOUR
            | id::BREAKABLE
            | id::RIGHT_TO_RENDER => {}
            _ => w.skip_unknown(&c),
        }
    }
    Ok(())
}

fn read_bin_mesh(w: &mut Walker<'_>, c: &ChunkHeader, nv: usize) -> Result<BinMesh, RwError> {
    let mut p = w.payload(c);
    let flags = p.u32("Bin Mesh flags")?;
    let num_meshes = p.u32("Bin Mesh numMeshes")?;
    let total = p.u32("Bin Mesh totalIndices")?;
    let n = p.check("Bin Mesh mesh", u64::from(num_meshes), 8)?;
    let mut meshes = Vec::with_capacity(n);
    let mut sum = 0u64;
    for _ in 0..n {
        let count = p.u32("Bin Mesh numIndices")?;
        let material = p.u32("Bin Mesh material index")?;
        let k = p.check("Bin Mesh index", u64::from(count), 4)?;
        let mut indices = Vec::with_capacity(k);
        for _ in 0..k {
            let at = p.pos();
            let i = p.u32("Bin Mesh index")?;
            if i as usize >= nv {
                return Err(p.error(
                    at,
                    RwErrorKind::IndexOutOfRange {
                        what: "Bin Mesh vertex index",
                        index: i64::from(i),
                        limit: nv as u64,
                    },
                ));
            }
            indices.push(i);
        }
        sum += u64::from(count);
        meshes.push(Mesh { material, indices });
    }
    if sum != u64::from(total) {
        w.warn(
            c.data() + 8,
            RwWarningKind::CountMismatch {
                what: "Bin Mesh totalIndices",
                declared: u64::from(total),
                found: sum,
            },
        );
    }
    w.check_consumed(&p);
    Ok(BinMesh {
        strips: flags & 1 != 0,
        meshes,
    })
}

/// The marker before each matrix of the old skin layout (§3.6).
const DEADDEAD: u32 = 0xDEAD_DEAD;

fn read_skin(w: &mut Walker<'_>, c: &ChunkHeader, nv: usize) -> Result<Skin, RwError> {
    let mut p = w.payload(c);
    let num_bones = usize::from(p.u8("Skin numBones")?);
    let num_used = usize::from(p.u8("Skin numUsedBones")?);
    let max_weights = p.u8("Skin maxWeightsPerVertex")?;
    p.u8("Skin padding")?;
    // Old layout: no used-bones list, decided by the data (§3.6).
    let layout = if num_used == 0 {
        SkinLayout::Old
    } else {
        SkinLayout::New
    };
    let used_bones = p.take(num_used, "Skin used bones")?.to_vec();
    p.check("Skin vertex", nv as u64, 20)?;
    let mut bone_indices = Vec::with_capacity(nv);
    for _ in 0..nv {
        bone_indices.push(p.array::<4>("Skin bone indices")?);
    }
    let mut weights = Vec::with_capacity(nv);
    for _ in 0..nv {
        weights.push(p.f32s::<4>("Skin weights")?);
    }
    for (v, (ix, wt)) in bone_indices.iter().zip(&weights).enumerate() {
        for j in 0..4 {
            if wt[j] != 0.0 && usize::from(ix[j]) >= num_bones {
                return Err(p.error(
                    c.data() + 4 + num_used + 4 * v + j,
                    RwErrorKind::IndexOutOfRange {
                        what: "Skin bone index",
                        index: i64::from(ix[j]),
                        limit: num_bones as u64,
                    },
                ));
            }
        }
    }
    let each = match layout {
        SkinLayout::Old => 68,
        SkinLayout::New => 64,
    };
    p.check("Skin bone matrix", num_bones as u64, each)?;
    let mut inverse_bind = Vec::with_capacity(num_bones);
    for _ in 0..num_bones {
        if layout == SkinLayout::Old {
            let at = p.pos();
            if p.u32("Skin matrix marker")? != DEADDEAD {
                w.warn(
                    at,
                    RwWarningKind::Ignored {
                        what: "old skin matrix marker other than 0xDEADDEAD",
                    },
                );
            }
        }
        let m = p.f32s::<16>("Skin inverse bind matrix")?;
        // Rows right, up, at, pos of a row-vector matrix = columns here; the 4th element
        // of each is junk (§3.6, §6.2).
        inverse_bind.push(Mat4::from_cols_array(&[
            m[0], m[1], m[2], 0.0, m[4], m[5], m[6], 0.0, m[8], m[9], m[10], 0.0, m[12], m[13],
            m[14], 1.0,
        ]));
    }
    let split = if layout == SkinLayout::New {
        Some([
            p.u32("Skin boneLimit")?,
            p.u32("Skin numMeshes")?,
            p.u32("Skin numRLE")?,
        ])
    } else {
        None
    };
    // The remap tables after the split header are not used; resynchronised at the chunk end.
    let needs_remap = split.is_some_and(|s| s[1] > 0);
    if !needs_remap {
        w.check_consumed(&p);
    }
    Ok(Skin {
        layout,
        num_bones,
        used_bones,
        max_weights,
        bone_indices,
        weights,
        inverse_bind,
        split,
    })
}

fn read_atomic(
    w: &mut Walker<'_>,
    atomic: &ChunkHeader,
    geometries: &mut Vec<Geometry>,
) -> Result<Atomic, RwError> {
    let children = w.children(atomic)?;
    let s = w.require(&children, id::STRUCT, atomic.data(), "Atomic Struct")?;
    w.enter("Struct");
    let mut p = w.payload(&s);
    let frame_at = p.pos();
    let frame = p.i32("atomic frame index")?;
    let has_index = s.version() >= V_GEOMETRY_LIST;
    let geo_at = p.pos();
    let geometry = if has_index {
        Some(p.i32("atomic geometry index")?)
    } else {
        None
    };
    let flags = p.u32("atomic flags")?;
    p.u32("atomic unused word")?;
    w.check_consumed(&p);
    for (what, value, at) in [("atomic frame index", frame, frame_at)]
        .into_iter()
        .chain(geometry.map(|g| ("atomic geometry index", g, geo_at)))
    {
        if value < 0 {
            return Err(w.error(
                at,
                RwErrorKind::IndexOutOfRange {
                    what,
                    index: i64::from(value),
                    limit: 0,
                },
            ));
        }
    }
    w.leave();
    let mut a = Atomic {
        frame: frame as usize,
        geometry: geometry.map_or(usize::MAX, |g| g as usize),
        flags,
        right_to_render: None,
    };
    for c in children.iter().filter(|c| c.offset != s.offset) {
        match c.chunk_type {
            // Before RW 3.4 the atomic nests its geometry (§1.2).
            id::GEOMETRY if geometry.is_none() => {
                w.enter("Geometry");
                let g = read_geometry(w, c)?;
                w.leave();
                a.geometry = geometries.len();
                geometries.push(g);
            }
            id::EXTENSION => {
                w.enter("Extension");
                for e in w.children(c)? {
                    match e.chunk_type {
                        id::RIGHT_TO_RENDER => {
                            w.enter("RightToRender");
                            let mut p = w.payload(&e);
                            a.right_to_render =
                                Some((p.u32("RTR plugin ID")?, p.u32("RTR extra data")?));
                            w.leave();
                        }
                        id::MATFX | id::PIPELINE_SET => {}
                        id::SKIN => w.warn(
                            e.offset,
                            RwWarningKind::Ignored {
                                what: "legacy Skin PLG on an atomic",
                            },
                        ),
                        _ => w.skip_unknown(&e),
                    }
                }
                w.leave();
            }
            _ => w.skip_unknown(c),
        }
    }
    Ok(a)
}
