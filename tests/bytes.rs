//! A byte assembler for hand-made fixtures, independent of rigplay's writer: every field is
//! written explicitly, in the order of the spec's tables.

#[derive(Default, Clone)]
pub struct Bytes(pub Vec<u8>);

impl Bytes {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }

    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.raw(&v.to_le_bytes())
    }

    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.raw(&v.to_le_bytes())
    }

    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.raw(&v.to_le_bytes())
    }

    pub fn f32s(&mut self, vs: &[f32]) -> &mut Self {
        for &v in vs {
            self.f32(v);
        }
        self
    }

    pub fn i16s(&mut self, vs: &[i16]) -> &mut Self {
        for &v in vs {
            self.raw(&v.to_le_bytes());
        }
        self
    }

    /// A name in a fixed field: its bytes, a NUL, then `fill` up to `field` bytes.
    pub fn fixed(&mut self, name: &str, field: usize, fill: &[u8]) -> &mut Self {
        assert!(name.len() < field);
        self.raw(name.as_bytes()).raw(&[0]);
        for i in 0..field - name.len() - 1 {
            self.raw(&[if fill.is_empty() {
                0
            } else {
                fill[i % fill.len()]
            }]);
        }
        self
    }

    /// A section `magic, u32 size, body`, where size is the body's length before padding, then
    /// zero padding to a multiple of 4 (spec §1.1).
    pub fn section(&mut self, magic: &[u8; 4], body: impl FnOnce(&mut Bytes)) -> &mut Self {
        let mut inner = Bytes::new();
        body(&mut inner);
        self.raw(magic).u32(inner.0.len() as u32).raw(&inner.0);
        while !self.0.len().is_multiple_of(4) {
            self.raw(&[0]);
        }
        self
    }

    /// `magic, u32 size, body` with no padding (ANP3/ANP2 package header).
    pub fn sized(&mut self, magic: &[u8; 4], body: impl FnOnce(&mut Bytes)) -> &mut Self {
        let mut inner = Bytes::new();
        body(&mut inner);
        self.raw(magic).u32(inner.0.len() as u32).raw(&inner.0)
    }

    /// A NUL-terminated string payload: bytes and NUL (the padding comes from `section`).
    pub fn cstr(&mut self, s: &str) -> &mut Self {
        self.raw(s.as_bytes()).raw(&[0])
    }

    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.raw(&v.to_le_bytes())
    }

    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.raw(&[v])
    }

    /// A RenderWare chunk: u32 type, u32 payload size, u32 library ID stamp, payload
    /// (`docs/formats/dff.md` §1.1). No padding.
    pub fn chunk(&mut self, id: u32, stamp: u32, body: impl FnOnce(&mut Bytes)) -> &mut Self {
        let mut inner = Bytes::new();
        body(&mut inner);
        self.u32(id)
            .u32(inner.0.len() as u32)
            .u32(stamp)
            .raw(&inner.0)
    }

    /// One ANPK package `package` holding one clip `clip` of `objects` sequences (§1.1 of
    /// `docs/formats/ifp.md`: INFO with the clip count and the package name, NAME, DGAN with
    /// its INFO of the sequence count and a 0); `cpans` writes the clip's CPAN sections.
    pub fn anpk(
        &mut self,
        package: &str,
        clip: &str,
        objects: u32,
        cpans: impl FnOnce(&mut Bytes),
    ) -> &mut Self {
        self.section(b"ANPK", |b| {
            b.section(b"INFO", |b| {
                b.u32(1).cstr(package);
            });
            b.section(b"NAME", |b| {
                b.cstr(clip);
            });
            b.section(b"DGAN", |b| {
                b.section(b"INFO", |b| {
                    b.u32(objects).u32(0);
                });
                cpans(b);
            });
        })
    }

    pub fn done(&self) -> Vec<u8> {
        self.0.clone()
    }
}

/// An ANPK ANIM payload: name[28], numFrames, 0, numFrames − 1, then `tail` (bone tag or links).
pub fn anim_payload(b: &mut Bytes, name: &str, frames: i32, tail: &[i32]) {
    b.fixed(name, 28, &[]).i32(frames).i32(0).i32(frames - 1);
    for &t in tail {
        b.i32(t);
    }
}
