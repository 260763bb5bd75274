//! The `.anie` reader: walks the blocks by their u64 lengths (each block is a window the
//! content cannot read past, and must fill exactly), reads trees iteratively with a depth
//! bound, checks every count against the bytes left before allocating, then resolves the file's
//! IDs into indices in a second pass (§1.6).
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use super::error::{AnieError, AnieErrorKind, AnieWarning, AnieWarningKind, Location};
use super::packbits::packbits_decode;
use super::records::{ENDIAN, FileHeader, GLBL, GLBL_LENGTH, GlobalBlock, MAGIC, MAJOR, block};
use super::*;
use crate::formats::Bounds;
use crate::formats::bytes::{ByteReader, CountTooLarge, Short};
use glam::{Mat4, Vec2, Vec3};
use std::collections::HashMap;

/// [`AnieFile::read`].
pub(super) fn read(bytes: &[u8]) -> Result<AnieRead> {
    let mut p = Parser {
        data: bytes,
        r: ByteReader::new(bytes),
        block_name: None,
        bound_order: Vec::new(),
        version: AnieVersion::V0_8,
        warnings: Vec::new(),
        spot: Spot::default(),
        ids: HashMap::new(),
        pending: Vec::new(),
        project: AnieFile::default(),
    };
    p.file()?;
    p.resolve()?;
    Ok(AnieRead {
        file: p.project,
        version: p.version,
        warnings: p.warnings,
    })
}

type Result<T> = std::result::Result<T, AnieError>;

// Smallest encodings, used to bound counts before anything is allocated from them.
const BLOCK_HEAD: u64 = 16;
const MIN_IMAGE: u64 = 12;
const MIN_RES_NODE: u64 = BLOCK_HEAD + 4 + 4 + 4 + 4 + 16 + 4 + MIN_IMAGE;
const MIN_RES_TREE: u64 = 4 + MIN_RES_NODE;
const MIN_OBJ_NODE: u64 = BLOCK_HEAD + 12 + BLOCK_HEAD + 4 + 12 + 16 + BLOCK_HEAD + 4;
const MIN_MAP: u64 = BLOCK_HEAD + 4 + 4 + 4;
const MIN_BONE: u64 = 4 + 4 + 4 + 8 + 4 + 16 + (4 + 24 + 8 + 16 + 16 + 16 + 4) + 4 + 8 + 4 + 4;
const MIN_CACHE: u64 = 4 + 64 + 8 + 8 + 4 + 4;
const CACHE_VERTEX: u64 = 4 * 16;
const BINDING_CACHE: u64 = 4 + 4 + 64;
const GRID_VERTEX: u64 = 12 + 12 + 8 + 12 + 24;

/// Where the parser is, as indices (names are looked up only for an error or a warning).
#[derive(Debug, Clone, Copy, Default)]
struct Spot {
    node: Option<usize>,
    resource: Option<(usize, usize)>,
    map: Option<KeyKind>,
    key: Option<i32>,
    bone: Option<usize>,
}

/// What a bind ID names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Resource(ResourceRef),
    Object(usize),
    Key(KeyRef),
    Bone(BoneRef),
}

impl Target {
    fn what(self) -> &'static str {
        match self {
            Target::Resource(_) => "resource node",
            Target::Object(_) => "object node",
            Target::Key(_) => "time key",
            Target::Bone(_) => "bone",
        }
    }
}

/// Where a resolved reference goes.
#[derive(Debug, Clone, Copy)]
enum Dest {
    ImageResource(KeyRef),
    KeyChild(KeyRef),
    BoneOrigin(BoneRef),
    BoneBinding(BoneRef),
    CacheOwner(KeyRef),
    CacheNode(KeyRef, usize),
    BindingCacheNode(KeyRef, usize),
}

impl Dest {
    fn referrer(self) -> &'static str {
        match self {
            Dest::ImageResource(_) => "image key resource",
            Dest::KeyChild(_) => "key child",
            Dest::BoneOrigin(_) => "pose bone origin",
            Dest::BoneBinding(_) => "bone binding node",
            Dest::CacheOwner(_) => "bone key cache owner",
            Dest::CacheNode(..) => "bone key cache node",
            Dest::BindingCacheNode(..) => "bone key binding cache node",
        }
    }

    fn remap(&mut self, f: &impl Fn(KeyRef) -> KeyRef) {
        match self {
            Dest::ImageResource(k)
            | Dest::KeyChild(k)
            | Dest::CacheOwner(k)
            | Dest::CacheNode(k, _)
            | Dest::BindingCacheNode(k, _) => *k = f(*k),
            Dest::BoneOrigin(b) | Dest::BoneBinding(b) => b.key = f(b.key),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    id: i32,
    offset: usize,
    spot: Spot,
    dest: Dest,
}

#[derive(Debug, Clone, Copy)]
struct Bound {
    target: Target,
    offset: usize,
}

struct Parser<'a> {
    data: &'a [u8],
    /// Reads the current window: the file, or `data[..end]` of the innermost block.
    r: ByteReader<'a>,
    /// The innermost block's name, for error messages.
    block_name: Option<&'static str>,
    /// Every bind ID in file order (a key map re-sorts the tail it bound).
    bound_order: Vec<i32>,
    version: AnieVersion,
    warnings: Vec<AnieWarning>,
    spot: Spot,
    ids: HashMap<i32, Bound>,
    pending: Vec<Pending>,
    project: AnieFile,
}

impl<'a> Parser<'a> {
    // ---- errors and warnings ----

    fn location(&self, spot: Spot) -> Location {
        Location {
            node: spot.node.map(|i| {
                let name = self.project.objects.get(i).map(|n| n.name.clone());
                (i, name.unwrap_or_default())
            }),
            resource: spot.resource.map(|(t, n)| {
                let name = self
                    .project
                    .resources
                    .get(t)
                    .and_then(|tree| tree.nodes.get(n));
                (t, n, name.map(|n| n.identifier.clone()).unwrap_or_default())
            }),
            map: spot.map,
            key: spot.key,
            bone: spot.bone,
        }
    }

    fn error_at(&self, offset: usize, spot: Spot, kind: AnieErrorKind) -> AnieError {
        AnieError {
            offset: offset as u64,
            location: Box::new(self.location(spot)),
            kind,
        }
    }

    fn error(&self, offset: usize, kind: AnieErrorKind) -> AnieError {
        self.error_at(offset, self.spot, kind)
    }

    fn warn_at(&mut self, offset: usize, spot: Spot, kind: AnieWarningKind) {
        let location = self.location(spot);
        self.warnings.push(AnieWarning {
            offset: offset as u64,
            location,
            kind,
        });
    }

    fn warn(&mut self, offset: usize, kind: AnieWarningKind) {
        self.warn_at(offset, self.spot, kind);
    }

    fn truncated(&self, s: Short, expected: &'static str) -> AnieError {
        AnieError {
            offset: s.offset,
            location: Box::new(self.location(self.spot)),
            kind: AnieErrorKind::Bounds(Bounds::truncated(
                expected,
                &s,
                if self.r.len() < self.data.len() {
                    self.block_name
                } else {
                    None
                },
            )),
        }
    }

    // ---- primitives (§1.1) ----

    fn take(&mut self, n: u64, expected: &'static str) -> Result<&'a [u8]> {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        self.r.take(n).map_err(|s| self.truncated(s, expected))
    }

    fn array<const N: usize>(&mut self, expected: &'static str) -> Result<[u8; N]> {
        self.r.array::<N>().map_err(|s| self.truncated(s, expected))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn i32(&mut self, what: &'static str) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A `bool`: a u32, any non-zero value is true.
    fn bool(&mut self, what: &'static str) -> Result<bool> {
        Ok(self.u32(what)? != 0)
    }

    /// An f32 that must be finite.
    fn f32(&mut self, what: &'static str) -> Result<f32> {
        let at = self.r.pos();
        let v = f32::from_le_bytes(self.array(what)?);
        if !v.is_finite() {
            return Err(self.error(
                at,
                AnieErrorKind::NotFinite {
                    field: what,
                    value: v,
                },
            ));
        }
        Ok(v)
    }

    fn vec2(&mut self, what: &'static str) -> Result<Vec2> {
        Ok(Vec2::new(self.f32(what)?, self.f32(what)?))
    }

    fn vec3(&mut self, what: &'static str) -> Result<Vec3> {
        Ok(Vec3::new(self.f32(what)?, self.f32(what)?, self.f32(what)?))
    }

    fn mat4(&mut self, what: &'static str) -> Result<Mat4> {
        let mut cols = [0.0; 16];
        for v in &mut cols {
            *v = self.f32(what)?;
        }
        Ok(Mat4::from_cols_array(&cols))
    }

    fn irect(&mut self, what: &'static str) -> Result<IRect> {
        Ok(IRect {
            x: self.i32(what)?,
            y: self.i32(what)?,
            width: self.i32(what)?,
            height: self.i32(what)?,
        })
    }

    fn frect(&mut self, what: &'static str) -> Result<FRect> {
        Ok(FRect {
            x: self.f32(what)?,
            y: self.f32(what)?,
            width: self.f32(what)?,
            height: self.f32(what)?,
        })
    }

    /// A `QString`: UTF-8 bytes, NUL, zero padding until (len + 1) is a multiple of 4.
    fn string(&mut self, what: &'static str) -> Result<String> {
        let at = self.r.pos();
        let rest = self.r.clone().take(self.r.remaining()).unwrap_or(&[]);
        let Some(len) = rest.iter().position(|&b| b == 0) else {
            return Err(self.error(at, AnieErrorKind::UnterminatedString { what }));
        };
        let bytes = self.take(len as u64 + 1, what)?;
        self.take(((4 - (len + 1) % 4) % 4) as u64, "string padding")?;
        match String::from_utf8(bytes[..len].to_vec()) {
            Ok(s) => Ok(s),
            Err(e) => {
                self.warn(at, AnieWarningKind::InvalidUtf8 { what });
                Ok(String::from_utf8_lossy(e.as_bytes()).into_owned())
            }
        }
    }

    fn blend_mode(&mut self) -> Result<BlendMode> {
        let at = self.r.pos();
        let id = self.array::<4>("blend mode id")?;
        BlendMode::from_id(id).ok_or_else(|| {
            self.error(
                at,
                AnieErrorKind::UnknownBlendMode {
                    found: String::from_utf8_lossy(&id).into_owned(),
                },
            )
        })
    }

    /// Checks that `count` items of at least `min_each` bytes fit in the current window.
    fn check(&self, count: u64, min_each: u64, what: &'static str) -> Result<usize> {
        self.r
            .check_count(count, min_each)
            .map_err(|c: CountTooLarge| AnieError {
                offset: c.offset,
                location: Box::new(self.location(self.spot)),
                kind: AnieErrorKind::Bounds(Bounds::count_too_large(what, &c)),
            })
    }

    /// An i32 count, non-negative, checked against the window.
    fn count(&mut self, what: &'static str, min_each: u64) -> Result<usize> {
        let at = self.r.pos();
        let v = self.i32(what)?;
        if v < 0 {
            return Err(self.error(
                at,
                AnieErrorKind::Bounds(Bounds::NegativeCount { what, value: v }),
            ));
        }
        self.check(v as u64, min_each, what)
    }

    fn invalid(
        &self,
        at: usize,
        field: &'static str,
        value: i64,
        expected: &'static str,
    ) -> AnieError {
        self.error(
            at,
            AnieErrorKind::InvalidValue {
                field,
                value,
                expected,
            },
        )
    }

    // ---- blocks (§1.4) ----

    /// Runs `f` inside a window that ends `length` bytes on, and requires it to end exactly
    /// there.
    fn window<T>(
        &mut self,
        length: u64,
        name: &'static str,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let start = self.r.pos();
        if length > self.r.remaining() as u64 {
            return Err(self.error(
                start,
                AnieErrorKind::BlockTooLong {
                    block: name,
                    length,
                    available: self.r.remaining() as u64,
                },
            ));
        }
        let end = start + length as usize;
        let mut inner = ByteReader::new(&self.data[..end]);
        // `start` ≤ `end` ≤ the data's length, checked above.
        let _ = inner.seek(start);
        let outer = std::mem::replace(&mut self.r, inner);
        let outer_block = self.block_name.replace(name);
        let out = f(self);
        let content_end = self.r.pos();
        self.r = outer;
        self.block_name = outer_block;
        let out = out?;
        if content_end != end {
            return Err(self.error(
                content_end,
                AnieErrorKind::BlockLengthMismatch {
                    block: name,
                    declared_end: end as u64,
                    content_end: content_end as u64,
                },
            ));
        }
        // Inside the outer window: checked against its remaining bytes above.
        let _ = self.r.seek(end);
        Ok(out)
    }

    /// A generic block: 8-byte signature, u64 length, content.
    fn block<T>(
        &mut self,
        signature: &'static str,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let at = self.r.pos();
        let sig = self.array::<8>(signature)?;
        if sig != signature.as_bytes() {
            return Err(self.error(
                at,
                AnieErrorKind::BadSignature {
                    expected: signature,
                    found: String::from_utf8_lossy(&sig).into_owned(),
                },
            ));
        }
        let length = self.u64(signature)?;
        self.window(length, signature, f)
    }

    /// A pre-order tree: `roots` top nodes, each read by `node(self, parent, index)`, which
    /// returns its child count; the children follow it.
    fn preorder(
        &mut self,
        roots: usize,
        min_node: u64,
        what: &'static str,
        mut node: impl FnMut(&mut Self, Option<usize>, usize) -> Result<usize>,
    ) -> Result<()> {
        // (parent index, children still to read)
        let mut stack: Vec<(usize, usize)> = Vec::new();
        let mut roots_left = roots;
        let mut index = 0;
        loop {
            let parent = loop {
                match stack.last_mut() {
                    Some((p, left)) if *left > 0 => {
                        *left -= 1;
                        break Some(*p);
                    }
                    Some(_) => {
                        stack.pop();
                    }
                    None => break None,
                }
            };
            if parent.is_none() {
                if roots_left == 0 {
                    return Ok(());
                }
                roots_left -= 1;
            }
            if stack.len() >= MAX_TREE_DEPTH {
                return Err(self.error(
                    self.r.pos(),
                    AnieErrorKind::TreeTooDeep {
                        max: MAX_TREE_DEPTH,
                    },
                ));
            }
            let children = node(self, parent, index)?;
            self.check(children as u64, min_node, what)?;
            if children > 0 {
                stack.push((index, children));
            }
            index += 1;
        }
    }

    // ---- IDs (§1.6) ----

    fn bind(&mut self, target: Target) -> Result<i32> {
        let at = self.r.pos();
        let id = self.i32("bind ID")?;
        if id <= 0 {
            return Err(self.error(at, AnieErrorKind::BadBindId { id }));
        }
        if let Some(first) = self.ids.get(&id) {
            return Err(self.error(
                at,
                AnieErrorKind::DuplicateId {
                    id,
                    first_offset: first.offset as u64,
                },
            ));
        }
        self.ids.insert(id, Bound { target, offset: at });
        self.bound_order.push(id);
        Ok(id)
    }

    /// Reads a reference ID and queues it for pass 2, ID 0 included: `resolve` decides whether
    /// the destination allows none. Returns the ID.
    fn reference(&mut self, dest: Dest, what: &'static str) -> Result<i32> {
        let offset = self.r.pos();
        let id = self.i32(what)?;
        self.pending.push(Pending {
            id,
            offset,
            spot: self.spot,
            dest,
        });
        Ok(id)
    }

    // ---- the file ----

    fn file(&mut self) -> Result<()> {
        let h: FileHeader = self
            .r
            .record()
            .map_err(|s| self.truncated(s, "32-byte file header"))?;
        if h.magic != MAGIC {
            return Err(self.error(
                0,
                AnieErrorKind::NotAnie {
                    found: String::from_utf8_lossy(&h.magic).into_owned(),
                },
            ));
        }
        if h.endian != ENDIAN {
            return Err(self.error(6, AnieErrorKind::BadEndianMarker { found: h.endian }));
        }
        self.version = match (h.major, AnieVersion::from_minor(h.minor)) {
            (MAJOR, Some(v)) => v,
            _ => {
                return Err(self.error(
                    8,
                    AnieErrorKind::UnsupportedVersion {
                        major: h.major,
                        minor: h.minor,
                    },
                ));
            }
        };
        if h.reserved != [0; 16] {
            return Err(self.error(
                16,
                AnieErrorKind::NonZeroReserved {
                    what: "header bytes 16..32",
                },
            ));
        }
        let g: GlobalBlock = self
            .r
            .record()
            .map_err(|s| self.truncated(s, "72-byte GLBL block"))?;
        if g.signature != GLBL {
            return Err(self.error(
                32,
                AnieErrorKind::BadSignature {
                    expected: "GLBL",
                    found: String::from_utf8_lossy(&g.signature).into_owned(),
                },
            ));
        }
        if g.length != GLBL_LENGTH {
            return Err(self.error(36, AnieErrorKind::BadGlobalLength { length: g.length }));
        }
        if g.reserved != [0; 47] {
            return Err(self.error(
                57,
                AnieErrorKind::NonZeroReserved {
                    what: "GLBL bytes 57..104",
                },
            ));
        }
        self.project.canvas_width = g.canvas_width;
        self.project.canvas_height = g.canvas_height;
        self.project.max_frame = g.max_frame;
        self.project.fps = g.fps;
        self.project.looping = g.looping != 0;

        self.block(block::RESOURCE, |p| {
            let trees = p.count("resource tree", MIN_RES_TREE)?;
            for t in 0..trees {
                let file_path = p.string("resource file path")?;
                p.project.resources.push(ResourceTree {
                    file_path,
                    nodes: Vec::new(),
                });
                p.preorder(1, MIN_RES_NODE, "resource node", |p, parent, index| {
                    p.resource_node(t, parent, index)
                })?;
            }
            p.spot = Spot::default();
            Ok(())
        })?;

        self.block(block::OBJ_TREE, |p| {
            let at = p.r.pos();
            let top = p.i32("top node count")?;
            if !(0..=1).contains(&top) {
                return Err(p.invalid(at, "top node count", top.into(), "0 or 1"));
            }
            p.preorder(
                top as usize,
                MIN_OBJ_NODE,
                "object node",
                |p, parent, index| p.object_node(parent, index),
            )?;
            p.spot = Spot::default();
            Ok(())
        })?;

        let rest = self.r.remaining();
        if rest > 0 {
            self.warn(
                self.r.pos(),
                AnieWarningKind::TrailingBytes { count: rest as u64 },
            );
        }
        Ok(())
    }

    /// A `ResNode_` block (§1.5); returns its child count.
    fn resource_node(&mut self, tree: usize, parent: Option<usize>, index: usize) -> Result<usize> {
        let nodes = &mut self.project.resources[tree].nodes;
        nodes.push(ResourceNode {
            parent,
            ..ResourceNode::default()
        });
        if let Some(p) = parent {
            nodes[p].children.push(index);
        }
        self.spot = Spot {
            resource: Some((tree, index)),
            ..Spot::default()
        };
        self.block(block::RES_NODE, |p| {
            let identifier = p.string("resource identifier")?;
            p.project.resources[tree].nodes[index].identifier = identifier;
            let children = p.count("resource child", 0)?;
            p.bind(Target::Resource(ResourceRef { tree, node: index }))?;
            let is_layer = p.bool("isLayer")?;
            let rect = p.irect("resource rect")?;
            let blend_mode = p.blend_mode()?;
            let at = p.r.pos();
            let image = p.image()?;
            if let Some(img) = &image
                && (i64::from(img.width) != i64::from(rect.width)
                    || i64::from(img.height) != i64::from(rect.height))
            {
                p.warn(
                    at,
                    AnieWarningKind::ImageSizeMismatch {
                        rect: [rect.width, rect.height],
                        image: [img.width, img.height],
                    },
                );
            }
            let node = &mut p.project.resources[tree].nodes[index];
            node.is_layer = is_layer;
            node.rect = rect;
            node.blend_mode = blend_mode;
            node.image = image;
            Ok(children)
        })
    }

    /// An image (§2): `None` for a null image.
    fn image(&mut self) -> Result<Option<Image>> {
        let at = self.r.pos();
        let compression = self.u32("image compression type")?;
        let width = self.u32("image width")?;
        let height = self.u32("image height")?;
        match compression {
            0 if width == 0 && height == 0 => return Ok(None),
            0 => {
                return Err(self.error(at, AnieErrorKind::NullImageWithSize { width, height }));
            }
            1 => {}
            c => return Err(self.invalid(at, "image compression type", c.into(), "0 or 1")),
        }
        if width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE {
            return Err(self.error(
                at + 4,
                AnieErrorKind::ImageTooLarge {
                    width,
                    height,
                    max: MAX_IMAGE_SIDE,
                },
            ));
        }
        let total = self.u64("image data length")?;
        let data_at = self.r.pos();
        let (w, h) = (width as usize, height as usize);
        let rgba = self.window(total, "image data", |p| {
            // Each channel row takes its u32 length and at least 2 bytes per 128 pixels.
            let line_min = 4 + 2 * u64::from(width).div_ceil(128);
            p.check(u64::from(height) * 4, line_min, "image scanline")?;
            let mut rgba = vec![0u8; w * h * 4];
            let mut line = vec![0u8; w];
            for y in 0..h {
                for c in 0..4 {
                    let len = p.u32("scanline length")?;
                    let line_at = p.r.pos();
                    let packed = p.take(len.into(), "PackBits scanline")?;
                    packbits_decode(packed, &mut line).map_err(|problem| {
                        p.error(
                            line_at,
                            AnieErrorKind::PackBits {
                                row: y as u32,
                                channel: c as u8,
                                problem,
                            },
                        )
                    })?;
                    for (x, &v) in line.iter().enumerate() {
                        rgba[(y * w + x) * 4 + c] = v;
                    }
                }
            }
            if p.r.remaining() > 0 {
                return Err(p.error(
                    p.r.pos(),
                    AnieErrorKind::ImageDataLength {
                        declared: total,
                        actual: (p.r.pos() - data_at) as u64,
                    },
                ));
            }
            Ok(rgba)
        })?;
        self.take((4 - total % 4) % 4, "image padding")?;
        Ok(Some(Image {
            width,
            height,
            rgba,
        }))
    }

    /// An `ObjNode_` block (§1.5); returns its child count.
    fn object_node(&mut self, parent: Option<usize>, index: usize) -> Result<usize> {
        self.project.objects.push(ObjectNode {
            parent,
            ..ObjectNode::default()
        });
        if let Some(p) = parent {
            self.project.objects[p].children.push(index);
        }
        self.spot = Spot {
            node: Some(index),
            ..Spot::default()
        };
        self.block(block::OBJ_NODE, |p| {
            let at = p.r.pos();
            let kind = match p.i32("object type")? {
                0 => NodeKind::Layer,
                1 => NodeKind::Folder,
                t => return Err(p.invalid(at, "object type", t.into(), "0 (layer) or 1 (folder)")),
            };
            let at = p.r.pos();
            let children = p.count("object child", 0)?;
            if kind == NodeKind::Layer && children > 0 {
                return Err(p.error(
                    at,
                    AnieErrorKind::LayerWithChildren {
                        count: children as i32,
                    },
                ));
            }
            p.bind(Target::Object(index))?;
            p.project.objects[index].kind = kind;
            let signature = match kind {
                NodeKind::Layer => block::LAYER,
                NodeKind::Folder => block::FOLDER,
            };
            p.block(signature, |p| {
                let name = p.string("node name")?;
                p.project.objects[index].name = name;
                let visible = p.bool("visible")?;
                let slim_down = p.bool("slimDown")?;
                let initial_rect = p.irect("initialRect")?;
                let clipped = p.bool("clipped")?;
                let timeline = p.block(block::TIME_LINE, |p| p.timeline(index))?;
                let node = &mut p.project.objects[index];
                node.visible = visible;
                node.slim_down = slim_down;
                node.initial_rect = initial_rect;
                node.clipped = clipped;
                node.timeline = timeline;
                Ok(())
            })?;
            Ok(children)
        })
    }

    // ---- timelines and keys (§1.5, §3) ----

    fn timeline(&mut self, node: usize) -> Result<Timeline> {
        let mut tl = Timeline::default();
        let mut seen = [false; KeyKind::ALL.len()];
        let maps = self.count("key map", MIN_MAP)?;
        for _ in 0..maps {
            self.spot.map = None;
            self.spot.key = None;
            let at = self.r.pos();
            self.block(block::TIME_MAP, |p| {
                let name = p.string("key type name")?;
                let Some(kind) = KeyKind::from_name(&name) else {
                    let length = p.r.remaining() as u64;
                    p.warn(at, AnieWarningKind::UnknownKeyType { name, length });
                    let end = p.r.len();
                    // The end of the current window.
                    let _ = p.r.seek(end);
                    return Ok(());
                };
                p.spot.map = Some(kind);
                if std::mem::replace(&mut seen[kind as usize], true) {
                    return Err(p.error(at, AnieErrorKind::DuplicateMap { kind }));
                }
                match kind {
                    KeyKind::Move => tl.moves = p.key_map(node, kind, Self::move_key)?,
                    KeyKind::Rotate => tl.rotates = p.key_map(node, kind, Self::rotate_key)?,
                    KeyKind::Scale => tl.scales = p.key_map(node, kind, Self::scale_key)?,
                    KeyKind::Depth => tl.depths = p.key_map(node, kind, Self::depth_key)?,
                    KeyKind::Opa => tl.opacities = p.key_map(node, kind, Self::opa_key)?,
                    KeyKind::Bone => tl.bones = p.key_map(node, kind, Self::bone_key)?,
                    KeyKind::Pose => tl.poses = p.key_map(node, kind, Self::pose_key)?,
                    KeyKind::Mesh => tl.meshes = p.key_map(node, kind, Self::mesh_key)?,
                    KeyKind::Ffd => tl.ffds = p.key_map(node, kind, Self::ffd_key)?,
                    KeyKind::Image => tl.images = p.key_map(node, kind, Self::image_key)?,
                    KeyKind::Hsv => {
                        if p.version < AnieVersion::V0_6 {
                            let version = p.version;
                            p.warn(at, AnieWarningKind::HsvInOldFormat { version });
                        }
                        tl.hsvs = p.key_map(node, kind, Self::hsv_key)?
                    }
                }
                Ok(())
            })?;
        }
        self.spot.map = None;
        self.spot.key = None;
        Ok(tl)
    }

    fn easing_size(&self) -> u64 {
        if self.version >= AnieVersion::V0_8 {
            28
        } else {
            12
        }
    }

    /// Smallest payload of a key of `kind` (§3).
    fn min_payload(&self, kind: KeyKind) -> u64 {
        let e = self.easing_size();
        let grid = BLOCK_HEAD
            + 4
            + 8
            + 8
            + 4
            + 4
            + 4
            + 4
            + if self.version >= AnieVersion::V0_5 {
                16
            } else {
                0
            };
        match kind {
            KeyKind::Move => e + 4 + 16,
            KeyKind::Rotate | KeyKind::Depth | KeyKind::Opa | KeyKind::Pose | KeyKind::Ffd => e + 4,
            KeyKind::Scale => e + 8,
            KeyKind::Bone => 16,
            KeyKind::Mesh => 8 + 12,
            KeyKind::Image => e + 4 + 4 + 8 + grid,
            KeyKind::Hsv => {
                e + if self.version >= AnieVersion::V0_7 {
                    16
                } else {
                    12
                }
            }
        }
    }

    fn key_map<T>(
        &mut self,
        node: usize,
        kind: KeyKind,
        payload: fn(&mut Self, KeyRef) -> Result<T>,
    ) -> Result<KeyMap<T>> {
        let pending_start = self.pending.len();
        let bound_start = self.bound_order.len();
        let mut map = KeyMap::default();
        if self.bool("hasDefaultKey")? {
            self.spot.key = Some(-1);
            let key = KeyRef {
                node,
                kind,
                slot: KeySlot::Default,
            };
            map.default = Some(self.time_key(key, -1, payload)?);
        }
        let min_key = 4 + 4 + self.min_payload(kind) + 4;
        let count = self.count("key", min_key)?;
        let mut offsets = Vec::with_capacity(count);
        for i in 0..count {
            let at = self.r.pos();
            let frame = self.i32("key frame")?;
            self.spot.key = Some(frame);
            if frame < 0 {
                return Err(self.error(at, AnieErrorKind::NegativeKeyFrame { frame }));
            }
            offsets.push(at);
            let key = KeyRef {
                node,
                kind,
                slot: KeySlot::At(i),
            };
            map.keys.push(self.time_key(key, frame, payload)?);
        }
        self.spot.key = None;
        if map.keys.windows(2).any(|w| w[0].frame >= w[1].frame) {
            // Sort (QMap order), keeping track of where each key went.
            let mut order: Vec<usize> = (0..map.keys.len()).collect();
            order.sort_by_key(|&i| map.keys[i].frame);
            if let Some(w) = order
                .windows(2)
                .find(|w| map.keys[w[0]].frame == map.keys[w[1]].frame)
            {
                let frame = map.keys[w[1]].frame;
                return Err(self.error(
                    offsets[w[0].max(w[1])],
                    AnieErrorKind::DuplicateKeyFrame { frame },
                ));
            }
            let mut new_of_old = vec![0; order.len()];
            for (new, &old) in order.iter().enumerate() {
                new_of_old[old] = new;
            }
            let mut keys: Vec<Option<TimeKey<T>>> = map.keys.drain(..).map(Some).collect();
            map.keys = order.iter().filter_map(|&old| keys[old].take()).collect();
            let remap = |k: KeyRef| match k.slot {
                KeySlot::At(old) if k.node == node && k.kind == kind => KeyRef {
                    slot: KeySlot::At(new_of_old[old]),
                    ..k
                },
                _ => k,
            };
            for p in &mut self.pending[pending_start..] {
                p.dest.remap(&remap);
            }
            for id in &self.bound_order[bound_start..] {
                if let Some(b) = self.ids.get_mut(id) {
                    match &mut b.target {
                        Target::Key(k) => *k = remap(*k),
                        Target::Bone(b) => b.key = remap(b.key),
                        _ => {}
                    }
                }
            }
            self.warn(offsets[0], AnieWarningKind::KeysSorted);
        }
        Ok(map)
    }

    /// A TimeKey: bind ID, payload, child IDs (§1.5).
    fn time_key<T>(
        &mut self,
        key: KeyRef,
        frame: i32,
        payload: fn(&mut Self, KeyRef) -> Result<T>,
    ) -> Result<TimeKey<T>> {
        self.bind(Target::Key(key))?;
        let value = payload(self, key)?;
        self.spot.bone = None;
        let children = self.count("key child", 4)?;
        for _ in 0..children {
            self.reference(Dest::KeyChild(key), "key child ID")?;
        }
        Ok(TimeKey {
            frame,
            value,
            children: Vec::new(),
        })
    }

    fn easing(&mut self) -> Result<Easing> {
        let at = self.r.pos();
        let kind = self.i32("easing type")?;
        let range = self.i32("easing range")?;
        let weight = self.f32("easing weight")?;
        let mut bezier = Easing::DEFAULT_BEZIER;
        if self.version >= AnieVersion::V0_8 {
            for v in &mut bezier {
                *v = self.f32("easing bezier")?;
            }
        }
        let parsed = (
            EasingKind::from_code(kind)
                .filter(|k| *k != EasingKind::Custom || self.version >= AnieVersion::V0_8),
            EasingRange::from_code(range),
        );
        match parsed {
            (Some(kind), Some(range)) if (0.0..=1.0).contains(&weight) => Ok(Easing {
                kind,
                range,
                weight,
                bezier,
            }),
            _ => Err(self.error(
                at,
                AnieErrorKind::InvalidEasing {
                    kind,
                    range,
                    weight,
                },
            )),
        }
    }

    /// An f32 clamped to `±limit` (or `lo..=hi`) as AnimeEffects does on load, with a warning.
    fn clamped(&mut self, what: &'static str, lo: f32, hi: f32) -> Result<f32> {
        let at = self.r.pos();
        let v = self.f32(what)?;
        let c = v.clamp(lo, hi);
        if c != v {
            self.warn(
                at,
                AnieWarningKind::ValueClamped {
                    field: what,
                    value: v,
                    clamped: c,
                },
            );
        }
        Ok(c)
    }

    fn clamped2(&mut self, what: &'static str, limit: f32) -> Result<Vec2> {
        Ok(Vec2::new(
            self.clamped(what, -limit, limit)?,
            self.clamped(what, -limit, limit)?,
        ))
    }

    fn move_key(&mut self, _: KeyRef) -> Result<MoveKey> {
        let easing = self.easing()?;
        let at = self.r.pos();
        let spline = match self.i32("spline")? {
            0 => Spline::Linear,
            1 => Spline::CatmullRom,
            s => return Err(self.invalid(at, "spline", s.into(), "0 (linear) or 1 (Catmull-Rom)")),
        };
        Ok(MoveKey {
            easing,
            spline,
            pos: self.clamped2("move position", TRANSLATE_LIMIT)?,
            centroid: self.clamped2("move centroid", TRANSLATE_LIMIT)?,
        })
    }

    fn rotate_key(&mut self, _: KeyRef) -> Result<RotateKey> {
        Ok(RotateKey {
            easing: self.easing()?,
            rotate: self.clamped("rotation", -ROTATE_LIMIT, ROTATE_LIMIT)?,
        })
    }

    fn scale_key(&mut self, _: KeyRef) -> Result<ScaleKey> {
        Ok(ScaleKey {
            easing: self.easing()?,
            scale: self.clamped2("scale", SCALE_LIMIT)?,
        })
    }

    fn depth_key(&mut self, _: KeyRef) -> Result<DepthKey> {
        Ok(DepthKey {
            easing: self.easing()?,
            depth: self.clamped("depth", -TRANSLATE_LIMIT, TRANSLATE_LIMIT)?,
        })
    }

    fn opa_key(&mut self, _: KeyRef) -> Result<OpaKey> {
        Ok(OpaKey {
            easing: self.easing()?,
            opacity: self.clamped("opacity", 0.0, 1.0)?,
        })
    }

    fn hsv_key(&mut self, _: KeyRef) -> Result<HsvKey> {
        let easing = self.easing()?;
        let at = self.r.pos();
        let (mut hue, mut sat, mut val) = (
            self.i32("hue")?,
            self.i32("saturation")?,
            self.i32("value")?,
        );
        let absolute = if self.version >= AnieVersion::V0_7 {
            self.i32("HSV absolute flag")? != 0
        } else {
            if [hue, sat, val].iter().any(|&v| v >= 100_000) {
                self.warn(
                    at,
                    AnieWarningKind::HsvReset {
                        values: [hue, sat, val],
                    },
                );
                (hue, sat, val) = (0, 100, 100);
            }
            false
        };
        Ok(HsvKey {
            easing,
            hue,
            sat,
            val,
            absolute,
        })
    }

    fn bone_key(&mut self, key: KeyRef) -> Result<BoneKey> {
        let bones = self.bones(key)?;
        let cache_owner_at = self.r.pos();
        let owner = self.i32("cache owner ID")?;
        if owner != 0 {
            self.pending.push(Pending {
                id: owner,
                offset: cache_owner_at,
                spot: self.spot,
                dest: Dest::CacheOwner(key),
            });
        }
        let n = self.count("bone cache", MIN_CACHE)?;
        let mut caches = Vec::with_capacity(n);
        for i in 0..n {
            self.reference(Dest::CacheNode(key, i), "cache node ID")?;
            let inner_matrix = self.mat4("cache inner matrix")?;
            let obsolete = self.vec2("cache obsolete vec2")?;
            let frame_sign = Frame {
                value: self.i32("cache frame")?,
                milli: self.i32("cache frame milli")?,
            };
            let vertices = self.count("influence vertex", CACHE_VERTEX)?;
            let max_bone_count = self.i32("influence max bone count")?;
            let mut indices = vec![[0i32; 8]; vertices];
            let mut weights = vec![[0f32; 8]; vertices];
            for half in 0..2 {
                for v in indices.iter_mut() {
                    for x in &mut v[half * 4..half * 4 + 4] {
                        *x = self.i32("influence bone index")?;
                    }
                }
            }
            for half in 0..2 {
                for v in weights.iter_mut() {
                    for x in &mut v[half * 4..half * 4 + 4] {
                        *x = self.f32("influence weight")?;
                    }
                }
            }
            caches.push(BoneCache {
                node: 0,
                inner_matrix,
                obsolete,
                frame_sign,
                max_bone_count,
                indices,
                weights,
            });
        }
        let n = self.count("binding cache", BINDING_CACHE)?;
        let mut binding_caches = Vec::with_capacity(n);
        for i in 0..n {
            self.reference(Dest::BindingCacheNode(key, i), "binding cache node ID")?;
            binding_caches.push(BindingCache {
                node: 0,
                bone_index: self.i32("binding cache bone index")?,
                inner_matrix: self.mat4("binding cache inner matrix")?,
            });
        }
        Ok(BoneKey {
            bones,
            cache_owner: None,
            caches,
            binding_caches,
        })
    }

    fn pose_key(&mut self, key: KeyRef) -> Result<PoseKey> {
        Ok(PoseKey {
            easing: self.easing()?,
            bones: self.bones(key)?,
        })
    }

    /// The bones of a Bone or Pose key: top count, then records in pre-order (§3).
    fn bones(&mut self, key: KeyRef) -> Result<Vec<Bone>> {
        let top = self.count("top bone", MIN_BONE)?;
        let mut bones: Vec<Bone> = Vec::new();
        self.preorder(top, MIN_BONE, "bone child", |p, parent, index| {
            p.spot.bone = Some(index);
            let children = p.count("bone child", 0)?;
            let bone_ref = BoneRef { key, bone: index };
            p.bind(Target::Bone(bone_ref))?;
            let origin_at = p.r.pos();
            let origin = p.i32("bone origin ID")?;
            if origin != 0 {
                p.pending.push(Pending {
                    id: origin,
                    offset: origin_at,
                    spot: p.spot,
                    dest: Dest::BoneOrigin(bone_ref),
                });
            }
            let local_pos = p.vec2("bone local position")?;
            let local_angle = p.f32("bone local angle")?;
            let range = [p.vec2("bone range")?, p.vec2("bone range")?];
            let shape = BoneShape {
                valid: p.bool("bone shape valid")?,
                seg_start: p.vec2("bone shape segment")?,
                seg_dir: p.vec2("bone shape segment")?,
                v_unit: p.vec2("bone shape vUnit")?,
                v_dir_angle: p.f32("bone shape vDirAngle")?,
                length: p.f32("bone shape length")?,
                radius: [p.vec2("bone shape radius")?, p.vec2("bone shape radius")?],
                root_bend: [
                    p.f32("bone shape root bend")?,
                    p.f32("bone shape root bend")?,
                ],
                tail_bend: [
                    p.f32("bone shape tail bend")?,
                    p.f32("bone shape tail bend")?,
                ],
                bounding: p.frect("bone shape bounding")?,
                polygon: {
                    let n = p.count("bone polygon point", 8)?;
                    let mut pts = Vec::with_capacity(n);
                    for _ in 0..n {
                        pts.push(p.vec2("bone polygon point")?);
                    }
                    pts
                },
            };
            let n = p.count("bone binding node", 4)?;
            for _ in 0..n {
                p.reference(Dest::BoneBinding(bone_ref), "bone binding node ID")?;
            }
            let bone = Bone {
                parent,
                children: Vec::new(),
                origin: None,
                local_pos,
                local_angle,
                range,
                shape,
                binding_nodes: Vec::with_capacity(n),
                world_pos: p.vec2("bone world position")?,
                world_angle: p.f32("bone world angle")?,
                rotate: p.f32("bone rotate")?,
            };
            if let Some(pi) = parent {
                bones[pi].children.push(index);
            }
            bones.push(bone);
            Ok(children)
        })?;
        self.spot.bone = None;
        Ok(bones)
    }

    fn mesh_key(&mut self, _: KeyRef) -> Result<MeshKey> {
        let origin_offset = self.vec2("mesh origin offset")?;
        let n = self.count("mesh vertex", 8)?;
        let mut vertices = Vec::with_capacity(n);
        for _ in 0..n {
            vertices.push(self.vec2("mesh vertex")?);
        }
        let n = self.count("mesh edge", 8)?;
        let mut edges = Vec::with_capacity(n);
        for _ in 0..n {
            edges.push([
                self.index("mesh edge vertex", vertices.len())?,
                self.index("mesh edge vertex", vertices.len())?,
            ]);
        }
        let n = self.count("mesh face", 12)?;
        let mut faces = Vec::with_capacity(n);
        for _ in 0..n {
            faces.push([
                self.index("mesh face edge", edges.len())?,
                self.index("mesh face edge", edges.len())?,
                self.index("mesh face edge", edges.len())?,
            ]);
        }
        Ok(MeshKey {
            origin_offset,
            vertices,
            edges,
            faces,
        })
    }

    /// An i32 index that must be in `0..count`.
    fn index(&mut self, what: &'static str, count: usize) -> Result<u32> {
        let at = self.r.pos();
        let i = self.i32(what)?;
        match usize::try_from(i) {
            Ok(u) if u < count => Ok(i as u32),
            _ => Err(self.error(
                at,
                AnieErrorKind::IndexOutOfRange {
                    what,
                    index: i.into(),
                    count,
                },
            )),
        }
    }

    fn ffd_key(&mut self, _: KeyRef) -> Result<FfdKey> {
        let easing = self.easing()?;
        let n = self.count("FFD position", 12)?;
        let mut positions = Vec::with_capacity(n);
        for _ in 0..n {
            positions.push(self.vec3("FFD position")?);
        }
        Ok(FfdKey { easing, positions })
    }

    fn image_key(&mut self, key: KeyRef) -> Result<ImageKey> {
        let easing = self.easing()?;
        self.reference(Dest::ImageResource(key), "image resource ID")?;
        Ok(ImageKey {
            easing,
            resource: None,
            blend_mode: self.blend_mode()?,
            image_offset: self.vec2("image offset")?,
            mesh: self.block(block::GRID_MESH, Self::grid_mesh)?,
        })
    }

    /// A `GridMesh` block's content (§3).
    fn grid_mesh(&mut self) -> Result<GridMesh> {
        let at = self.r.pos();
        let t = self.i32("grid mesh type")?;
        if t != 0 {
            return Err(self.invalid(at, "grid mesh type", t.into(), "0"));
        }
        let size = [self.i32("grid mesh size")?, self.i32("grid mesh size")?];
        let origin_offset = self.vec2("grid mesh origin offset")?;
        let cell_px = self.i32("grid mesh cell size")?;
        let at = self.r.pos();
        let primitive = self.i32("grid mesh primitive")?;
        if primitive != 0 {
            return Err(self.invalid(at, "grid mesh primitive", primitive.into(), "0 (triangles)"));
        }
        let n = self.count("grid mesh index", 4)?;
        let mut raw_indices = Vec::with_capacity(n);
        for _ in 0..n {
            raw_indices.push((self.r.pos(), self.u32("grid mesh index")?));
        }
        let vertices = self.count("grid mesh vertex", GRID_VERTEX)?;
        if let Some(&(at, i)) = raw_indices.iter().find(|(_, i)| *i as usize >= vertices) {
            return Err(self.error(
                at,
                AnieErrorKind::IndexOutOfRange {
                    what: "grid mesh index",
                    index: i.into(),
                    count: vertices,
                },
            ));
        }
        let mut mesh = GridMesh {
            size,
            origin_offset,
            cell_px,
            indices: raw_indices.into_iter().map(|(_, i)| i).collect(),
            ..GridMesh::default()
        };
        if vertices > 0 {
            mesh.positions = (0..vertices)
                .map(|_| self.vec3("grid mesh position"))
                .collect::<Result<_>>()?;
            mesh.offsets = (0..vertices)
                .map(|_| self.vec3("grid mesh offset"))
                .collect::<Result<_>>()?;
            mesh.texcoords = (0..vertices)
                .map(|_| self.vec2("grid mesh texcoord"))
                .collect::<Result<_>>()?;
            mesh.normals = (0..vertices)
                .map(|_| self.vec3("grid mesh normal"))
                .collect::<Result<_>>()?;
            let at = self.r.pos();
            let size = self.u64("grid mesh connection size")?;
            let expected = 24 * vertices as u64;
            if size != expected {
                return Err(self.error(at, AnieErrorKind::ConnectionsSize { size, expected }));
            }
            mesh.connections = (0..vertices)
                .map(|_| {
                    let mut c = [0i32; 6];
                    for x in &mut c {
                        *x = self.i32("grid mesh connection")?;
                    }
                    Ok(c)
                })
                .collect::<Result<_>>()?;
        }
        mesh.vertex_rect = if self.version >= AnieVersion::V0_5 {
            self.irect("grid mesh vertex rect")?
        } else {
            mesh.bounding_rect()
        };
        Ok(mesh)
    }

    // ---- pass 2: IDs (§1.6) ----

    fn resolve(&mut self) -> Result<()> {
        let pending = std::mem::take(&mut self.pending);
        // Each key's parent, with the reference that made it (for cycle errors).
        let mut parents: HashMap<KeyRef, (KeyRef, Pending)> = HashMap::new();
        let mut key_ids: HashMap<KeyRef, i32> = HashMap::new();
        let mut bone_origins: Vec<(BoneRef, Pending)> = Vec::new();
        for (&id, b) in &self.ids {
            if let Target::Key(k) = b.target {
                key_ids.insert(k, id);
            }
        }
        for p in pending {
            let referrer = p.dest.referrer();
            let found = if p.id == 0 {
                None
            } else {
                self.ids.get(&p.id).copied()
            };
            let Some(bound) = found else {
                if let Dest::ImageResource(_) = p.dest {
                    self.warn_at(p.offset, p.spot, AnieWarningKind::MissingImage { id: p.id });
                    continue;
                }
                let kind = if p.id == 0 {
                    AnieErrorKind::NullReference { referrer }
                } else {
                    AnieErrorKind::UnresolvedId { id: p.id, referrer }
                };
                return Err(self.error_at(p.offset, p.spot, kind));
            };
            let wrong = |expected| AnieErrorKind::WrongIdKind {
                id: p.id,
                referrer,
                expected,
                found: bound.target.what(),
            };
            match (p.dest, bound.target) {
                (Dest::ImageResource(k), Target::Resource(r)) => {
                    if self.project.image(r).is_none() {
                        self.warn_at(
                            p.offset,
                            p.spot,
                            AnieWarningKind::ResourceWithoutImage { id: p.id },
                        );
                    }
                    if let Some(key) = self.project.objects[k.node].timeline.images.get_mut(k.slot)
                    {
                        key.value.resource = Some(r);
                    }
                }
                (Dest::KeyChild(parent), Target::Key(child)) => {
                    if child == parent {
                        return Err(self.error_at(
                            p.offset,
                            p.spot,
                            AnieErrorKind::SelfReference { id: p.id, referrer },
                        ));
                    }
                    if parents.insert(child, (parent, p)).is_some() {
                        return Err(self.error_at(
                            p.offset,
                            p.spot,
                            AnieErrorKind::TwoParents { id: p.id },
                        ));
                    }
                    if let Some(c) = self.project.objects[parent.node]
                        .timeline
                        .children_mut(parent.kind, parent.slot)
                    {
                        c.push(child);
                    }
                }
                (Dest::BoneOrigin(bone), Target::Bone(origin)) => {
                    if origin == bone {
                        return Err(self.error_at(
                            p.offset,
                            p.spot,
                            AnieErrorKind::SelfReference { id: p.id, referrer },
                        ));
                    }
                    bone_origins.push((bone, p));
                    if let Some(b) = self.bone_mut(bone) {
                        b.origin = Some(origin);
                    }
                }
                (Dest::BoneBinding(bone), Target::Object(node)) => {
                    if let Some(b) = self.bone_mut(bone) {
                        b.binding_nodes.push(node);
                    }
                }
                (Dest::CacheOwner(k), Target::Object(node)) => {
                    if let Some(key) = self.project.objects[k.node].timeline.bones.get_mut(k.slot) {
                        key.value.cache_owner = Some(node);
                    }
                }
                (Dest::CacheNode(k, i), Target::Object(node)) => {
                    if let Some(key) = self.project.objects[k.node].timeline.bones.get_mut(k.slot) {
                        key.value.caches[i].node = node;
                    }
                }
                (Dest::BindingCacheNode(k, i), Target::Object(node)) => {
                    if let Some(key) = self.project.objects[k.node].timeline.bones.get_mut(k.slot) {
                        key.value.binding_caches[i].node = node;
                    }
                }
                (Dest::ImageResource(_), _) => {
                    return Err(self.error_at(p.offset, p.spot, wrong("resource node")));
                }
                (Dest::KeyChild(_), _) => {
                    return Err(self.error_at(p.offset, p.spot, wrong("time key")));
                }
                (Dest::BoneOrigin(_), _) => {
                    return Err(self.error_at(p.offset, p.spot, wrong("bone")));
                }
                (
                    Dest::BoneBinding(_)
                    | Dest::CacheOwner(_)
                    | Dest::CacheNode(..)
                    | Dest::BindingCacheNode(..),
                    _,
                ) => {
                    return Err(self.error_at(p.offset, p.spot, wrong("object node")));
                }
            }
        }
        // Key parent chains: each key has at most one parent, so a cycle is a chain that
        // comes back to a key already on it.
        let mut keys: Vec<KeyRef> = parents.keys().copied().collect();
        keys.sort();
        if let Some((k, p)) = find_cycle(&keys, |k| parents.get(k).map(|(parent, p)| (*parent, *p)))
        {
            let id = key_ids.get(&k).copied().unwrap_or(p.id);
            return Err(self.error_at(
                p.offset,
                p.spot,
                AnieErrorKind::IdCycle {
                    id,
                    referrer: "key child",
                },
            ));
        }
        // Bone origin chains, likewise.
        let origins: HashMap<BoneRef, (BoneRef, Pending)> = bone_origins
            .iter()
            .filter_map(|&(bone, p)| self.bone_origin(bone).map(|o| (bone, (o, p))))
            .collect();
        let starts: Vec<BoneRef> = bone_origins.iter().map(|(b, _)| *b).collect();
        if let Some((_, p)) = find_cycle(&starts, |b| origins.get(b).copied()) {
            return Err(self.error_at(
                p.offset,
                p.spot,
                AnieErrorKind::IdCycle {
                    id: p.id,
                    referrer: "pose bone origin",
                },
            ));
        }
        Ok(())
    }

    fn bone_mut(&mut self, r: BoneRef) -> Option<&mut Bone> {
        self.project.objects[r.key.node]
            .timeline
            .bones_of_mut(r.key.kind, r.key.slot)?
            .get_mut(r.bone)
    }

    fn bone_origin(&self, r: BoneRef) -> Option<BoneRef> {
        self.project.bone(r)?.origin
    }
}

/// Follows `next` (each item has at most one successor) from every start; returns an item on
/// a cycle and the successor's payload. Linear in the number of items.
fn find_cycle<T: Copy + Eq + std::hash::Hash, P: Copy>(
    starts: &[T],
    next: impl Fn(&T) -> Option<(T, P)>,
) -> Option<(T, P)> {
    let mut done = std::collections::HashSet::new();
    for &start in starts {
        let mut on_walk = std::collections::HashSet::new();
        let mut k = start;
        while let Some((succ, payload)) = next(&k) {
            if done.contains(&k) {
                break;
            }
            if !on_walk.insert(k) {
                return Some((k, payload));
            }
            k = succ;
        }
        done.extend(on_walk);
    }
    None
}
