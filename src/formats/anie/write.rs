//! The `.anie` writer: checks the project's structure (pre-order trees, references that point
//! at something, no key or bone-origin cycles), then emits it in the layout of §1, assigning
//! IDs the way AnimeEffects' `IDAssigner` does (§1.6).
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use super::error::{AnieWriteError, AnieWriteErrorKind, Location};
use super::packbits::packbits_encode;
use super::records::{ENDIAN, FileHeader, GLBL, GLBL_LENGTH, GlobalBlock, MAGIC, MAJOR, block};
use super::*;
use binrw::BinWrite;
use glam::{Mat4, Vec2, Vec3};
use std::collections::{HashMap, HashSet};
use std::io::Cursor;

type Result<T> = std::result::Result<T, AnieWriteError>;

/// Something that gets an ID (§1.6: all share one namespace).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Obj {
    Resource(ResourceRef),
    Object(usize),
    Key(KeyRef),
    Bone(BoneRef),
}

/// Where the writer is, for errors.
#[derive(Debug, Clone, Copy, Default)]
struct Spot {
    node: Option<usize>,
    resource: Option<(usize, usize)>,
    map: Option<KeyKind>,
    key: Option<i32>,
    bone: Option<usize>,
}

/// [`AnieFile::write`].
pub(super) fn write(project: &AnieFile, version: AnieVersion) -> Result<Vec<u8>> {
    let mut w = Writer {
        p: project,
        version,
        out: Vec::new(),
        ids: HashMap::new(),
        spot: Spot::default(),
        line: Vec::new(),
        packed: Vec::new(),
    };
    if !matches!(
        version,
        AnieVersion::V0_5 | AnieVersion::V0_7 | AnieVersion::V0_8
    ) {
        return Err(w.error(AnieWriteErrorKind::UnsupportedVersion { version }));
    }
    w.check_structure()?;
    w.file()?;
    Ok(w.out)
}

struct Writer<'p> {
    p: &'p AnieFile,
    version: AnieVersion,
    out: Vec<u8>,
    ids: HashMap<Obj, i32>,
    spot: Spot,
    /// Scratch buffers for image rows.
    line: Vec<u8>,
    packed: Vec<u8>,
}

impl<'p> Writer<'p> {
    fn error(&self, kind: AnieWriteErrorKind) -> AnieWriteError {
        let s = self.spot;
        let p = self.p;
        AnieWriteError {
            location: Box::new(Location {
                node: s.node.map(|i| {
                    (
                        i,
                        p.objects.get(i).map(|n| n.name.clone()).unwrap_or_default(),
                    )
                }),
                resource: s.resource.map(|(t, n)| {
                    let name = p.resources.get(t).and_then(|tree| tree.nodes.get(n));
                    (t, n, name.map(|n| n.identifier.clone()).unwrap_or_default())
                }),
                map: s.map,
                key: s.key,
                bone: s.bone,
            }),
            kind,
        }
    }

    // ---- structure ----

    /// Everything that cannot be checked while writing in order: trees, key parents, cycles.
    fn check_structure(&mut self) -> Result<()> {
        let p = self.p;
        for (t, tree) in p.resources.iter().enumerate() {
            self.spot = Spot {
                resource: Some((t, 0)),
                ..Spot::default()
            };
            if tree.nodes.is_empty() {
                return Err(self.error(AnieWriteErrorKind::BadTree {
                    tree: "resource tree",
                    index: t,
                    problem: "has no root node",
                }));
            }
            self.check_preorder(
                "resource node",
                tree.nodes.len(),
                |i| tree.nodes[i].parent,
                |i| &tree.nodes[i].children,
                true,
            )?;
        }
        self.spot = Spot::default();
        self.check_preorder(
            "object node",
            p.objects.len(),
            |i| p.objects[i].parent,
            |i| &p.objects[i].children,
            true,
        )?;
        if let Some(i) = p
            .objects
            .iter()
            .position(|n| n.kind == NodeKind::Layer && !n.children.is_empty())
        {
            return Err(self.error(AnieWriteErrorKind::BadTree {
                tree: "object node",
                index: i,
                problem: "is a layer with children",
            }));
        }
        // Key parents and their cycles; bone trees and origin cycles.
        let mut parents: HashMap<KeyRef, KeyRef> = HashMap::new();
        let mut origins: HashMap<BoneRef, BoneRef> = HashMap::new();
        for (node, obj) in p.objects.iter().enumerate() {
            for kind in KeyKind::ALL {
                for slot in obj.timeline.slots(kind) {
                    let here = KeyRef { node, kind, slot };
                    self.spot = Spot {
                        node: Some(node),
                        map: Some(kind),
                        key: obj.timeline.frame(kind, slot),
                        ..Spot::default()
                    };
                    for &child in obj.timeline.children(kind, slot).unwrap_or(&[]) {
                        if !p.has_key(child) {
                            return Err(self.error(AnieWriteErrorKind::DanglingReference {
                                what: "key child",
                            }));
                        }
                        if child == here {
                            return Err(
                                self.error(AnieWriteErrorKind::SelfReference { what: "key child" })
                            );
                        }
                        if parents.insert(child, here).is_some() {
                            return Err(self.error(AnieWriteErrorKind::TwoParents));
                        }
                    }
                    let Some(bones) = obj.timeline.bones_of(kind, slot) else {
                        continue;
                    };
                    self.check_preorder(
                        "bone",
                        bones.len(),
                        |i| bones[i].parent,
                        |i| &bones[i].children,
                        false,
                    )?;
                    for (i, bone) in bones.iter().enumerate() {
                        let me = BoneRef { key: here, bone: i };
                        if let Some(origin) = bone.origin {
                            self.spot.bone = Some(i);
                            if p.bone(origin).is_none() {
                                return Err(self.error(AnieWriteErrorKind::DanglingReference {
                                    what: "bone origin",
                                }));
                            }
                            if origin == me {
                                return Err(self.error(AnieWriteErrorKind::SelfReference {
                                    what: "bone origin",
                                }));
                            }
                            origins.insert(me, origin);
                        }
                    }
                }
            }
        }
        self.spot = Spot::default();
        let mut starts: Vec<KeyRef> = parents.keys().copied().collect();
        starts.sort();
        if on_cycle(&starts, |k| parents.get(k).copied()) {
            return Err(self.error(AnieWriteErrorKind::Cycle { what: "key child" }));
        }
        let mut starts: Vec<BoneRef> = origins.keys().copied().collect();
        starts.sort();
        if on_cycle(&starts, |b| origins.get(b).copied()) {
            return Err(self.error(AnieWriteErrorKind::Cycle {
                what: "bone origin",
            }));
        }
        Ok(())
    }

    /// Checks that a flat tree is in pre-order: visiting the roots (nodes without a parent, in
    /// index order; only index 0 when `single_root`) and their children depth first meets
    /// the indices 0, 1, 2, … in turn, and each child names its parent.
    fn check_preorder<'t>(
        &self,
        tree: &'static str,
        len: usize,
        parent: impl Fn(usize) -> Option<usize>,
        children: impl Fn(usize) -> &'t [usize],
        single_root: bool,
    ) -> Result<()> {
        let bad = |index, problem| {
            self.error(AnieWriteErrorKind::BadTree {
                tree,
                index,
                problem,
            })
        };
        let mut next = 0;
        while next < len {
            let root = next;
            if parent(root).is_some() {
                return Err(bad(
                    root,
                    "is not where pre-order puts it (its parent's children list it elsewhere or not at all)",
                ));
            }
            if single_root && root != 0 {
                return Err(bad(root, "is a second root: the tree has one"));
            }
            // (node, index of the next child to visit)
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            next += 1;
            while let Some(top) = stack.last_mut() {
                let node = top.0;
                let kids = children(node);
                if top.1 == kids.len() {
                    stack.pop();
                    continue;
                }
                let child = kids[top.1];
                top.1 += 1;
                if child != next || child >= len {
                    return Err(bad(
                        child,
                        "is not where pre-order puts it (nodes must be stored parent first, children in order)",
                    ));
                }
                if parent(child) != Some(node) {
                    return Err(bad(
                        child,
                        "does not name the node that lists it as its parent",
                    ));
                }
                if stack.len() >= MAX_TREE_DEPTH {
                    return Err(self.error(AnieWriteErrorKind::TreeTooDeep {
                        tree,
                        max: MAX_TREE_DEPTH,
                    }));
                }
                stack.push((child, 0));
                next += 1;
            }
        }
        Ok(())
    }

    // ---- primitives (§1.1) ----

    /// The object's ID: the next integer the first time it is written (§1.6).
    fn id(&mut self, obj: Obj) -> i32 {
        let next = self.ids.len() as i32 + 1;
        *self.ids.entry(obj).or_insert(next)
    }

    fn bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }

    fn i32(&mut self, v: i32) {
        self.bytes(&v.to_le_bytes());
    }

    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }

    fn bool(&mut self, v: bool) {
        self.u32(u32::from(v));
    }

    /// A count as i32.
    fn count(&mut self, n: usize, what: &'static str) -> Result<()> {
        let v = i32::try_from(n)
            .map_err(|_| self.error(AnieWriteErrorKind::TooMany { what, count: n }))?;
        self.i32(v);
        Ok(())
    }

    /// A finite f32.
    fn f32(&mut self, v: f32, field: &'static str) -> Result<()> {
        if !v.is_finite() {
            return Err(self.error(AnieWriteErrorKind::ValueOutOfRange {
                field,
                value: v,
                expected: "a finite number",
            }));
        }
        self.bytes(&v.to_le_bytes());
        Ok(())
    }

    /// An f32 within the range the reader keeps (it clamps anything outside).
    fn ranged(
        &mut self,
        v: f32,
        lo: f32,
        hi: f32,
        field: &'static str,
        expected: &'static str,
    ) -> Result<()> {
        if !(lo..=hi).contains(&v) {
            return Err(self.error(AnieWriteErrorKind::ValueOutOfRange {
                field,
                value: v,
                expected,
            }));
        }
        self.f32(v, field)
    }

    fn vec2(&mut self, v: Vec2, field: &'static str) -> Result<()> {
        self.f32(v.x, field)?;
        self.f32(v.y, field)
    }

    fn vec3(&mut self, v: Vec3, field: &'static str) -> Result<()> {
        self.f32(v.x, field)?;
        self.f32(v.y, field)?;
        self.f32(v.z, field)
    }

    fn mat4(&mut self, m: &Mat4, field: &'static str) -> Result<()> {
        for v in m.to_cols_array() {
            self.f32(v, field)?;
        }
        Ok(())
    }

    fn irect(&mut self, r: IRect) {
        for v in [r.x, r.y, r.width, r.height] {
            self.i32(v);
        }
    }

    /// A `QString`: UTF-8, NUL, zero padding to a multiple of 4.
    fn string(&mut self, s: &str, what: &'static str) -> Result<()> {
        if s.contains('\0') {
            return Err(self.error(AnieWriteErrorKind::NulInString {
                what,
                text: s.to_owned(),
            }));
        }
        self.bytes(s.as_bytes());
        let pad = 1 + (4 - (s.len() + 1) % 4) % 4;
        self.bytes(&[0; 4][..pad]);
        Ok(())
    }

    /// Starts a block: signature and a length to patch; returns where the length goes.
    fn begin(&mut self, signature: &'static str) -> usize {
        self.bytes(signature.as_bytes());
        let at = self.out.len();
        self.bytes(&[0; 8]);
        at
    }

    /// Patches a block's length: the bytes after the length field.
    fn end(&mut self, at: usize) {
        let length = (self.out.len() - at - 8) as u64;
        self.out[at..at + 8].copy_from_slice(&length.to_le_bytes());
    }

    fn record<T: for<'a> BinWrite<Args<'a> = ()> + binrw::meta::WriteEndian>(&mut self, r: &T) {
        let mut c = Cursor::new(Vec::new());
        // Writing fixed-size records of plain numbers to memory cannot fail.
        r.write(&mut c)
            .unwrap_or_else(|e| unreachable!("fixed-size record: {e}"));
        self.bytes(&c.into_inner());
    }

    // ---- the file ----

    fn file(&mut self) -> Result<()> {
        let p = self.p;
        self.record(&FileHeader {
            magic: MAGIC,
            endian: ENDIAN,
            major: MAJOR,
            minor: self.version.minor(),
            reserved: [0; 16],
        });
        self.record(&GlobalBlock {
            signature: GLBL,
            length: GLBL_LENGTH,
            canvas_width: p.canvas_width,
            canvas_height: p.canvas_height,
            max_frame: p.max_frame,
            fps: p.fps,
            looping: u8::from(p.looping),
            reserved: [0; 47],
        });

        let at = self.begin(block::RESOURCE);
        self.count(p.resources.len(), "resource tree")?;
        for (t, tree) in p.resources.iter().enumerate() {
            self.spot = Spot {
                resource: Some((t, 0)),
                ..Spot::default()
            };
            self.string(&tree.file_path, "resource file path")?;
            for (n, node) in tree.nodes.iter().enumerate() {
                self.spot.resource = Some((t, n));
                self.resource_node(ResourceRef { tree: t, node: n }, node)?;
            }
        }
        self.end(at);
        self.spot = Spot::default();

        let at = self.begin(block::OBJ_TREE);
        self.i32(i32::from(!p.objects.is_empty()));
        for (i, node) in p.objects.iter().enumerate() {
            self.spot = Spot {
                node: Some(i),
                ..Spot::default()
            };
            self.object_node(i, node)?;
        }
        self.end(at);
        Ok(())
    }

    fn resource_node(&mut self, me: ResourceRef, node: &ResourceNode) -> Result<()> {
        let at = self.begin(block::RES_NODE);
        self.string(&node.identifier, "resource identifier")?;
        self.count(node.children.len(), "resource child")?;
        let id = self.id(Obj::Resource(me));
        self.i32(id);
        self.bool(node.is_layer);
        self.irect(node.rect);
        self.bytes(&node.blend_mode.id());
        self.image(node.image.as_ref())?;
        self.end(at);
        Ok(())
    }

    /// An image (§2): null, or PackBits per channel row.
    fn image(&mut self, image: Option<&Image>) -> Result<()> {
        let Some(img) = image else {
            self.bytes(&[0; 12]);
            return Ok(());
        };
        let (w, h) = (img.width as usize, img.height as usize);
        if img.width > MAX_IMAGE_SIDE || img.height > MAX_IMAGE_SIDE {
            return Err(self.error(AnieWriteErrorKind::ImageTooLarge {
                width: img.width,
                height: img.height,
                max: MAX_IMAGE_SIDE,
            }));
        }
        if img.rgba.len() != w * h * 4 {
            return Err(self.error(AnieWriteErrorKind::ImageBufferSize {
                width: img.width,
                height: img.height,
                len: img.rgba.len(),
            }));
        }
        self.u32(1);
        self.u32(img.width);
        self.u32(img.height);
        let at = self.out.len();
        self.bytes(&[0; 8]);
        let mut line = std::mem::take(&mut self.line);
        let mut packed = std::mem::take(&mut self.packed);
        for y in 0..h {
            let row = &img.rgba[y * w * 4..(y + 1) * w * 4];
            for c in 0..4 {
                line.clear();
                line.extend(row.iter().skip(c).step_by(4));
                packed.clear();
                packbits_encode(&line, &mut packed);
                self.u32(packed.len() as u32);
                self.bytes(&packed);
            }
        }
        self.line = line;
        self.packed = packed;
        let total = (self.out.len() - at - 8) as u64;
        self.out[at..at + 8].copy_from_slice(&total.to_le_bytes());
        self.bytes(&[0; 4][..((4 - total % 4) % 4) as usize]);
        Ok(())
    }

    fn object_node(&mut self, index: usize, node: &ObjectNode) -> Result<()> {
        let at = self.begin(block::OBJ_NODE);
        self.i32(match node.kind {
            NodeKind::Layer => 0,
            NodeKind::Folder => 1,
        });
        self.count(node.children.len(), "object child")?;
        let id = self.id(Obj::Object(index));
        self.i32(id);
        let inner = self.begin(match node.kind {
            NodeKind::Layer => block::LAYER,
            NodeKind::Folder => block::FOLDER,
        });
        self.string(&node.name, "node name")?;
        self.bool(node.visible);
        self.bool(node.slim_down);
        self.irect(node.initial_rect);
        self.bool(node.clipped);
        self.timeline(index, &node.timeline)?;
        self.end(inner);
        self.end(at);
        Ok(())
    }

    // ---- timelines and keys ----

    fn timeline(&mut self, node: usize, tl: &Timeline) -> Result<()> {
        let at = self.begin(block::TIME_LINE);
        let maps = KeyKind::ALL.iter().filter(|&&k| !tl.is_empty(k)).count();
        self.count(maps, "key map")?;
        self.key_map(node, KeyKind::Move, &tl.moves, Self::move_key)?;
        self.key_map(node, KeyKind::Rotate, &tl.rotates, Self::rotate_key)?;
        self.key_map(node, KeyKind::Scale, &tl.scales, Self::scale_key)?;
        self.key_map(node, KeyKind::Depth, &tl.depths, Self::depth_key)?;
        self.key_map(node, KeyKind::Opa, &tl.opacities, Self::opa_key)?;
        self.key_map(node, KeyKind::Bone, &tl.bones, Self::bone_key)?;
        self.key_map(node, KeyKind::Pose, &tl.poses, Self::pose_key)?;
        self.key_map(node, KeyKind::Mesh, &tl.meshes, Self::mesh_key)?;
        self.key_map(node, KeyKind::Ffd, &tl.ffds, Self::ffd_key)?;
        self.key_map(node, KeyKind::Image, &tl.images, Self::image_key)?;
        self.key_map(node, KeyKind::Hsv, &tl.hsvs, Self::hsv_key)?;
        self.spot.map = None;
        self.spot.key = None;
        self.end(at);
        Ok(())
    }

    fn key_map<T>(
        &mut self,
        node: usize,
        kind: KeyKind,
        map: &KeyMap<T>,
        payload: fn(&mut Self, KeyRef, &T) -> Result<()>,
    ) -> Result<()> {
        if map.is_empty() {
            return Ok(());
        }
        self.spot.map = Some(kind);
        self.spot.key = None;
        if kind == KeyKind::Hsv && self.version < AnieVersion::V0_6 {
            return Err(self.error(AnieWriteErrorKind::NeedsVersion {
                what: "an HSV key",
                needed: AnieVersion::V0_6,
            }));
        }
        let at = self.begin(block::TIME_MAP);
        self.string(kind.name(), "key type name")?;
        self.bool(map.default.is_some());
        if let Some(key) = &map.default {
            self.spot.key = Some(key.frame);
            if key.frame != -1 {
                return Err(self.error(AnieWriteErrorKind::BadKeyFrame {
                    frame: key.frame,
                    problem: "a default key's frame is -1",
                }));
            }
            let r = KeyRef {
                node,
                kind,
                slot: KeySlot::Default,
            };
            self.time_key(r, key, payload)?;
        }
        self.count(map.keys.len(), "key")?;
        let mut last = -1;
        for (i, key) in map.keys.iter().enumerate() {
            self.spot.key = Some(key.frame);
            if key.frame <= last {
                return Err(self.error(AnieWriteErrorKind::BadKeyFrame {
                    frame: key.frame,
                    problem: if key.frame < 0 {
                        "keys are at frames ≥ 0"
                    } else {
                        "keys must be in strictly ascending frame order"
                    },
                }));
            }
            last = key.frame;
            self.i32(key.frame);
            let r = KeyRef {
                node,
                kind,
                slot: KeySlot::At(i),
            };
            self.time_key(r, key, payload)?;
        }
        self.end(at);
        Ok(())
    }

    fn time_key<T>(
        &mut self,
        me: KeyRef,
        key: &TimeKey<T>,
        payload: fn(&mut Self, KeyRef, &T) -> Result<()>,
    ) -> Result<()> {
        let id = self.id(Obj::Key(me));
        self.i32(id);
        payload(self, me, &key.value)?;
        self.spot.bone = None;
        self.count(key.children.len(), "key child")?;
        for &child in &key.children {
            let id = self.id(Obj::Key(child));
            self.i32(id);
        }
        Ok(())
    }

    fn easing(&mut self, e: &Easing) -> Result<()> {
        if self.version < AnieVersion::V0_8 {
            if e.kind == EasingKind::Custom {
                return Err(self.error(AnieWriteErrorKind::NeedsVersion {
                    what: "a Custom (cubic-bezier) easing",
                    needed: AnieVersion::V0_8,
                }));
            }
            if e.bezier != Easing::DEFAULT_BEZIER {
                return Err(self.error(AnieWriteErrorKind::NeedsVersion {
                    what: "an easing with bezier control points other than (1, 0, 0, 1)",
                    needed: AnieVersion::V0_8,
                }));
            }
        }
        self.i32(e.kind.code());
        self.i32(e.range.code());
        self.ranged(e.weight, 0.0, 1.0, "easing weight", "in [0, 1]")?;
        if self.version >= AnieVersion::V0_8 {
            for v in e.bezier {
                self.f32(v, "easing bezier")?;
            }
        }
        Ok(())
    }

    fn move_key(&mut self, _: KeyRef, k: &MoveKey) -> Result<()> {
        self.easing(&k.easing)?;
        self.i32(match k.spline {
            Spline::Linear => 0,
            Spline::CatmullRom => 1,
        });
        for v in [k.pos.x, k.pos.y] {
            self.ranged(
                v,
                -TRANSLATE_LIMIT,
                TRANSLATE_LIMIT,
                "move position",
                "within ±1e7",
            )?;
        }
        for v in [k.centroid.x, k.centroid.y] {
            self.ranged(
                v,
                -TRANSLATE_LIMIT,
                TRANSLATE_LIMIT,
                "move centroid",
                "within ±1e7",
            )?;
        }
        Ok(())
    }

    fn rotate_key(&mut self, _: KeyRef, k: &RotateKey) -> Result<()> {
        self.easing(&k.easing)?;
        self.ranged(
            k.rotate,
            -ROTATE_LIMIT,
            ROTATE_LIMIT,
            "rotation",
            "within ±1e4",
        )
    }

    fn scale_key(&mut self, _: KeyRef, k: &ScaleKey) -> Result<()> {
        self.easing(&k.easing)?;
        for v in [k.scale.x, k.scale.y] {
            self.ranged(v, -SCALE_LIMIT, SCALE_LIMIT, "scale", "within ±1e4")?;
        }
        Ok(())
    }

    fn depth_key(&mut self, _: KeyRef, k: &DepthKey) -> Result<()> {
        self.easing(&k.easing)?;
        self.ranged(
            k.depth,
            -TRANSLATE_LIMIT,
            TRANSLATE_LIMIT,
            "depth",
            "within ±1e7",
        )
    }

    fn opa_key(&mut self, _: KeyRef, k: &OpaKey) -> Result<()> {
        self.easing(&k.easing)?;
        self.ranged(k.opacity, 0.0, 1.0, "opacity", "in [0, 1]")
    }

    fn hsv_key(&mut self, _: KeyRef, k: &HsvKey) -> Result<()> {
        self.easing(&k.easing)?;
        if self.version < AnieVersion::V0_7 && k.absolute {
            return Err(self.error(AnieWriteErrorKind::NeedsVersion {
                what: "an absolute HSV key",
                needed: AnieVersion::V0_7,
            }));
        }
        self.i32(k.hue);
        self.i32(k.sat);
        self.i32(k.val);
        if self.version >= AnieVersion::V0_7 {
            self.i32(i32::from(k.absolute));
        }
        Ok(())
    }

    fn object_id(&mut self, node: usize, what: &'static str) -> Result<i32> {
        if node >= self.p.objects.len() {
            return Err(self.error(AnieWriteErrorKind::IndexOutOfRange {
                what,
                index: node as u64,
                count: self.p.objects.len(),
            }));
        }
        Ok(self.id(Obj::Object(node)))
    }

    fn bone_key(&mut self, me: KeyRef, k: &BoneKey) -> Result<()> {
        self.bones(me, &k.bones)?;
        let owner = match k.cache_owner {
            Some(n) => self.object_id(n, "bone key cache owner")?,
            None => 0,
        };
        self.i32(owner);
        self.count(k.caches.len(), "bone cache")?;
        for c in &k.caches {
            let id = self.object_id(c.node, "bone cache node")?;
            self.i32(id);
            self.mat4(&c.inner_matrix, "cache inner matrix")?;
            self.vec2(c.obsolete, "cache obsolete vec2")?;
            self.i32(c.frame_sign.value);
            self.i32(c.frame_sign.milli);
            if c.indices.len() != c.weights.len() {
                return Err(self.error(AnieWriteErrorKind::MeshArrays {
                    what: "influence weights",
                    len: c.weights.len(),
                    expected: c.indices.len(),
                }));
            }
            self.count(c.indices.len(), "influence vertex")?;
            self.i32(c.max_bone_count);
            for half in 0..2 {
                for v in &c.indices {
                    for &x in &v[half * 4..half * 4 + 4] {
                        self.i32(x);
                    }
                }
            }
            for half in 0..2 {
                for v in &c.weights {
                    for &x in &v[half * 4..half * 4 + 4] {
                        self.f32(x, "influence weight")?;
                    }
                }
            }
        }
        self.count(k.binding_caches.len(), "binding cache")?;
        for c in &k.binding_caches {
            let id = self.object_id(c.node, "binding cache node")?;
            self.i32(id);
            self.i32(c.bone_index);
            self.mat4(&c.inner_matrix, "binding cache inner matrix")?;
        }
        Ok(())
    }

    fn pose_key(&mut self, me: KeyRef, k: &PoseKey) -> Result<()> {
        self.easing(&k.easing)?;
        self.bones(me, &k.bones)
    }

    /// Bone records in pre-order (checked by `check_structure`).
    fn bones(&mut self, me: KeyRef, bones: &[Bone]) -> Result<()> {
        self.count(
            bones.iter().filter(|b| b.parent.is_none()).count(),
            "top bone",
        )?;
        for (i, b) in bones.iter().enumerate() {
            self.spot.bone = Some(i);
            self.count(b.children.len(), "bone child")?;
            let id = self.id(Obj::Bone(BoneRef { key: me, bone: i }));
            self.i32(id);
            let origin = b.origin.map_or(0, |o| self.id(Obj::Bone(o)));
            self.i32(origin);
            self.vec2(b.local_pos, "bone local position")?;
            self.f32(b.local_angle, "bone local angle")?;
            self.vec2(b.range[0], "bone range")?;
            self.vec2(b.range[1], "bone range")?;
            let s = &b.shape;
            self.bool(s.valid);
            self.vec2(s.seg_start, "bone shape segment")?;
            self.vec2(s.seg_dir, "bone shape segment")?;
            self.vec2(s.v_unit, "bone shape vUnit")?;
            self.f32(s.v_dir_angle, "bone shape vDirAngle")?;
            self.f32(s.length, "bone shape length")?;
            self.vec2(s.radius[0], "bone shape radius")?;
            self.vec2(s.radius[1], "bone shape radius")?;
            for v in s.root_bend.into_iter().chain(s.tail_bend) {
                self.f32(v, "bone shape bend")?;
            }
            for v in [
                s.bounding.x,
                s.bounding.y,
                s.bounding.width,
                s.bounding.height,
            ] {
                self.f32(v, "bone shape bounding")?;
            }
            self.count(s.polygon.len(), "bone polygon point")?;
            for &v in &s.polygon {
                self.vec2(v, "bone polygon point")?;
            }
            self.count(b.binding_nodes.len(), "bone binding node")?;
            for &n in &b.binding_nodes {
                let id = self.object_id(n, "bone binding node")?;
                self.i32(id);
            }
            self.vec2(b.world_pos, "bone world position")?;
            self.f32(b.world_angle, "bone world angle")?;
            self.f32(b.rotate, "bone rotate")?;
        }
        self.spot.bone = None;
        Ok(())
    }

    fn mesh_key(&mut self, _: KeyRef, k: &MeshKey) -> Result<()> {
        self.vec2(k.origin_offset, "mesh origin offset")?;
        self.count(k.vertices.len(), "mesh vertex")?;
        for &v in &k.vertices {
            self.vec2(v, "mesh vertex")?;
        }
        self.count(k.edges.len(), "mesh edge")?;
        for e in &k.edges {
            for &v in e {
                self.index(v, k.vertices.len(), "mesh edge vertex")?;
            }
        }
        self.count(k.faces.len(), "mesh face")?;
        for f in &k.faces {
            for &e in f {
                self.index(e, k.edges.len(), "mesh face edge")?;
            }
        }
        Ok(())
    }

    /// An index that must be below `count` (and fit an i32).
    fn index(&mut self, i: u32, count: usize, what: &'static str) -> Result<()> {
        if i as usize >= count || i > i32::MAX as u32 {
            return Err(self.error(AnieWriteErrorKind::IndexOutOfRange {
                what,
                index: i.into(),
                count,
            }));
        }
        self.u32(i);
        Ok(())
    }

    fn ffd_key(&mut self, _: KeyRef, k: &FfdKey) -> Result<()> {
        self.easing(&k.easing)?;
        self.count(k.positions.len(), "FFD position")?;
        for &v in &k.positions {
            self.vec3(v, "FFD position")?;
        }
        Ok(())
    }

    fn image_key(&mut self, _: KeyRef, k: &ImageKey) -> Result<()> {
        self.easing(&k.easing)?;
        let id = match k.resource {
            Some(r) if self.p.resource(r).is_some() => self.id(Obj::Resource(r)),
            Some(_) => {
                return Err(self.error(AnieWriteErrorKind::DanglingReference {
                    what: "image key resource",
                }));
            }
            None => 0,
        };
        self.i32(id);
        self.bytes(&k.blend_mode.id());
        self.vec2(k.image_offset, "image offset")?;
        self.grid_mesh(&k.mesh)
    }

    fn grid_mesh(&mut self, m: &GridMesh) -> Result<()> {
        let n = m.positions.len();
        for (what, len) in [
            ("grid mesh offsets", m.offsets.len()),
            ("grid mesh texcoords", m.texcoords.len()),
            ("grid mesh normals", m.normals.len()),
            ("grid mesh connections", m.connections.len()),
        ] {
            if len != n {
                return Err(self.error(AnieWriteErrorKind::MeshArrays {
                    what,
                    len,
                    expected: n,
                }));
            }
        }
        let at = self.begin(block::GRID_MESH);
        self.i32(0);
        self.i32(m.size[0]);
        self.i32(m.size[1]);
        self.vec2(m.origin_offset, "grid mesh origin offset")?;
        self.i32(m.cell_px);
        self.i32(0);
        self.count(m.indices.len(), "grid mesh index")?;
        for &i in &m.indices {
            if i as usize >= n {
                return Err(self.error(AnieWriteErrorKind::IndexOutOfRange {
                    what: "grid mesh index",
                    index: i.into(),
                    count: n,
                }));
            }
            self.u32(i);
        }
        self.count(n, "grid mesh vertex")?;
        if n > 0 {
            for &v in &m.positions {
                self.vec3(v, "grid mesh position")?;
            }
            for &v in &m.offsets {
                self.vec3(v, "grid mesh offset")?;
            }
            for &v in &m.texcoords {
                self.vec2(v, "grid mesh texcoord")?;
            }
            for &v in &m.normals {
                self.vec3(v, "grid mesh normal")?;
            }
            self.bytes(&(24 * n as u64).to_le_bytes());
            for c in &m.connections {
                for &v in c {
                    self.i32(v);
                }
            }
        }
        if self.version >= AnieVersion::V0_5 {
            self.irect(m.vertex_rect);
        }
        self.end(at);
        Ok(())
    }
}

/// Whether following `next` from any start comes back round (each item has at most one
/// successor). Linear in the number of items.
fn on_cycle<T: Copy + Eq + std::hash::Hash>(starts: &[T], next: impl Fn(&T) -> Option<T>) -> bool {
    let mut done = HashSet::new();
    for &start in starts {
        let mut on_walk = HashSet::new();
        let mut k = start;
        while let Some(succ) = next(&k) {
            if done.contains(&k) {
                break;
            }
            if !on_walk.insert(k) {
                return true;
            }
            k = succ;
        }
        done.extend(on_walk);
    }
    false
}
