//! Which of rigplay's formats a file is in ([`FileFormat`]).

use super::anie::records::MAGIC as ANIE_MAGIC;
use super::dan::DAN_VERSION;
use super::ifp::records::{ANLF, ANP2, ANP3, ANPK};
use std::path::Path;

/// One of the file formats rigplay reads. Which one a file is in is told from its first bytes,
/// and from its extension where the bytes do not decide ([`FileFormat::detect`]):
///
/// * IFP packages start with their magic: `ANPK` (GTA III / Vice City), `ANP3` or `ANP2`
///   (San Andreas), or `ANLF` (GTA III's container of several ANPK blocks);
/// * AnimeEffects projects start with `ANIMFX`;
/// * DAN files have no magic; their header starts with the exporter's version, 10, as a
///   little-endian `i32` (`0A 00 00 00`).
///
/// A magic decides over the extension (an IFP package named `walk.bin` is an IFP package); a
/// file whose bytes match none of these (a cut file, a file of another format) is known by its
/// extension, `ifp`, `dan` or `anie`, case-insensitive, so that the reader it goes to reports
/// what is wrong with it.
///
/// ```
/// use rigplay::formats::FileFormat;
///
/// assert_eq!(FileFormat::detect(b"ANP3\x10\0\0\0", "ped.bin"), Some(FileFormat::Ifp));
/// assert_eq!(FileFormat::detect(b"", "lamp.DAN"), Some(FileFormat::Dan));
/// assert_eq!(FileFormat::detect(b"GIF89a", "cat.gif"), None);
/// assert_eq!(FileFormat::from_extension("anie"), Some(FileFormat::Anie));
/// assert_eq!(FileFormat::Anie.extension(), "anie");
///  ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileFormat {
    /// GTA IFP animation package (`.ifp`), read by [`super::ifp::IfpFile::read`].
    Ifp,
    /// DelDX 3ds Max exporter animation (`.dan`), read by [`super::dan::DanFile::read`].
    Dan,
    /// AnimeEffects project (`.anie`), read by [`super::anie::AnieFile::read`].
    Anie,
    /// RenderWare model (`.dff`), read by [`super::dff::DffFile::read`].
    Dff,
    /// RenderWare texture dictionary (`.txd`), read by [`super::txd::TxdFile::read`].
    Txd,
}

/// RenderWare chunk ids a file starts with: Clump (a model) and Texture Dictionary.
const RW_CLUMP: u32 = 0x10;
const RW_TEXTURE_DICTIONARY: u32 = 0x16;

/// The first four bytes of an IFP file, each version and the ANLF container.
const IFP_MAGICS: [[u8; 4]; 4] = [ANPK, ANP3, ANP2, ANLF];

impl FileFormat {
    /// Every format, in declaration order.
    pub const ALL: [FileFormat; 5] = [
        FileFormat::Ifp,
        FileFormat::Dan,
        FileFormat::Anie,
        FileFormat::Dff,
        FileFormat::Txd,
    ];

    /// The format of a file: its bytes first ([`FileFormat::from_bytes`]), then the extension
    /// of `path` ([`FileFormat::from_path`]). `None` when neither tells.
    ///
    /// `path` only gives the extension; nothing is read from it. For a bare extension, use
    /// `FileFormat::from_bytes(bytes).or_else(|| FileFormat::from_extension(ext))`.
    pub fn detect(bytes: &[u8], path: impl AsRef<Path>) -> Option<Self> {
        Self::from_bytes(bytes).or_else(|| Self::from_path(path))
    }

    /// The format the first bytes say: an IFP or ANIE magic, a DAN header's version 10, or a
    /// RenderWare chunk header (12 bytes) of a Clump or a Texture Dictionary with a version
    /// stamp. `None` for anything else, an empty or cut header included.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let word = |i: usize| {
            bytes
                .get(i..i + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        if let (Some(id), Some(stamp)) = (word(0), word(8))
            && stamp != 0
        {
            match id {
                RW_CLUMP => return Some(FileFormat::Dff),
                RW_TEXTURE_DICTIONARY => return Some(FileFormat::Txd),
                _ => {}
            }
        }
        if bytes.starts_with(&ANIE_MAGIC) {
            Some(FileFormat::Anie)
        } else if IFP_MAGICS.iter().any(|m| bytes.starts_with(m)) {
            Some(FileFormat::Ifp)
        } else if bytes.starts_with(&DAN_VERSION.to_le_bytes()) {
            Some(FileFormat::Dan)
        } else {
            None
        }
    }

    /// The format of a file extension, `ifp`, `dan` or `anie` in any case, with or without
    /// its leading dot.
    pub fn from_extension(extension: &str) -> Option<Self> {
        let extension = extension.strip_prefix('.').unwrap_or(extension);
        Self::ALL
            .into_iter()
            .find(|f| f.extension().eq_ignore_ascii_case(extension))
    }

    /// The format of a path's extension (`walk.IFP` → IFP); `None` without one.
    pub fn from_path(path: impl AsRef<Path>) -> Option<Self> {
        path.as_ref()
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Self::from_extension)
    }

    /// The format's file extension, lower case, without the dot: `ifp`, `dan`, `anie`, `dff`
    /// or `txd`.
    pub fn extension(self) -> &'static str {
        match self {
            FileFormat::Ifp => "ifp",
            FileFormat::Dan => "dan",
            FileFormat::Anie => "anie",
            FileFormat::Dff => "dff",
            FileFormat::Txd => "txd",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FileFormat::{self, Anie, Dan, Ifp};

    #[test]
    fn magics_and_the_dan_version_decide() {
        for magic in [&b"ANPK"[..], b"ANP3", b"ANP2", b"ANLF"] {
            let mut bytes = magic.to_vec();
            bytes.extend_from_slice(&[0; 12]);
            assert_eq!(FileFormat::from_bytes(&bytes), Some(Ifp), "{magic:?}");
            assert_eq!(
                FileFormat::from_bytes(magic),
                Some(Ifp),
                "{magic:?}, nothing after"
            );
        }
        assert_eq!(FileFormat::from_bytes(b"ANIMFX\xff\x00"), Some(Anie));
        // RenderWare: a Clump or Texture Dictionary header with its version stamp (SA's
        // 0x1803FFFF); without a stamp or cut short, not decided.
        let rw = |id: u32, stamp: u32| {
            let mut b = id.to_le_bytes().to_vec();
            b.extend_from_slice(&100u32.to_le_bytes());
            b.extend_from_slice(&stamp.to_le_bytes());
            b
        };
        assert_eq!(
            FileFormat::from_bytes(&rw(0x10, 0x1803_FFFF)),
            Some(super::FileFormat::Dff)
        );
        assert_eq!(
            FileFormat::from_bytes(&rw(0x16, 0x1803_FFFF)),
            Some(super::FileFormat::Txd)
        );
        assert_eq!(FileFormat::from_bytes(&rw(0x10, 0)), None);
        assert_eq!(FileFormat::from_bytes(&rw(0x10, 0x1803_FFFF)[..8]), None);
        assert_eq!(
            FileFormat::from_bytes(&[10, 0, 0, 0, b'h', b'i']),
            Some(Dan)
        );
        // Other versions, big-endian 10, cut magics, other files: not decided.
        for other in [
            &[11, 0, 0, 0][..],
            &[0, 0, 0, 10],
            &[10, 0, 0],
            b"ANP",
            b"ANIMF",
            b"anpk",
            b"ANP4",
            b"\x89PNG\r\n\x1a\n",
            b"",
        ] {
            assert_eq!(FileFormat::from_bytes(other), None, "{other:?}");
        }
    }

    #[test]
    fn extensions_in_any_case_with_or_without_the_dot() {
        for f in FileFormat::ALL {
            assert_eq!(FileFormat::from_extension(f.extension()), Some(f));
            let upper = f.extension().to_ascii_uppercase();
            assert_eq!(FileFormat::from_extension(&upper), Some(f));
            assert_eq!(FileFormat::from_extension(&format!(".{upper}")), Some(f));
        }
        assert_eq!(FileFormat::from_extension("Ifp"), Some(Ifp));
        for other in ["", ".", "png", "if", "ifpx", "an ie", "..ifp"] {
            assert_eq!(FileFormat::from_extension(other), None, "{other:?}");
        }
        assert_eq!(FileFormat::from_path("dir.ifp/walk.Anie"), Some(Anie));
        assert_eq!(FileFormat::from_path("/anims/ped.IFP"), Some(Ifp));
        assert_eq!(FileFormat::from_path("lamp.dan.meta"), None);
        assert_eq!(
            FileFormat::from_path("dan"),
            None,
            "a name, not an extension"
        );
        assert_eq!(
            FileFormat::from_path(".dan"),
            None,
            "a hidden file without extension"
        );
        assert_eq!(FileFormat::from_path(""), None);
    }

    #[test]
    fn the_bytes_decide_over_the_extension_and_the_extension_decides_the_rest() {
        // A magic wins over any extension.
        assert_eq!(FileFormat::detect(b"ANP3....", "walk.anie"), Some(Ifp));
        assert_eq!(FileFormat::detect(b"ANIMFX..", "t8.bin"), Some(Anie));
        assert_eq!(FileFormat::detect(b"ANIMFX..", "t8.dan"), Some(Anie));
        assert_eq!(FileFormat::detect(&[10, 0, 0, 0], "lamp.ifp"), Some(Dan));
        assert_eq!(FileFormat::detect(&[10, 0, 0, 0], "lamp"), Some(Dan));
        // Without one, the extension tells (a cut or damaged file goes to its reader).
        assert_eq!(FileFormat::detect(b"", "cut.anie"), Some(Anie));
        assert_eq!(FileFormat::detect(&[9, 0, 0, 0], "old.DAN"), Some(Dan));
        assert_eq!(FileFormat::detect(b"AN", "x.Ifp"), Some(Ifp));
        assert_eq!(FileFormat::detect(b"garbage", "x.png"), None);
        assert_eq!(FileFormat::detect(b"garbage", ""), None);
    }
}
