//! The `.anie` project model: plain data, as the module face describes it.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use glam::{Mat4, Vec2, Vec3};
use std::collections::HashMap;
use std::fmt;

/// Format versions (header major 0, minor 4..=8; §1.7). The reader takes all five; the writer
/// writes 0.5, 0.7 and 0.8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum AnieVersion {
    /// AnimeEffects 1.0–1.2.1: no GridMesh `vertexRect`.
    V0_4,
    /// AnimeEffects 1.3–1.4.0 (the original repository's last format).
    V0_5,
    /// AnimeEffects 1.4.2–1.4.3: HSV keys with 3 ints.
    V0_6,
    /// AnimeEffects 1.5.0–1.6.1: HSV keys with 4 ints (the `absolute` flag).
    V0_7,
    /// AnimeEffects 1.7: 28-byte easing with a cubic-bezier curve.
    #[default]
    V0_8,
}

impl AnieVersion {
    /// The header's minor version number.
    pub const fn minor(self) -> u32 {
        match self {
            AnieVersion::V0_4 => 4,
            AnieVersion::V0_5 => 5,
            AnieVersion::V0_6 => 6,
            AnieVersion::V0_7 => 7,
            AnieVersion::V0_8 => 8,
        }
    }

    /// The version with this header minor number (major 0).
    pub(crate) const fn from_minor(minor: u32) -> Option<Self> {
        match minor {
            4 => Some(AnieVersion::V0_4),
            5 => Some(AnieVersion::V0_5),
            6 => Some(AnieVersion::V0_6),
            7 => Some(AnieVersion::V0_7),
            8 => Some(AnieVersion::V0_8),
            _ => None,
        }
    }
}

impl fmt::Display for AnieVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0.{}", self.minor())
    }
}

/// A whole `.anie` project.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnieFile {
    /// Canvas width in pixels (GLBL, §1.3).
    pub canvas_width: u32,
    /// Canvas height in pixels (GLBL, §1.3).
    pub canvas_height: u32,
    /// Index of the last frame: the timeline runs 0..=max_frame (GLBL, §1.3).
    pub max_frame: u32,
    /// Frames per second (GLBL, §1.3).
    pub fps: u32,
    /// Whether playback wraps from max_frame to 0; also enables the loop wrap of key
    /// interpolation (GLBL, §1.3; §4.1 rule 5).
    pub looping: bool,
    /// The imported images, one tree per source file (`Resource` block, §1.5).
    pub resources: Vec<ResourceTree>,
    /// The object tree (`ObjTree_` block, §1.5) in pre-order; empty or rooted at index 0.
    pub objects: Vec<ObjectNode>,
}

/// So that functions can take a project, a reference to one, or an `Arc` of one alike.
impl AsRef<AnieFile> for AnieFile {
    fn as_ref(&self) -> &AnieFile {
        self
    }
}

/// One imported source file (PSD/ORA) and its layer tree (§1.5).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourceTree {
    /// Path of the source file, relative to the project folder.
    pub file_path: String,
    /// The `ResNode_` tree in pre-order; index 0 is the root ("topnode" for an import).
    pub nodes: Vec<ResourceNode>,
}

/// A `ResNode_`: a layer or folder of the imported file (§1.5).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourceNode {
    /// The layer or folder name in the source file.
    pub identifier: String,
    /// Whether this is a layer (with pixels) rather than a folder.
    pub is_layer: bool,
    /// x, y: top-left on the source canvas (unused at playback); width, height: the image size.
    pub rect: IRect,
    /// The source file's blend mode for this layer. Playback uses the ImageKey's (§4.9).
    pub blend_mode: BlendMode,
    /// The decoded pixels; `None` for a null image (folders).
    pub image: Option<Image>,
    /// Parent node index in [`ResourceTree::nodes`]; `None` for the root.
    pub parent: Option<usize>,
    /// Child node indices, in file order.
    pub children: Vec<usize>,
}

/// An RGBA8 image: 4 bytes per pixel, straight alpha, rows top to bottom (§2).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height × 4` bytes; pixel (x, y) starts at `(y × width + x) × 4`.
    pub rgba: Vec<u8>,
}

impl fmt::Debug for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Image {{ {}×{}, {} bytes }}",
            self.width,
            self.height,
            self.rgba.len()
        )
    }
}

/// An integer rectangle (`QRect`: x, y, width, height; §1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IRect {
    /// Left edge.
    pub x: i32,
    /// Top edge.
    pub y: i32,
    /// Width.
    pub width: i32,
    /// Height.
    pub height: i32,
}

/// A float rectangle (`QRectF`: x, y, width, height; §1.1).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FRect {
    /// Left edge.
    pub x: f32,
    /// Top edge.
    pub y: f32,
    /// Width.
    pub width: f32,
    /// Height.
    pub height: f32,
}

/// Blend modes: the 4-byte ids of the file (PSD keys) and AnimeEffects' enum order (§4.9).
/// Each variant gives its id and its formula per channel, A the destination and B the layer
/// (straight alpha; [`crate::anie::blend`] composites the result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BlendMode {
    /// `norm`: B.
    #[default]
    Normal,
    /// `dark`: min(A, B).
    Darken,
    /// `mul `: A·B.
    Multiply,
    /// `idiv`: B = 0 ? 0 : max(0, 1 − (1 − A)/B).
    ColorBurn,
    /// `lbrn`: max(0, A + B − 1).
    LinearBurn,
    /// `lite`: max(A, B).
    Lighten,
    /// `scrn`: 1 − (1 − A)(1 − B).
    Screen,
    /// `div `: B = 1 ? 1 : min(1, A/(1 − B)).
    ColorDodge,
    /// `lddg` (Add): min(1, A + B).
    LinearDodge,
    /// `over`: A < 0.5 ? 2AB : 1 − 2(1 − A)(1 − B).
    Overlay,
    /// `sLit`: A < 0.5 ? 2AB + A²(1 − 2B) : √A·(2B − 1) + 2A(1 − B).
    SoftLight,
    /// `hLit`: Overlay with A and B swapped.
    HardLight,
    /// `vLit`: B < 0.5 ? ColorBurn(A, 2B) : ColorDodge(A, 2(B − 0.5)).
    VividLight,
    /// `lLit`: B < 0.5 ? LinearBurn(A, 2B) : LinearDodge(A, 2(B − 0.5)).
    LinearLight,
    /// `pLit`: B < 0.5 ? Darken(A, 2B) : Lighten(A, 2(B − 0.5)).
    PinLight,
    /// `hMix`: VividLight(A, B) < 0.5 ? 0 : 1.
    HardMix,
    /// `diff`: |A − B|.
    Difference,
    /// `smud`: A + B − 2AB.
    Exclusion,
    /// `fsub`: max(0, A − B).
    Subtract,
    /// `fdiv`: B = 0 ? 0 : min(1, A/B).
    Divide,
}

impl BlendMode {
    /// Every mode, in AnimeEffects' enum order.
    pub const ALL: [BlendMode; 20] = [
        BlendMode::Normal,
        BlendMode::Darken,
        BlendMode::Multiply,
        BlendMode::ColorBurn,
        BlendMode::LinearBurn,
        BlendMode::Lighten,
        BlendMode::Screen,
        BlendMode::ColorDodge,
        BlendMode::LinearDodge,
        BlendMode::Overlay,
        BlendMode::SoftLight,
        BlendMode::HardLight,
        BlendMode::VividLight,
        BlendMode::LinearLight,
        BlendMode::PinLight,
        BlendMode::HardMix,
        BlendMode::Difference,
        BlendMode::Exclusion,
        BlendMode::Subtract,
        BlendMode::Divide,
    ];

    /// The 4-byte id stored in the file (§4.9 table).
    pub const fn id(self) -> [u8; 4] {
        *match self {
            BlendMode::Normal => b"norm",
            BlendMode::Darken => b"dark",
            BlendMode::Multiply => b"mul ",
            BlendMode::ColorBurn => b"idiv",
            BlendMode::LinearBurn => b"lbrn",
            BlendMode::Lighten => b"lite",
            BlendMode::Screen => b"scrn",
            BlendMode::ColorDodge => b"div ",
            BlendMode::LinearDodge => b"lddg",
            BlendMode::Overlay => b"over",
            BlendMode::SoftLight => b"sLit",
            BlendMode::HardLight => b"hLit",
            BlendMode::VividLight => b"vLit",
            BlendMode::LinearLight => b"lLit",
            BlendMode::PinLight => b"pLit",
            BlendMode::HardMix => b"hMix",
            BlendMode::Difference => b"diff",
            BlendMode::Exclusion => b"smud",
            BlendMode::Subtract => b"fsub",
            BlendMode::Divide => b"fdiv",
        }
    }

    /// The mode with this id; `None` for an unknown id (a load error in AnimeEffects).
    pub(crate) fn from_id(id: [u8; 4]) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.id() == id)
    }
}

/// An `ObjNode_`: a layer or a folder of the object tree (§1.5).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObjectNode {
    /// Layer (draws an image) or folder (groups children).
    pub kind: NodeKind,
    /// The node's name (as shown in the layer panel).
    pub name: String,
    /// `false` hides the node and its whole subtree (§4.4).
    pub visible: bool,
    /// UI only: the row is collapsed in the timeline panel.
    pub slim_down: bool,
    /// The import rect on the canvas; used by editing and import only.
    pub initial_rect: IRect,
    /// The PSD "clipping" flag: clipped by the next unclipped sibling (§4.8).
    pub clipped: bool,
    /// Parent index in [`AnieFile::objects`]; `None` for the root.
    pub parent: Option<usize>,
    /// Child indices in file order: the first child is the top of the layer panel. Always
    /// empty for layers.
    pub children: Vec<usize>,
    /// The node's keys (§1.5 TimeLine, §3).
    pub timeline: Timeline,
}

/// Object node type (i32 0 = Layer, 1 = Folder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NodeKind {
    /// Draws an image (i32 0).
    Layer,
    #[default]
    /// Groups its children (i32 1).
    Folder,
}

/// The key types, in the file's map order (`TimeKeyType.h`, §1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyKind {
    /// Translation and pivot ([`MoveKey`]).
    Move,
    /// Rotation ([`RotateKey`]).
    Rotate,
    /// Scale ([`ScaleKey`]).
    Scale,
    /// Draw-order depth ([`DepthKey`]).
    Depth,
    /// Opacity ([`OpaKey`]).
    Opa,
    /// A skeleton ([`BoneKey`]).
    Bone,
    /// A skeleton's pose ([`PoseKey`]).
    Pose,
    /// A user-drawn mesh ([`MeshKey`]).
    Mesh,
    /// Free-form deformation of a mesh ([`FfdKey`]).
    Ffd,
    /// The image, blend mode and grid mesh ([`ImageKey`]).
    Image,
    /// Hue, saturation and value ([`HsvKey`]).
    Hsv,
}

impl KeyKind {
    /// Every type, in map order.
    pub const ALL: [KeyKind; 11] = [
        KeyKind::Move,
        KeyKind::Rotate,
        KeyKind::Scale,
        KeyKind::Depth,
        KeyKind::Opa,
        KeyKind::Bone,
        KeyKind::Pose,
        KeyKind::Mesh,
        KeyKind::Ffd,
        KeyKind::Image,
        KeyKind::Hsv,
    ];

    /// The `TimeMap_` type name.
    pub const fn name(self) -> &'static str {
        match self {
            KeyKind::Move => "Move",
            KeyKind::Rotate => "Rotate",
            KeyKind::Scale => "Scale",
            KeyKind::Depth => "Depth",
            KeyKind::Opa => "Opa",
            KeyKind::Bone => "Bone",
            KeyKind::Pose => "Pose",
            KeyKind::Mesh => "Mesh",
            KeyKind::Ffd => "FFD",
            KeyKind::Image => "Image",
            KeyKind::Hsv => "HSV",
        }
    }

    /// The type with this `TimeMap_` name; `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for KeyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which key of a map: the default key (frame −1) or the key at an index of
/// [`KeyMap::keys`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeySlot {
    /// The default key (frame −1).
    Default,
    /// The key at this index of [`KeyMap::keys`].
    At(usize),
}

/// A key anywhere in the project: object node index, key type, slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyRef {
    /// Object node index in [`AnieFile::objects`].
    pub node: usize,
    /// The key type: which of the node's maps.
    pub kind: KeyKind,
    /// Which key of that map.
    pub slot: KeySlot,
}

/// A bone of a Bone or Pose key: the key and the bone's index in its pre-order arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BoneRef {
    /// The Bone or Pose key.
    pub key: KeyRef,
    /// The bone's index in the key's bones (pre-order).
    pub bone: usize,
}

/// A resource node: tree index in [`AnieFile::resources`], node index in that tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceRef {
    /// Index in [`AnieFile::resources`].
    pub tree: usize,
    /// Index in that tree's [`ResourceTree::nodes`].
    pub node: usize,
}

/// A node's keys, one map per type (§1.5 TimeLine). A type with neither a default key nor keys
/// is not written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    /// Move keys.
    pub moves: KeyMap<MoveKey>,
    /// Rotate keys.
    pub rotates: KeyMap<RotateKey>,
    /// Scale keys.
    pub scales: KeyMap<ScaleKey>,
    /// Depth keys.
    pub depths: KeyMap<DepthKey>,
    /// Opacity keys.
    pub opacities: KeyMap<OpaKey>,
    /// Bone keys.
    pub bones: KeyMap<BoneKey>,
    /// Pose keys.
    pub poses: KeyMap<PoseKey>,
    /// Mesh keys.
    pub meshes: KeyMap<MeshKey>,
    /// FFD keys.
    pub ffds: KeyMap<FfdKey>,
    /// Image keys.
    pub images: KeyMap<ImageKey>,
    /// HSV keys.
    pub hsvs: KeyMap<HsvKey>,
}

/// The keys of one type (a `TimeMap_`, §1.5).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyMap<T> {
    /// The default key (frame −1): used only while the map has no keys (§4.1 rule 1).
    pub default: Option<TimeKey<T>>,
    /// Keys at frames ≥ 0, strictly ascending.
    pub keys: Vec<TimeKey<T>>,
}

impl<T> Default for KeyMap<T> {
    fn default() -> Self {
        Self {
            default: None,
            keys: Vec::new(),
        }
    }
}

impl<T> KeyMap<T> {
    /// Neither a default key nor keys (such a map is not written).
    pub fn is_empty(&self) -> bool {
        self.default.is_none() && self.keys.is_empty()
    }

    /// The key in `slot`, if there is one.
    pub fn get(&self, slot: KeySlot) -> Option<&TimeKey<T>> {
        match slot {
            KeySlot::Default => self.default.as_ref(),
            KeySlot::At(i) => self.keys.get(i),
        }
    }

    /// The key in `slot` for changing, if there is one.
    pub fn get_mut(&mut self, slot: KeySlot) -> Option<&mut TimeKey<T>> {
        match slot {
            KeySlot::Default => self.default.as_mut(),
            KeySlot::At(i) => self.keys.get_mut(i),
        }
    }

    /// Index of the last key with frame ≤ `frame` (the step-key rule of §4.1).
    pub(crate) fn last_at_or_before(&self, frame: i32) -> Option<usize> {
        self.keys
            .partition_point(|k| k.frame <= frame)
            .checked_sub(1)
    }

    /// Every slot with its key: the default key first, then the keys.
    pub fn slots(&self) -> impl Iterator<Item = (KeySlot, &TimeKey<T>)> {
        self.default.iter().map(|k| (KeySlot::Default, k)).chain(
            self.keys
                .iter()
                .enumerate()
                .map(|(i, k)| (KeySlot::At(i), k)),
        )
    }
}

/// One key (§1.5 TimeKey).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeKey<T> {
    /// The key's frame; −1 for a default key.
    pub frame: i32,
    /// The type's payload (§3).
    pub value: T,
    /// Keys that hang off this one, in file order: a Bone key's Pose keys, a Mesh or Image
    /// key's FFD keys. A key has at most one parent, which is recorded only here (§1.5);
    /// [`AnieFile::key_parents`] inverts these lists.
    pub children: Vec<KeyRef>,
}

impl<T> TimeKey<T> {
    /// A key at `frame` without children.
    pub fn new(frame: i32, value: T) -> Self {
        Self {
            frame,
            value,
            children: Vec::new(),
        }
    }
}

/// Easing type (i32; §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EasingKind {
    /// Hold the earlier key until the next key's frame (a step).
    None,
    #[default]
    /// Linear interpolation (no easing).
    Linear,
    /// Sinusoidal.
    Sine,
    /// Quadratic (t²).
    Quad,
    /// Cubic (t³).
    Cubic,
    /// Quartic (t⁴).
    Quart,
    /// Quintic (t⁵).
    Quint,
    /// Exponential.
    Expo,
    /// Circular.
    Circ,
    /// Overshoots, then settles.
    Back,
    /// A damped spring.
    Elastic,
    /// Bounces against the end.
    Bounce,
    /// Cubic bezier through (0,0), `bezier[0..2]`, `bezier[2..4]`, (1,1). Format ≥ 0.8 only.
    Custom,
}

impl EasingKind {
    /// Every type, in code order (the index is [`EasingKind::code`]).
    pub const ALL: [EasingKind; 13] = [
        EasingKind::None,
        EasingKind::Linear,
        EasingKind::Sine,
        EasingKind::Quad,
        EasingKind::Cubic,
        EasingKind::Quart,
        EasingKind::Quint,
        EasingKind::Expo,
        EasingKind::Circ,
        EasingKind::Back,
        EasingKind::Elastic,
        EasingKind::Bounce,
        EasingKind::Custom,
    ];

    /// The value stored in the file.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The type with this file code; `None` for an unknown code.
    pub fn from_code(code: i32) -> Option<Self> {
        usize::try_from(code)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }
}

/// Which end of the segment the easing shapes (i32 0 In, 1 Out, 2 InOut; §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EasingRange {
    /// Shapes the start of the segment.
    In,
    /// Shapes the end of the segment.
    Out,
    /// Shown as "All" in the editor.
    #[default]
    InOut,
}

impl EasingRange {
    /// The value stored in the file.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The range with this file code; `None` for an unknown code.
    pub fn from_code(code: i32) -> Option<Self> {
        match code {
            0 => Some(EasingRange::In),
            1 => Some(EasingRange::Out),
            2 => Some(EasingRange::InOut),
            _ => None,
        }
    }
}

/// `Easing::Param` (§1.1, §4.2): 12 bytes before format 0.8, 28 from 0.8 on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Easing {
    /// The easing curve.
    pub kind: EasingKind,
    /// Which end of the segment it shapes.
    pub range: EasingRange,
    /// Mix toward linear, in [0, 1]: `s = eased·w + (t/d)·(1−w)` for types above Linear.
    pub weight: f32,
    /// Cubic-bezier control points x1, y1, x2, y2 (format ≥ 0.8; used by `Custom` only).
    /// Files older than 0.8 read as [`Easing::DEFAULT_BEZIER`].
    pub bezier: [f32; 4],
}

impl Easing {
    /// The bezier AnimeEffects stores when none was edited, and older files imply.
    pub const DEFAULT_BEZIER: [f32; 4] = [1.0, 0.0, 0.0, 1.0];
}

impl Default for Easing {
    /// Linear, InOut, weight 1, default bezier (§4.2).
    fn default() -> Self {
        Self {
            kind: EasingKind::Linear,
            range: EasingRange::InOut,
            weight: 1.0,
            bezier: Self::DEFAULT_BEZIER,
        }
    }
}

/// Move key payload (§3): local translation and pivot offset.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MoveKey {
    /// How the segment from this key to the next is eased (§4.2).
    pub easing: Easing,
    /// How the position path bends through this key (§4.3).
    pub spline: Spline,
    /// Local translation, pixels (clamped to ±1e7 on load).
    pub pos: Vec2,
    /// Offset from the pivot to the node's content (`T(centroid)` is applied first; §4.3).
    pub centroid: Vec2,
}

/// Move key spline (i32 0 = Linear, 1 = Catmull-Rom).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Spline {
    #[default]
    /// Straight lines between the positions (i32 0).
    Linear,
    /// A Catmull-Rom curve through the positions (i32 1; §4.3).
    CatmullRom,
}

/// Rotate key payload (§3).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RotateKey {
    /// How the segment from this key to the next is eased (§4.2).
    pub easing: Easing,
    /// Radians about +z, clockwise on screen (y is down); clamped to ±1e4 on load.
    pub rotate: f32,
}

/// Scale key payload (§3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScaleKey {
    /// How the segment from this key to the next is eased (§4.2).
    pub easing: Easing,
    /// Per-axis scale; negative flips (clamped to ±1e4 on load).
    pub scale: Vec2,
}

impl Default for ScaleKey {
    fn default() -> Self {
        Self {
            easing: Easing::default(),
            scale: Vec2::ONE,
        }
    }
}

/// Depth key payload (§3): draw order, added down the tree (§4.7).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DepthKey {
    /// How the segment from this key to the next is eased (§4.2).
    pub easing: Easing,
    /// Higher is in front; clamped to ±1e7 on load.
    pub depth: f32,
}

/// Opacity key payload (§3): multiplied down the tree (§4.4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpaKey {
    /// How the segment from this key to the next is eased (§4.2).
    pub easing: Easing,
    /// In [0, 1] (clamped on load).
    pub opacity: f32,
}

impl Default for OpaKey {
    fn default() -> Self {
        Self {
            easing: Easing::default(),
            opacity: 1.0,
        }
    }
}

/// HSV key payload (§3, §4.10; format ≥ 0.6).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HsvKey {
    /// How the segment from this key to the next is eased (§4.2).
    pub easing: Easing,
    /// Degrees added to the hue (or the hue itself when `absolute`).
    pub hue: i32,
    /// Saturation in percent (100 = unchanged).
    pub sat: i32,
    /// Value in percent (100 = unchanged).
    pub val: i32,
    /// The hue replaces rather than shifts (format ≥ 0.7; false in older files).
    pub absolute: bool,
}

impl Default for HsvKey {
    /// {0, 100, 100, false}: no change.
    fn default() -> Self {
        Self {
            easing: Easing::default(),
            hue: 0,
            sat: 100,
            val: 100,
            absolute: false,
        }
    }
}

/// Bone key payload (§3): a skeleton's rest pose and cached skin weights. A step key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoneKey {
    /// The bones in DFS pre-order over the top bones (roots have `parent == None`). The
    /// index is the bone's palette index (§4.5).
    pub bones: Vec<Bone>,
    /// The node whose world matrix carries the skinned meshes (the key's own node when
    /// AnimeEffects wrote it); `None` for ID 0.
    pub cache_owner: Option<usize>,
    /// Skin weights of each layer under the owner (stale-able; AnimeEffects ≥ 1.6 rebuilds
    /// them on load, Addendum 8).
    pub caches: Vec<BoneCache>,
    /// Rigid bindings of nodes to bones (§4.6).
    pub binding_caches: Vec<BindingCache>,
}

/// Pose key payload (§3): per-bone rotations, blended between the pose keys of one Bone key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PoseKey {
    /// How the segment from this key to the next is eased (§4.2).
    pub easing: Easing,
    /// Shadow copies of the Bone key's bones, same layout; each `origin` points at the Bone
    /// key bone it poses. Only `rotate` (and the stored world transform) belong to the pose.
    pub bones: Vec<Bone>,
}

/// A bone record (`Bone2`, §3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bone {
    /// Parent index in the key's bone arena; `None` for a top bone.
    pub parent: Option<usize>,
    /// Child indices in file order.
    pub children: Vec<usize>,
    /// For pose bones, the Bone key bone this one shadows; `None` (ID 0) for Bone key bones.
    pub origin: Option<BoneRef>,
    /// Root: the joint position; otherwise (length, 0) in the parent's frame.
    pub local_pos: Vec2,
    /// Radians, relative to the parent's world angle.
    pub local_angle: f32,
    /// Influence half-width (x) and along-bone extent (y) at the root and at the tail.
    pub range: [Vec2; 2],
    /// The influence shape built by the editor (§4.5).
    pub shape: BoneShape,
    /// Object nodes rigidly bound to this bone (§4.6).
    pub binding_nodes: Vec<usize>,
    /// Stored world position (pixels).
    pub world_pos: Vec2,
    /// Stored world angle (radians).
    pub world_angle: f32,
    /// The pose rotation (radians); not applied to roots.
    pub rotate: f32,
}

/// `BoneShape` (§3, §4.5 "Influence weights").
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoneShape {
    /// Whether the shape weighs vertices at all; an invalid one has no influence.
    pub valid: bool,
    /// Start of the bone's segment (its parent joint), in the owner's space.
    pub seg_start: Vec2,
    /// The segment from `seg_start` to the bone's end.
    pub seg_dir: Vec2,
    /// Unit vector along the segment: the long axis of the end ellipses.
    pub v_unit: Vec2,
    /// The segment's direction in radians: bend ranges are measured from it.
    pub v_dir_angle: f32,
    /// The segment's length, as stored.
    pub length: f32,
    /// Radii at the root (`[0]`) and tail (`[1]`): x across, y along.
    pub radius: [Vec2; 2],
    /// Bend range angles at the root.
    pub root_bend: [f32; 2],
    /// Bend range angles at the tail.
    pub tail_bend: [f32; 2],
    /// Bounding rectangle of `polygon`; points outside it have no influence.
    pub bounding: FRect,
    /// The influence region, closed implicitly; points outside it have no influence.
    pub polygon: Vec<Vec2>,
}

/// A BoneKey influence cache for one layer (§3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoneCache {
    /// The layer (object node index).
    pub node: usize,
    /// Product of local matrices from the layer up to, not including, the owner, at the key's
    /// frame.
    pub inner_matrix: Mat4,
    /// An obsolete vec2, written as (0, 0).
    pub obsolete: Vec2,
    /// The frame the cache was made for (AnimeEffects writes (−1, 0) for frame 0; Addendum 12).
    pub frame_sign: Frame,
    /// `maxBoneCount` of the influence map (32).
    pub max_bone_count: i32,
    /// Per vertex, 8 bone indices (indices0[4i..4i+4] then indices1[4i..4i+4]).
    pub indices: Vec<[i32; 8]>,
    /// Per vertex, the matching 8 weights.
    pub weights: Vec<[f32; 8]>,
}

/// A BoneKey binding cache (§3, §4.6).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BindingCache {
    /// The bound object node.
    pub node: usize,
    /// The bone's DFS index, root joint counted as 0.
    pub bone_index: i32,
    /// Node→owner local matrix product at the key's frame.
    pub inner_matrix: Mat4,
}

/// A fractional frame (`Frame`: i32 value, i32 milli; value + milli/1000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Frame {
    /// Whole frames.
    pub value: i32,
    /// Thousandths of a frame.
    pub milli: i32,
}

/// Mesh key payload (§3): a user-drawn mesh that replaces the image's grid mesh. A step key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeshKey {
    /// Added to every vertex before the node's matrix (`T(originOffset)`, §4.5), and to the
    /// texture coordinates (§2).
    pub origin_offset: Vec2,
    /// Vertex positions in node-local space; texcoords equal positions.
    pub vertices: Vec<Vec2>,
    /// Edges as vertex index pairs.
    pub edges: Vec<[u32; 2]>,
    /// Faces as edge index triples; vertex order edge0.v0, edge0.v1, then edge1's other end.
    pub faces: Vec<[u32; 3]>,
}

impl MeshKey {
    /// Face `f`'s three vertex indices in AnimeEffects' winding (§3): edge0's two ends, then
    /// the end of edge1 not already listed. `None` for a bad index or a degenerate face.
    pub fn face_vertices(&self, f: usize) -> Option<[u32; 3]> {
        let [e0, e1, _] = *self.faces.get(f)?;
        let [a, b] = *self.edges.get(e0 as usize)?;
        let third = self
            .edges
            .get(e1 as usize)?
            .iter()
            .copied()
            .find(|&v| v != a && v != b)?;
        Some([a, b, third])
    }
}

/// FFD key payload (§3): absolute vertex positions for the mesh of the parent key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FfdKey {
    /// How the segment from this key to the next is eased (§4.2).
    pub easing: Easing,
    /// One per vertex of the parent's mesh; z is normally 0.
    pub positions: Vec<Vec3>,
}

/// Image key payload (§3): texture, blend mode, offset and base mesh. A step key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImageKey {
    /// Stored but unused at playback.
    pub easing: Easing,
    /// The resource node whose image is drawn; `None` when the file's ID is 0 or is bound
    /// nowhere (the layer draws nothing; the reader warns).
    pub resource: Option<ResourceRef>,
    /// Blend mode for the layer while this key is active (§4.9).
    pub blend_mode: BlendMode,
    /// Where the image's top-left sits relative to the node origin; (−w/2, −h/2) centres it.
    pub image_offset: Vec2,
    /// The base mesh.
    pub mesh: GridMesh,
}

/// `GridMesh` block (§3): the mesh AnimeEffects built over an image.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GridMesh {
    /// The image size (`QSize`: width, height).
    pub size: [i32; 2],
    /// Always equal to the ImageKey's `image_offset` in files AnimeEffects wrote.
    pub origin_offset: Vec2,
    /// Grid cell size in pixels.
    pub cell_px: i32,
    /// Triangle list (GL_TRIANGLES), indices into the vertex arrays.
    pub indices: Vec<u32>,
    /// Vertex positions in image pixels (y down); z = 0 unless a height map was used.
    pub positions: Vec<Vec3>,
    /// Editing only.
    pub offsets: Vec<Vec3>,
    /// Texture coordinates in image pixels (equal to positions.xy).
    pub texcoords: Vec<Vec2>,
    /// Editing only.
    pub normals: Vec<Vec3>,
    /// Editing only: per vertex 6 neighbour indices, −1 = none.
    pub connections: Vec<[i32; 6]>,
    /// Editing only (format ≥ 0.5; rebuilt from the positions for 0.4 files: the bounding box
    /// with floored minimum and ceiled maximum).
    pub vertex_rect: IRect,
}

impl GridMesh {
    /// The bounding box of the positions as whole pixels: what the reader puts in
    /// `vertex_rect` for a 0.4 file, which has none.
    pub fn bounding_rect(&self) -> IRect {
        if self.positions.is_empty() {
            return IRect::default();
        }
        let (mut lo, mut hi) = (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN));
        for p in &self.positions {
            lo = lo.min(p.truncate());
            hi = hi.max(p.truncate());
        }
        let (lo, hi) = (lo.floor(), hi.ceil());
        IRect {
            x: lo.x as i32,
            y: lo.y as i32,
            width: (hi.x - lo.x) as i32,
            height: (hi.y - lo.y) as i32,
        }
    }
}

/// Runs `$body` with `$map` bound to the typed map of `$kind` in `$timeline`.
macro_rules! with_map {
    ($timeline:expr, $kind:expr, |$map:ident| $body:expr) => {
        match $kind {
            KeyKind::Move => {
                let $map = &$timeline.moves;
                $body
            }
            KeyKind::Rotate => {
                let $map = &$timeline.rotates;
                $body
            }
            KeyKind::Scale => {
                let $map = &$timeline.scales;
                $body
            }
            KeyKind::Depth => {
                let $map = &$timeline.depths;
                $body
            }
            KeyKind::Opa => {
                let $map = &$timeline.opacities;
                $body
            }
            KeyKind::Bone => {
                let $map = &$timeline.bones;
                $body
            }
            KeyKind::Pose => {
                let $map = &$timeline.poses;
                $body
            }
            KeyKind::Mesh => {
                let $map = &$timeline.meshes;
                $body
            }
            KeyKind::Ffd => {
                let $map = &$timeline.ffds;
                $body
            }
            KeyKind::Image => {
                let $map = &$timeline.images;
                $body
            }
            KeyKind::Hsv => {
                let $map = &$timeline.hsvs;
                $body
            }
        }
    };
}

/// [`with_map!`] with a mutable map.
macro_rules! with_map_mut {
    ($timeline:expr, $kind:expr, |$map:ident| $body:expr) => {
        match $kind {
            KeyKind::Move => {
                let $map = &mut $timeline.moves;
                $body
            }
            KeyKind::Rotate => {
                let $map = &mut $timeline.rotates;
                $body
            }
            KeyKind::Scale => {
                let $map = &mut $timeline.scales;
                $body
            }
            KeyKind::Depth => {
                let $map = &mut $timeline.depths;
                $body
            }
            KeyKind::Opa => {
                let $map = &mut $timeline.opacities;
                $body
            }
            KeyKind::Bone => {
                let $map = &mut $timeline.bones;
                $body
            }
            KeyKind::Pose => {
                let $map = &mut $timeline.poses;
                $body
            }
            KeyKind::Mesh => {
                let $map = &mut $timeline.meshes;
                $body
            }
            KeyKind::Ffd => {
                let $map = &mut $timeline.ffds;
                $body
            }
            KeyKind::Image => {
                let $map = &mut $timeline.images;
                $body
            }
            KeyKind::Hsv => {
                let $map = &mut $timeline.hsvs;
                $body
            }
        }
    };
}

impl Timeline {
    /// Whether the map of `kind` is empty (not written).
    pub fn is_empty(&self, kind: KeyKind) -> bool {
        with_map!(self, kind, |m| m.is_empty())
    }

    /// The frame of a key; `None` when the slot is empty.
    pub fn frame(&self, kind: KeyKind, slot: KeySlot) -> Option<i32> {
        with_map!(self, kind, |m| m.get(slot).map(|k| k.frame))
    }

    /// The children of a key; `None` when the slot is empty.
    pub fn children(&self, kind: KeyKind, slot: KeySlot) -> Option<&[KeyRef]> {
        with_map!(self, kind, |m| m.get(slot).map(|k| k.children.as_slice()))
    }

    pub(crate) fn children_mut(
        &mut self,
        kind: KeyKind,
        slot: KeySlot,
    ) -> Option<&mut Vec<KeyRef>> {
        with_map_mut!(self, kind, |m| m.get_mut(slot).map(|k| &mut k.children))
    }

    /// Every slot of `kind`, default first.
    pub fn slots(&self, kind: KeyKind) -> Vec<KeySlot> {
        with_map!(self, kind, |m| m.slots().map(|(s, _)| s).collect())
    }

    /// The bones of a Bone or Pose key; `None` for other kinds or an empty slot.
    pub fn bones_of(&self, kind: KeyKind, slot: KeySlot) -> Option<&[Bone]> {
        match kind {
            KeyKind::Bone => self.bones.get(slot).map(|k| k.value.bones.as_slice()),
            KeyKind::Pose => self.poses.get(slot).map(|k| k.value.bones.as_slice()),
            _ => None,
        }
    }

    pub(crate) fn bones_of_mut(&mut self, kind: KeyKind, slot: KeySlot) -> Option<&mut Vec<Bone>> {
        match kind {
            KeyKind::Bone => self.bones.get_mut(slot).map(|k| &mut k.value.bones),
            KeyKind::Pose => self.poses.get_mut(slot).map(|k| &mut k.value.bones),
            _ => None,
        }
    }
}

impl AnieFile {
    /// The timeline of a key's node and the key's frame; `None` when the key does not exist.
    pub fn key_frame(&self, key: KeyRef) -> Option<i32> {
        self.objects
            .get(key.node)?
            .timeline
            .frame(key.kind, key.slot)
    }

    /// Whether `key` names an existing key.
    pub fn has_key(&self, key: KeyRef) -> bool {
        self.key_frame(key).is_some()
    }

    /// The children of a key.
    pub fn key_children(&self, key: KeyRef) -> Option<&[KeyRef]> {
        self.objects
            .get(key.node)?
            .timeline
            .children(key.kind, key.slot)
    }

    /// A bone of a Bone or Pose key.
    pub fn bone(&self, r: BoneRef) -> Option<&Bone> {
        self.objects
            .get(r.key.node)?
            .timeline
            .bones_of(r.key.kind, r.key.slot)?
            .get(r.bone)
    }

    /// A resource node.
    pub fn resource(&self, r: ResourceRef) -> Option<&ResourceNode> {
        self.resources.get(r.tree)?.nodes.get(r.node)
    }

    /// The image of a resource node, if it has one.
    pub fn image(&self, r: ResourceRef) -> Option<&Image> {
        self.resource(r)?.image.as_ref()
    }

    /// Each key's parent key (the inverse of [`TimeKey::children`]): FFD → its Image or Mesh
    /// key, Pose → its Bone key. Build once; the player's "forced parent" gathering (§4.1
    /// rule 6) looks parents up here.
    pub fn key_parents(&self) -> HashMap<KeyRef, KeyRef> {
        let mut out = HashMap::new();
        for (node, obj) in self.objects.iter().enumerate() {
            for kind in KeyKind::ALL {
                for slot in obj.timeline.slots(kind) {
                    let parent = KeyRef { node, kind, slot };
                    for &child in obj.timeline.children(kind, slot).unwrap_or(&[]) {
                        out.insert(child, parent);
                    }
                }
            }
        }
        out
    }
}
