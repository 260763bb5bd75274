//! Biovision Hierarchy (`.bvh`): the motion-capture text format that mocap libraries (CMU,
//! Mixamo's and Rokoko's exports, Blender) write. A `HIERARCHY` of joints, each with an
//! `OFFSET` from its parent and the `CHANNELS` its frames animate, then `MOTION`: a frame count,
//! a frame time and one row of channel values per frame.
//!
//! * **Rotations** are Euler angles in degrees, applied in the order the joint lists its
//!   rotation channels: `CHANNELS 3 Zrotation Xrotation Yrotation` is `Rz · Rx · Ry`, the
//!   convention of Biovision's format and of the tools that write it.
//! * **Positions.** A joint's position channels give its local translation itself (the
//!   `OFFSET` is then its rest position), as Blender's importer reads them; a joint without
//!   them stays at its `OFFSET`.
//! * **Axes and units** are the file's: +Y up in practice, in whatever unit it was written in
//!   (centimetres from most mocap, metres or inches from others). Retargeting scales by the
//!   hip heights, so the unit does not matter there.
//!
//! Reading never panics, never allocates from a count before checking it against the bytes
//! left, and says at which byte and what it expected when it stops.

use crate::animation::{BoneRef, BoneTrack, Clip, ClipBuilder};
use glam::{Quat, Vec3};

/// A channel a joint's frames animate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BvhChannel {
    /// Translation along X.
    Xposition,
    /// Translation along Y.
    Yposition,
    /// Translation along Z.
    Zposition,
    /// Rotation about X, degrees.
    Xrotation,
    /// Rotation about Y, degrees.
    Yrotation,
    /// Rotation about Z, degrees.
    Zrotation,
}

impl BvhChannel {
    fn parse(word: &str) -> Option<Self> {
        // Names as written; some exporters change their case.
        Some(match word.to_ascii_lowercase().as_str() {
            "xposition" => Self::Xposition,
            "yposition" => Self::Yposition,
            "zposition" => Self::Zposition,
            "xrotation" => Self::Xrotation,
            "yrotation" => Self::Yrotation,
            "zrotation" => Self::Zrotation,
            _ => return None,
        })
    }
}

/// A joint of the hierarchy.
#[derive(Debug, Clone, PartialEq)]
pub struct BvhJoint {
    /// The joint's name, as written.
    pub name: String,
    /// Index of its parent joint; `None` for a root.
    pub parent: Option<usize>,
    /// Its position in its parent's space at rest.
    pub offset: Vec3,
    /// The channels its frames animate, in the file's order.
    pub channels: Vec<BvhChannel>,
    /// Where its channels start in a frame's row.
    pub first_channel: usize,
    /// The `End Site` below it, if any: the position its last bone ends at.
    pub end_site: Option<Vec3>,
}

/// A motion-capture file: joints (parents before children) and frames.
#[derive(Debug, Clone, PartialEq)]
pub struct BvhFile {
    /// The joints, parents before children.
    pub joints: Vec<BvhJoint>,
    /// Seconds between frames.
    pub frame_time: f32,
    /// Channel values, frame after frame (`frames() × channels()` of them).
    pub values: Vec<f32>,
    channels: usize,
}

/// A read file and what was odd about it.
#[derive(Debug, Clone, PartialEq)]
pub struct BvhRead {
    /// The file.
    pub file: BvhFile,
    /// What was odd but readable (a frame count that disagrees with the rows, …).
    pub warnings: Vec<String>,
}

/// Why a `.bvh` file could not be read: what was expected, and at which byte.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind} at byte {offset}")]
pub struct BvhError {
    /// Byte offset of the token where reading stopped.
    pub offset: usize,
    /// What went wrong.
    pub kind: BvhErrorKind,
}

/// What went wrong in a [`BvhError`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BvhErrorKind {
    /// The file ended where more was expected.
    #[error("the file ends where {expected} was expected")]
    Truncated {
        /// What was expected.
        expected: &'static str,
    },
    /// A token other than the one expected.
    #[error("{found:?} where {expected} was expected")]
    Unexpected {
        /// What was found.
        found: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A number that does not read, or is not finite.
    #[error("{text:?} is not a finite number ({expected})")]
    BadNumber {
        /// The text.
        text: String,
        /// What the number was for.
        expected: &'static str,
    },
    /// More joints, channels or values than the file can hold, or than rigplay takes.
    #[error("{what}: {count} is more than {limit}")]
    TooMany {
        /// What was counted.
        what: &'static str,
        /// The count.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// The file is not text.
    #[error("the file is not text (UTF-8)")]
    NotText,
}

/// At most this many joints (mocap skeletons have 20 to 100; hands add 30).
pub const MAX_JOINTS: usize = 1024;

/// Whitespace-separated tokens with their byte offsets; braces are tokens of their own.
struct Tokens<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Tokens<'a> {
    fn next(&mut self) -> Option<(usize, &'a str)> {
        let bytes = self.text.as_bytes();
        while self.at < bytes.len() && bytes[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
        if self.at >= bytes.len() {
            return None;
        }
        let start = self.at;
        if matches!(bytes[start], b'{' | b'}') {
            self.at += 1;
            return Some((start, &self.text[start..self.at]));
        }
        while self.at < bytes.len()
            && !bytes[self.at].is_ascii_whitespace()
            && !matches!(bytes[self.at], b'{' | b'}')
        {
            self.at += 1;
        }
        Some((start, &self.text[start..self.at]))
    }

    fn expect_any(&mut self, expected: &'static str) -> Result<(usize, &'a str), BvhError> {
        self.next().ok_or(BvhError {
            offset: self.text.len(),
            kind: BvhErrorKind::Truncated { expected },
        })
    }

    /// The next token, which must be `word` (compared case-insensitively).
    fn expect(&mut self, word: &'static str) -> Result<usize, BvhError> {
        let (at, t) = self.expect_any(word)?;
        if t.eq_ignore_ascii_case(word) {
            Ok(at)
        } else {
            Err(unexpected(at, t, word))
        }
    }

    fn number(&mut self, expected: &'static str) -> Result<f32, BvhError> {
        let (at, t) = self.expect_any(expected)?;
        number(at, t, expected)
    }

    /// The rest of the line (a joint's name may hold spaces).
    fn rest_of_line(&mut self, expected: &'static str) -> Result<(usize, &'a str), BvhError> {
        let bytes = self.text.as_bytes();
        while self.at < bytes.len() && matches!(bytes[self.at], b' ' | b'\t') {
            self.at += 1;
        }
        let start = self.at;
        while self.at < bytes.len() && !matches!(bytes[self.at], b'\n' | b'\r' | b'{') {
            self.at += 1;
        }
        let name = self.text[start..self.at].trim();
        if name.is_empty() {
            return Err(BvhError {
                offset: start,
                kind: BvhErrorKind::Truncated { expected },
            });
        }
        Ok((start, name))
    }
}

fn unexpected(offset: usize, found: &str, expected: &'static str) -> BvhError {
    BvhError {
        offset,
        kind: BvhErrorKind::Unexpected {
            found: found.chars().take(40).collect(),
            expected,
        },
    }
}

fn number(offset: usize, text: &str, expected: &'static str) -> Result<f32, BvhError> {
    text.parse::<f32>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| BvhError {
            offset,
            kind: BvhErrorKind::BadNumber {
                text: text.chars().take(40).collect(),
                expected,
            },
        })
}

impl BvhFile {
    /// Reads a `.bvh` file.
    pub fn read(bytes: &[u8]) -> Result<BvhRead, BvhError> {
        let text = std::str::from_utf8(bytes).map_err(|e| BvhError {
            offset: e.valid_up_to(),
            kind: BvhErrorKind::NotText,
        })?;
        // A byte-order mark some Windows tools write.
        let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let mut tokens = Tokens { text, at: start };
        let mut warnings = Vec::new();
        tokens.expect("HIERARCHY")?;
        let mut joints: Vec<BvhJoint> = Vec::new();
        let mut channels = 0usize;
        // Roots until MOTION.
        loop {
            let (at, t) = tokens.expect_any("ROOT or MOTION")?;
            if t.eq_ignore_ascii_case("MOTION") {
                break;
            }
            if !t.eq_ignore_ascii_case("ROOT") {
                return Err(unexpected(at, t, "ROOT or MOTION"));
            }
            read_joint(&mut tokens, None, &mut joints, &mut channels)?;
        }
        if joints.is_empty() {
            return Err(BvhError {
                offset: tokens.at,
                kind: BvhErrorKind::Truncated {
                    expected: "a ROOT joint",
                },
            });
        }
        tokens.expect("Frames:")?;
        let (at, t) = tokens.expect_any("the frame count")?;
        let declared: usize = t.parse().map_err(|_| BvhError {
            offset: at,
            kind: BvhErrorKind::BadNumber {
                text: t.chars().take(40).collect(),
                expected: "the frame count",
            },
        })?;
        tokens.expect("Frame")?;
        tokens.expect("Time:")?;
        let at = tokens.at;
        let frame_time = tokens.number("the frame time")?;
        if frame_time <= 0.0 {
            return Err(BvhError {
                offset: at,
                kind: BvhErrorKind::BadNumber {
                    text: frame_time.to_string(),
                    expected: "a frame time above 0",
                },
            });
        }
        // Each value takes at least two bytes ("0 "): the count is checked against what is
        // left before anything is allocated for it.
        // A frame count the rows disagree with is said below, once the rows are counted.
        let left = text.len() - tokens.at;
        let wanted = declared.saturating_mul(channels);
        let mut values = Vec::with_capacity(wanted.min(left / 2 + 1));
        while let Some((at, t)) = tokens.next() {
            values.push(number(at, t, "a channel value")?);
        }
        let frames = values.len().checked_div(channels).unwrap_or(declared);
        if channels > 0 && values.len() % channels != 0 {
            warnings.push(format!(
                "the last frame has {} of its {channels} values: it is left out",
                values.len() % channels
            ));
            values.truncate(frames * channels);
        }
        if channels > 0 && frames != declared {
            warnings.push(format!(
                "the header says {declared} frames, the file holds {frames}: {frames} are read"
            ));
        }
        Ok(BvhRead {
            file: BvhFile {
                joints,
                frame_time,
                values,
                channels,
            },
            warnings,
        })
    }

    /// The number of frames.
    pub fn frames(&self) -> usize {
        self.values.len().checked_div(self.channels).unwrap_or(0)
    }

    /// The number of channels in a frame.
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Joint `j`'s local (translation, rotation) in frame `f` (its `OFFSET` and the identity
    /// where it has no such channels).
    pub fn local(&self, j: usize, f: usize) -> (Vec3, Quat) {
        let joint = &self.joints[j];
        let row = &self.values[f * self.channels..(f + 1) * self.channels];
        let mut translation = joint.offset;
        let mut rotation = Quat::IDENTITY;
        for (k, c) in joint.channels.iter().enumerate() {
            let v = row.get(joint.first_channel + k).copied().unwrap_or(0.0);
            let turn = |axis: Vec3| Quat::from_axis_angle(axis, v.to_radians());
            match c {
                BvhChannel::Xposition => translation.x = v,
                BvhChannel::Yposition => translation.y = v,
                BvhChannel::Zposition => translation.z = v,
                // In the order listed: each later rotation is applied inside the earlier.
                BvhChannel::Xrotation => rotation *= turn(Vec3::X),
                BvhChannel::Yrotation => rotation *= turn(Vec3::Y),
                BvhChannel::Zrotation => rotation *= turn(Vec3::Z),
            }
        }
        (translation, rotation.normalize())
    }

    /// The motion as a clip: one track per joint (named as the joint), a key per frame at
    /// `frame × frame_time`, rotation keys on joints with rotation channels and translation
    /// keys on joints with position channels.
    pub fn to_clip(&self, name: &str) -> Clip {
        let frames = self.frames();
        let mut b = ClipBuilder::new(name).with_capacity(self.joints.len(), frames * 2);
        let times: Vec<f32> = (0..frames).map(|f| f as f32 * self.frame_time).collect();
        for (j, joint) in self.joints.iter().enumerate() {
            let rotates = joint.channels.iter().any(|c| {
                matches!(
                    c,
                    BvhChannel::Xrotation | BvhChannel::Yrotation | BvhChannel::Zrotation
                )
            });
            let moves = joint.channels.iter().any(|c| {
                matches!(
                    c,
                    BvhChannel::Xposition | BvhChannel::Yposition | BvhChannel::Zposition
                )
            });
            let poses: Vec<(Vec3, Quat)> = (0..frames).map(|f| self.local(j, f)).collect();
            let mut track = BoneTrack {
                bone: BoneRef {
                    name: joint.name.clone(),
                    id: None,
                },
                rotation: None,
                translation: None,
                scale: None,
            };
            if frames > 0 && (rotates || moves) {
                let Ok(at) = b.times(&times) else { continue };
                if rotates {
                    let values: Vec<Quat> = poses.iter().map(|p| p.1).collect();
                    track.rotation = b.rotations(at, &values).ok();
                }
                if moves {
                    let values: Vec<Vec3> = poses.iter().map(|p| p.0).collect();
                    track.translation = b.translations(at, &values).ok();
                }
            }
            b.track(track);
        }
        if frames > 0 {
            b.extend_duration((frames - 1) as f32 * self.frame_time);
        }
        b.build()
    }

    /// The rest pose: every joint at its `OFFSET`, unrotated (the pose the file's hierarchy
    /// describes).
    pub fn rest(&self) -> Vec<(Vec3, Quat)> {
        self.joints
            .iter()
            .map(|j| (j.offset, Quat::IDENTITY))
            .collect()
    }
}

/// Reads a joint after its `ROOT` or `JOINT` keyword, and its children.
fn read_joint(
    tokens: &mut Tokens,
    parent: Option<usize>,
    joints: &mut Vec<BvhJoint>,
    channels: &mut usize,
) -> Result<(), BvhError> {
    // Joints nest at most as deep as there may be joints: an iterative walk with a stack.
    let mut stack: Vec<usize> = Vec::new();
    let mut pending: Option<Option<usize>> = Some(parent);
    loop {
        if let Some(parent) = pending.take() {
            let (at, name) = tokens.rest_of_line("the joint's name")?;
            if joints.len() >= MAX_JOINTS {
                return Err(BvhError {
                    offset: at,
                    kind: BvhErrorKind::TooMany {
                        what: "joints",
                        count: joints.len() + 1,
                        limit: MAX_JOINTS,
                    },
                });
            }
            tokens.expect("{")?;
            tokens.expect("OFFSET")?;
            let offset = Vec3::new(
                tokens.number("the offset's x")?,
                tokens.number("the offset's y")?,
                tokens.number("the offset's z")?,
            );
            let mut joint = BvhJoint {
                name: name.to_owned(),
                parent,
                offset,
                channels: Vec::new(),
                first_channel: *channels,
                end_site: None,
            };
            let (at, t) = tokens.expect_any("CHANNELS")?;
            if !t.eq_ignore_ascii_case("CHANNELS") {
                return Err(unexpected(at, t, "CHANNELS"));
            }
            let (at, t) = tokens.expect_any("the channel count")?;
            let count: usize = t
                .parse()
                .map_err(|_| unexpected(at, t, "the channel count"))?;
            if count > 6 {
                return Err(BvhError {
                    offset: at,
                    kind: BvhErrorKind::TooMany {
                        what: "channels of a joint",
                        count,
                        limit: 6,
                    },
                });
            }
            for _ in 0..count {
                let (at, t) = tokens.expect_any("a channel name")?;
                let c = BvhChannel::parse(t)
                    .ok_or_else(|| unexpected(at, t, "a channel (Xposition … Zrotation)"))?;
                joint.channels.push(c);
            }
            *channels += count;
            joints.push(joint);
            stack.push(joints.len() - 1);
        }
        // Inside the joint on top of the stack: children, an end site, or its end.
        let Some(&current) = stack.last() else {
            return Ok(());
        };
        let (at, t) = tokens.expect_any("JOINT, End Site or }")?;
        if t.eq_ignore_ascii_case("JOINT") {
            pending = Some(Some(current));
        } else if t.eq_ignore_ascii_case("End") {
            tokens.expect("Site")?;
            tokens.expect("{")?;
            tokens.expect("OFFSET")?;
            joints[current].end_site = Some(Vec3::new(
                tokens.number("the end site's x")?,
                tokens.number("the end site's y")?,
                tokens.number("the end site's z")?,
            ));
            tokens.expect("}")?;
        } else if t == "}" {
            stack.pop();
            if stack.is_empty() {
                return Ok(());
            }
        } else {
            return Err(unexpected(at, t, "JOINT, End Site or }"));
        }
    }
}
