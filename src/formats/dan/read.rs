//! Reading `.dan` files (§1, checks of §4).
//!
//! Section numbers (§) refer to `docs/formats/dan.md`.

use super::error::{DanError, DanErrorKind, DanLocation, DanTrack, DanWarning};
use super::records::{COUNT_SIZE, Header};
use super::{DAN_VERSION, DanBone, DanFile, RotationKey, VectorKey};
use crate::formats::Bounds;
use crate::formats::bytes::{ByteReader, CountTooLarge, Record, Short};

/// A file that was read, with what the reader tolerated in it.
#[derive(Debug, Clone, PartialEq)]
pub struct DanRead {
    /// The file, values as stored.
    pub file: DanFile,
    /// What the reader accepted but reports (backwards key times, trailing bytes, a header
    /// range that is not finite), in file order.
    pub warnings: Vec<DanWarning>,
}

struct Reader<'a> {
    r: ByteReader<'a>,
    at: DanLocation,
}

impl Reader<'_> {
    fn error(&self, offset: usize, kind: DanErrorKind) -> DanError {
        DanError {
            offset: offset as u64,
            location: self.at,
            kind,
        }
    }

    fn truncated(&self, expected: &'static str, s: Short) -> DanError {
        DanError {
            offset: s.offset,
            location: self.at,
            kind: DanErrorKind::Bounds(Bounds::truncated(expected, &s, None)),
        }
    }

    /// `what` names the count (`"bone count"`); the error names what is counted (`"bone"`).
    fn too_large(&self, what: &'static str, e: CountTooLarge) -> DanError {
        let what = what.strip_suffix(" count").unwrap_or(what);
        DanError {
            offset: e.offset,
            location: self.at,
            kind: DanErrorKind::Bounds(Bounds::count_too_large(what, &e)),
        }
    }

    fn record<T: Record>(&mut self, expected: &'static str) -> Result<T, DanError> {
        self.r
            .record::<T>()
            .map_err(|s| self.truncated(expected, s))
    }

    /// A signed count, checked against the bytes left for items of `each` bytes.
    fn count(&mut self, what: &'static str, each: u64) -> Result<usize, DanError> {
        let at = self.r.pos();
        let bytes = self.r.array::<4>().map_err(|s| self.truncated(what, s))?;
        let value = i32::from_le_bytes(bytes);
        if value < 0 {
            let what = what.strip_suffix(" count").unwrap_or(what);
            return Err(self.error(
                at,
                DanErrorKind::Bounds(Bounds::NegativeCount { what, value }),
            ));
        }
        self.r
            .check_count(value as u64, each)
            .map_err(|e| DanError {
                offset: at as u64,
                ..self.too_large(what, e)
            })
    }

    /// Checks values that start at byte `offset`; an error points at the bad one.
    fn finite(&self, offset: usize, field: &'static str, values: &[f32]) -> Result<(), DanError> {
        match values.iter().position(|v| !v.is_finite()) {
            Some(i) => Err(self.error(
                offset + 4 * i,
                DanErrorKind::NotFinite {
                    field,
                    value: values[i],
                },
            )),
            None => Ok(()),
        }
    }

    fn track<K: Record>(
        &mut self,
        track: DanTrack,
        count_name: &'static str,
        key_name: &'static str,
        values: impl Fn(&K) -> (i32, &[f32]),
        warnings: &mut Vec<DanWarning>,
    ) -> Result<Vec<K>, DanError> {
        self.at.track = Some(track);
        self.at.key = None;
        let n = self.count(count_name, K::SIZE as u64)?;
        let mut keys = Vec::with_capacity(n);
        let mut backwards = None;
        let mut count = 0;
        let mut previous = i32::MIN;
        for k in 0..n {
            self.at.key = Some(k);
            let at = self.r.pos();
            let key: K = self.record(key_name)?;
            let (time, v) = values(&key);
            self.finite(at + 4, key_name, v)?;
            if time < previous {
                backwards.get_or_insert(k);
                count += 1;
            }
            previous = time;
            keys.push(key);
        }
        if let (Some(key), Some(bone)) = (backwards, self.at.bone) {
            warnings.push(DanWarning::TimesNotSorted {
                bone,
                track,
                key,
                count,
            });
        }
        self.at.key = None;
        Ok(keys)
    }
}

impl DanFile {
    /// Reads a `.dan` file. Errors name the byte offset, bone, track and key; the exporter's
    /// backwards key times and bytes after the last bone are warnings.
    pub fn read(data: &[u8]) -> Result<DanRead, DanError> {
        let mut r = Reader {
            r: ByteReader::new(data),
            at: DanLocation::default(),
        };
        let mut warnings = Vec::new();
        let header: Header = r.record("the 80-byte header")?;
        if header.version != DAN_VERSION {
            return Err(r.error(
                0,
                DanErrorKind::UnsupportedVersion {
                    found: header.version,
                },
            ));
        }
        if !header.start_ms.is_finite() || !header.end_ms.is_finite() {
            warnings.push(DanWarning::RangeNotFinite {
                start_ms: header.start_ms,
                end_ms: header.end_ms,
            });
        }
        if header.bone_count < 0 {
            return Err(r.error(
                68,
                DanErrorKind::Bounds(Bounds::NegativeCount {
                    what: "bone",
                    value: header.bone_count,
                }),
            ));
        }
        // Each bone holds at least its three key counts.
        let bones =
            r.r.check_count(header.bone_count as u64, 3 * COUNT_SIZE as u64)
                .map_err(|e| DanError {
                    offset: 68,
                    ..r.too_large("bone count", e)
                })?;
        let mut file = DanFile {
            version: header.version,
            comment: header.comment,
            start_ms: header.start_ms,
            end_ms: header.end_ms,
            bones: Vec::with_capacity(bones),
            trailing: Vec::new(),
        };
        for b in 0..bones {
            r.at = DanLocation {
                bone: Some(b),
                ..DanLocation::default()
            };
            let rotations = r.track(
                DanTrack::Rotation,
                "rotation key count",
                "rotation key",
                |k: &RotationKey| (k.time_ms, &k.value[..]),
                &mut warnings,
            )?;
            let positions = r.track(
                DanTrack::Position,
                "position key count",
                "position key",
                |k: &VectorKey| (k.time_ms, &k.value[..]),
                &mut warnings,
            )?;
            let scales = r.track(
                DanTrack::Scale,
                "scale key count",
                "scale key",
                |k: &VectorKey| (k.time_ms, &k.value[..]),
                &mut warnings,
            )?;
            file.bones.push(DanBone {
                rotations,
                positions,
                scales,
            });
        }
        let end = r.r.pos();
        if end < data.len() {
            file.trailing = data[end..].to_vec();
            warnings.push(DanWarning::TrailingBytes {
                offset: end as u64,
                count: (data.len() - end) as u64,
            });
        }
        Ok(DanRead { file, warnings })
    }
}
