// SPDX-License-Identifier: GPL-2.0

//! The kernel's C `tracing_map` (kernel/trace/tracing_map.c, built by
//! build.rs against the shims in shim/) behind a small safe handle, for
//! benchmarking against [`rhist_core::hist::map::TracingMap`].

use core::ffi::c_void;
use core::ptr::NonNull;

/// Where build.rs took tracing_map.c from.
pub const KERNEL_SOURCE: &str = env!("CMAP_KERNEL_SOURCE");

#[repr(C)]
struct RawMap {
    _opaque: [u8; 0],
}

extern "C" {
    fn cmap_create(bits: u32, key_size: u32, n_sums: u32) -> *mut RawMap;
    fn cmap_destroy(map: *mut RawMap);
    fn cmap_update(map: *mut RawMap, key: *const c_void, n_sums: u32) -> bool;
    fn cmap_run(map: *mut RawMap, keys: *const u64, mask: usize, iters: u64, n_sums: u32) -> u64;
    fn cmap_stages(
        map: *mut RawMap,
        keys: *const u64,
        mask: usize,
        iters: u64,
        n_sums: u32,
        stage: u32,
    ) -> u64;
    fn cmap_read_sum(map: *mut RawMap, key: *const c_void, i: u32) -> u64;
    fn cmap_hits(map: *mut RawMap) -> u64;
    fn cmap_drops(map: *mut RawMap) -> u64;
    fn cmap_jhash(key: *const c_void, len: u32, initval: u32) -> u32;
}

/// A C tracing_map of `u64` keys and `n_sums` sums (sum 0: hitcount).
pub struct CMap {
    map: NonNull<RawMap>,
    n_sums: u32,
}

// tracing_map_insert() and tracing_map_update_sum() are lock-free and meant
// to run concurrently; create and destroy take `&mut`/ownership.
unsafe impl Send for CMap {}
unsafe impl Sync for CMap {}

impl CMap {
    /// A map of `1 << bits` elements; `None` if C refuses the parameters.
    pub fn new(bits: u32, n_sums: u32) -> Option<Self> {
        // SAFETY: plain C constructor; NULL on failure.
        let map = unsafe { cmap_create(bits, 8, n_sums) };
        NonNull::new(map).map(|map| Self { map, n_sums })
    }

    /// One update of `key`, like event_hist_trigger(): insert, add sums.
    /// False when the key was dropped.
    #[inline]
    pub fn update(&self, key: u64) -> bool {
        // SAFETY: the map is live; C reads key_size (8) bytes of the key.
        unsafe { cmap_update(self.map.as_ptr(), (&key as *const u64).cast(), self.n_sums) }
    }

    /// `iters` updates with `keys[i % keys.len()]`, looping in C; returns
    /// the drops.  `keys.len()` must be a power of two.
    pub fn run(&self, keys: &[u64], iters: u64) -> u64 {
        assert!(keys.len().is_power_of_two());
        // SAFETY: the map is live; every index is masked into `keys`.
        unsafe {
            cmap_run(
                self.map.as_ptr(),
                keys.as_ptr(),
                keys.len() - 1,
                iters,
                self.n_sums,
            )
        }
    }

    /// [`run`](Self::run) cut after `stage`: 1 only reads the keys, 2
    /// hashes them, 3 also finds or inserts them, 4 also adds to their
    /// sums.
    pub fn run_stages(&self, keys: &[u64], iters: u64, stage: u32) -> u64 {
        assert!(keys.len().is_power_of_two());
        // SAFETY: as in `run()`.
        unsafe {
            cmap_stages(
                self.map.as_ptr(),
                keys.as_ptr(),
                keys.len() - 1,
                iters,
                self.n_sums,
                stage,
            )
        }
    }

    /// Sum `i` of `key` (0 if the key is not there).
    pub fn read_sum(&self, key: u64, i: u32) -> u64 {
        assert!(i < self.n_sums);
        // SAFETY: the map is live, `i` is one of its sums.
        unsafe { cmap_read_sum(self.map.as_ptr(), (&key as *const u64).cast(), i) }
    }

    /// Counted hits.
    pub fn hits(&self) -> u64 {
        // SAFETY: the map is live.
        unsafe { cmap_hits(self.map.as_ptr()) }
    }

    /// Counted drops.
    pub fn drops(&self) -> u64 {
        // SAFETY: the map is live.
        unsafe { cmap_drops(self.map.as_ptr()) }
    }
}

impl Drop for CMap {
    fn drop(&mut self) {
        // SAFETY: created by cmap_create(), not used after this.
        unsafe { cmap_destroy(self.map.as_ptr()) }
    }
}

/// The shim's jhash(), for checking it against known values.
pub fn jhash(key: &[u8], initval: u32) -> u32 {
    // SAFETY: C reads exactly `key.len()` bytes.
    unsafe { cmap_jhash(key.as_ptr().cast(), key.len() as u32, initval) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jhash_lookup3_vectors() {
        // lookup3.c's own self-test values for hashlittle().
        assert_eq!(jhash(b"", 0), 0xdeadbeef);
        assert_eq!(jhash(b"", 0xdeadbeef), 0xbd5b7dde);
        let s = b"Four score and seven years ago";
        assert_eq!(jhash(s, 0), 0x17770551);
        assert_eq!(jhash(s, 1), 0xcd628161);
    }

    #[test]
    fn c_map_counts() {
        let m = CMap::new(7, 3).unwrap();
        for k in 0..100u64 {
            for _ in 0..=k % 3 {
                assert!(m.update(k));
            }
        }
        assert_eq!(m.read_sum(5, 0), 3);
        assert_eq!(m.read_sum(5, 2), 3 * 6);
        assert_eq!(m.read_sum(1000, 0), 0);
        assert_eq!(m.hits(), (0..100).map(|k| k % 3 + 1).sum());
        // 128 elements: the 129th distinct key is dropped.
        for k in 100..128u64 {
            assert!(m.update(k));
        }
        assert!(!m.update(128));
        assert_eq!(m.drops(), 1);
        let keys: Vec<u64> = (0..8).collect();
        assert_eq!(m.run(&keys, 80), 0);
        assert_eq!(m.read_sum(0, 0), 1 + 10);
    }
}
