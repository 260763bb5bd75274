//! xorshift64*: a small deterministic generator for the property tests, no dependency.

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }

    /// Uniform in [0, n).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        self.range(0.0, 1.0)
    }

    /// A random unit quaternion (uniform over rotations: a rejection-sampled 4D direction).
    pub fn quat(&mut self) -> glam::Quat {
        loop {
            let v = glam::Vec4::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            if v.length() > 0.1 && v.length() < 1.0 {
                return glam::Quat::from_vec4(v.normalize());
            }
        }
    }

    /// Each component uniform in [−s, s).
    pub fn vec3(&mut self, s: f32) -> glam::Vec3 {
        glam::Vec3::new(self.range(-s, s), self.range(-s, s), self.range(-s, s))
    }
}
