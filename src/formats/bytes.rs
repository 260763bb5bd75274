//! Bounds-checked reading over a byte slice, shared by every format reader.
//!
//! Every read names how many bytes it needs; when fewer remain the caller gets a [`Short`]
//! carrying the offset, so a format error can say exactly where a file ended too early. Counts
//! read from a file are checked with [`ByteReader::check_count`] against the bytes left before
//! anything is allocated from them.

use binrw::BinRead;
use std::io::Cursor;

/// Not enough bytes left: `needed` bytes were asked for at `offset`, `available` remain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Short {
    pub offset: u64,
    pub needed: u64,
    pub available: u64,
}

/// A fixed-size on-disk record declared with binrw.
pub trait Record: for<'a> BinRead<Args<'a> = ()> + binrw::meta::ReadEndian {
    /// Size of the record on disk, in bytes.
    const SIZE: usize;
}

#[derive(Debug, Clone)]
pub struct ByteReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> ByteReader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// Moves to `pos`, which must lie within the data (the end included).
    pub fn seek(&mut self, pos: usize) -> Result<(), Short> {
        if pos > self.data.len() {
            return Err(Short {
                offset: self.pos as u64,
                needed: (pos - self.pos) as u64,
                available: self.remaining() as u64,
            });
        }
        self.pos = pos;
        Ok(())
    }

    fn short(&self, needed: usize) -> Short {
        Short {
            offset: self.pos as u64,
            needed: needed as u64,
            available: self.remaining() as u64,
        }
    }

    /// Takes the next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Short> {
        if n > self.remaining() {
            return Err(self.short(n));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], Short> {
        let s = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Ok(out)
    }

    pub fn peek_array<const N: usize>(&self) -> Result<[u8; N], Short> {
        self.clone().array::<N>()
    }

    /// Reads a fixed-size binrw record. The bytes are checked first, so the record itself
    /// cannot run out of data.
    pub fn record<T: Record>(&mut self) -> Result<T, Short> {
        let bytes = self.take(T::SIZE)?;
        let mut cursor = Cursor::new(bytes);
        // A fixed-size record with all its bytes present has no way to fail: every field is a
        // plain number or byte array.
        Ok(T::read(&mut cursor).unwrap_or_else(|e| unreachable!("fixed-size record: {e}")))
    }

    /// Checks that `count` items of at least `min_each` bytes can fit in what is left; returns
    /// the count as usize. Call before allocating anything sized from `count`.
    pub fn check_count(&self, count: u64, min_each: u64) -> Result<usize, CountTooLarge> {
        let left = self.remaining() as u64;
        match count.checked_mul(min_each) {
            Some(total) if total <= left => Ok(count as usize),
            _ => Err(CountTooLarge {
                offset: self.pos as u64,
                count,
                min_each,
                bytes_left: left,
            }),
        }
    }
}

/// A count read from a file that cannot fit in the bytes left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountTooLarge {
    pub offset: u64,
    pub count: u64,
    pub min_each: u64,
    pub bytes_left: u64,
}

/// Rounds `n` up to a multiple of 4 (IFP section payloads are padded this way).
pub fn round4(n: u64) -> u64 {
    (n + 3) & !3
}

/// Decodes a fixed-size, NUL-terminated name: everything from the first NUL on is ignored.
///
/// Bytes are read as Latin-1 (each byte is one char U+0000..U+00FF), which is lossless:
/// [`encode_name`] gives the same bytes back. Pure ASCII, which is what the games write,
/// comes out unchanged.
pub fn decode_name(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let bytes = &bytes[..end];
    if bytes.is_ascii() {
        // ASCII is valid UTF-8.
        String::from_utf8(bytes.to_vec()).unwrap_or_default()
    } else {
        bytes.iter().map(|&b| b as char).collect()
    }
}

/// Encodes a name as Latin-1 bytes. `None` when a char is above U+00FF or is NUL, which the
/// formats cannot store.
pub fn encode_name(name: &str) -> Option<Vec<u8>> {
    name.chars()
        .map(|c| match c as u32 {
            1..=0xFF => Some(c as u8),
            _ => None,
        })
        .collect()
}
