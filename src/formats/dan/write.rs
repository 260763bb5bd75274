//! Writing `.dan` files: the layout of §1, byte for byte what the reader reads.
//!
//! Section numbers (§) refer to `docs/formats/dan.md`.

use super::error::DanWriteError;
use super::records::{COUNT_SIZE, Header};
use super::{DanFile, RotationKey, VectorKey};
use crate::formats::bytes::Record;
use binrw::BinWrite;
use std::io::Cursor;

fn count(what: &'static str, n: usize) -> Result<[u8; 4], DanWriteError> {
    i32::try_from(n)
        .map(i32::to_le_bytes)
        .map_err(|_| DanWriteError::TooMany { what, count: n })
}

impl DanFile {
    /// The file's bytes: header, every bone's three channels, then [`DanFile::trailing`].
    pub fn write(&self) -> Result<Vec<u8>, DanWriteError> {
        let size = Header::SIZE
            + self.bones.len() * 3 * COUNT_SIZE
            + self
                .bones
                .iter()
                .map(|b| {
                    b.rotations.len() * RotationKey::SIZE
                        + (b.positions.len() + b.scales.len()) * VectorKey::SIZE
                })
                .sum::<usize>()
            + self.trailing.len();
        let mut out = Cursor::new(Vec::with_capacity(size));
        let header = Header {
            version: self.version,
            comment: self.comment,
            bone_count: i32::from_le_bytes(count("bone count", self.bones.len())?),
            start_ms: self.start_ms,
            end_ms: self.end_ms,
        };
        // Writing plain numbers into a Vec cannot fail.
        let ok =
            |r: binrw::BinResult<()>| r.unwrap_or_else(|e| unreachable!("in-memory write: {e}"));
        ok(header.write(&mut out));
        for bone in &self.bones {
            out.get_mut()
                .extend_from_slice(&count("rotation key count", bone.rotations.len())?);
            out.set_position(out.get_ref().len() as u64);
            for k in &bone.rotations {
                ok(RotationKey::write(k, &mut out));
            }
            for keys in [&bone.positions, &bone.scales] {
                out.get_mut()
                    .extend_from_slice(&count("vector key count", keys.len())?);
                out.set_position(out.get_ref().len() as u64);
                for k in keys {
                    ok(VectorKey::write(k, &mut out));
                }
            }
        }
        let mut bytes = out.into_inner();
        bytes.extend_from_slice(&self.trailing);
        Ok(bytes)
    }
}
