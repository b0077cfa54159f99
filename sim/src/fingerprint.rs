//! State fingerprints: a 128-bit hash of the whole state (two independent 64-bit
//! lanes over its parts' hashes), and a per-part cache of a 64-bit hash so that the
//! parts a successor shares with its parent (`Rc`) are not hashed again.

use crate::machine::State;
use std::cell::OnceCell;
use std::hash::{Hash, Hasher};

/// A 128-bit fingerprint of a state, comparable within one search only (a cell's part
/// holds its credit units' clocks by their number in the machine's table); two searches'
/// states compare by [`crate::machine::Machine::fingerprint`].
pub fn fingerprint(s: &State) -> u128 {
    let mut h = Fp::default();
    s.hash(&mut h);
    h.finish128()
}

/// The fingerprint hasher: two lanes, mixed at the end.
#[derive(Default)]
pub struct Fp {
    a: u64,
    b: u64,
}

impl Fp {
    /// The 128-bit result.
    pub fn finish128(&self) -> u128 {
        ((mix(self.a) as u128) << 64) | mix(self.b ^ 0x5555_5555_5555_5555) as u128
    }
}

/// The splitmix64 finaliser.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Hasher for Fp {
    fn finish(&self) -> u64 {
        mix(self.a)
    }
    fn write(&mut self, bytes: &[u8]) {
        words(bytes, 8 << 59, |w| self.write_u64(w));
    }
    fn write_u64(&mut self, x: u64) {
        self.a = (self.a ^ x)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
        self.b = (self.b.wrapping_add(x)).wrapping_mul(0xc2b2_ae3d_27d4_eb4f) ^ (self.b >> 31);
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64 | 0x100);
    }
    fn write_u16(&mut self, x: u16) {
        self.write_u64(x as u64 | 0x1_0000);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64 | 0x1_0000_0000);
    }
    fn write_u128(&mut self, x: u128) {
        self.write_u64(x as u64);
        self.write_u64((x >> 64) as u64);
    }
    fn write_i64(&mut self, x: i64) {
        self.write_u64(x as u64);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

/// `bytes` as little-endian 64-bit words, each full one xor `full`, a short last one
/// zero-padded and xor its length in the top bits.
#[inline]
fn words(bytes: &[u8], full: u64, mut f: impl FnMut(u64)) {
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(c);
        f(u64::from_le_bytes(buf) ^ full);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rest.len()].copy_from_slice(rest);
        f(u64::from_le_bytes(buf) ^ ((rest.len() as u64) << 59));
    }
}

/// The hash of a run of words (a part's packed record): four multiply-rotate lanes over
/// its 64-bit words (independent chains, so they run side by side), finished by [`mix`].
/// It only picks the candidates the explorer's exact table compares in full
/// ([`crate::visited`]), so it needs speed more than width.
pub fn hash_words(w: &[u32]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let pair = |x: &[u32]| x[0] as u64 | (x[1] as u64) << 32;
    let step = |h: u64, x: u64| (h.rotate_left(5) ^ x).wrapping_mul(K);
    let mut l = [
        w.len() as u64,
        0x9e37_79b9_7f4a_7c15,
        0x243f_6a88_85a3_08d3,
        0,
    ];
    let mut octs = w.chunks_exact(8);
    for o in &mut octs {
        l[0] = step(l[0], pair(&o[0..2]));
        l[1] = step(l[1], pair(&o[2..4]));
        l[2] = step(l[2], pair(&o[4..6]));
        l[3] = step(l[3], pair(&o[6..8]));
    }
    for x in octs.remainder() {
        l[0] = step(l[0], *x as u64);
    }
    mix(l[0] ^ l[1].rotate_left(16) ^ l[2].rotate_left(32) ^ l[3].rotate_left(48))
}

/// The hasher of a part's fields: one 64-bit multiply-rotate lane (as FxHash), finished
/// by [`mix`]. A part's hash only picks the candidates the explorer's exact table
/// compares in full ([`crate::visited`]), so it needs speed more than width.
#[derive(Default)]
pub struct PartHasher(u64);

impl Hasher for PartHasher {
    fn finish(&self) -> u64 {
        mix(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        words(bytes, 0, |w| self.write_u64(w));
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }
    fn write_u16(&mut self, x: u16) {
        self.write_u64(x as u64);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    fn write_i64(&mut self, x: i64) {
        self.write_u64(x as u64);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

/// A part's fingerprint, computed once and kept until the part is written, and the
/// part's number in the explorer's table of distinct parts ([`crate::visited`]) once it
/// has one. Neither takes part in equality or hashing itself; whoever writes the part
/// clears both ([`FpCache::clear`]), which the state's write accessors do.
#[derive(Debug, Clone, Default)]
pub struct FpCache {
    fp: OnceCell<u64>,
    /// (table tag, number): the tag names the table that numbered the part (0: none).
    id: std::cell::Cell<(u32, u32)>,
}

impl FpCache {
    /// The cached fingerprint, computed by `f` (which hashes the part's fields) if absent.
    pub fn get(&self, f: impl FnOnce(&mut PartHasher)) -> u64 {
        *self.fp.get_or_init(|| {
            let mut h = PartHasher::default();
            f(&mut h);
            h.finish()
        })
    }

    /// The cached fingerprint, computed by `f` if absent.
    pub fn get_or(&self, f: impl FnOnce() -> u64) -> u64 {
        *self.fp.get_or_init(f)
    }

    /// Forgets the fingerprint and the number (the part is about to change).
    pub fn clear(&mut self) {
        self.fp.take();
        self.id.set((0, 0));
    }

    /// The part's number in the table tagged `tag`, if that table numbered it.
    pub fn id(&self, tag: u32) -> Option<u32> {
        let (t, i) = self.id.get();
        (t == tag && tag != 0).then_some(i)
    }

    /// Records the part's number in the table tagged `tag`.
    pub fn set_id(&self, tag: u32, id: u32) {
        self.id.set((tag, id));
    }
}

impl PartialEq for FpCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for FpCache {}
