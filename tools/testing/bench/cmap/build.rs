// SPDX-License-Identifier: GPL-2.0

//! Builds the kernel's kernel/trace/tracing_map.c for userspace.
//!
//! The C is never kept in this repo: it is copied at build time into
//! OUT_DIR from the first of `$RHIST_KERNEL_TREE`,
//! `$RHIST_KCACHE/linux-test`, `~/.cache/rhist/linux-test` that has it,
//! else extracted from /usr/src/linux-source-6.12.tar.xz.  Copying (rather
//! than compiling in place) keeps the tree's own trace.h from being found
//! before the shim's.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";
const FILES: [&str; 2] = ["tracing_map.c", "tracing_map.h"];

fn has_sources(tree: &Path) -> bool {
    FILES
        .iter()
        .all(|f| tree.join("kernel/trace").join(f).is_file())
}

/// The kernel tree to take the sources from, if any.
fn kernel_tree() -> Option<PathBuf> {
    if let Some(t) = env::var_os("RHIST_KERNEL_TREE") {
        let t = PathBuf::from(t);
        if !has_sources(&t) {
            panic!(
                "RHIST_KERNEL_TREE={} has no kernel/trace/tracing_map.[ch]",
                t.display()
            );
        }
        return Some(t);
    }
    let kcache = env::var_os("RHIST_KCACHE")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cache/rhist")));
    kcache
        .map(|k| k.join("linux-test"))
        .filter(|t| has_sources(t))
}

/// Extracts the two files from the tarball under `dir`; returns their
/// kernel/trace directory.
fn from_tarball(dir: &Path) -> PathBuf {
    let status = Command::new("tar")
        .arg("-xJf")
        .arg(TARBALL)
        .arg("-C")
        .arg(dir)
        .arg("--wildcards")
        .arg("*/kernel/trace/tracing_map.[ch]")
        .status()
        .expect("running tar");
    assert!(status.success(), "tar could not extract from {TARBALL}");
    // The tarball's top directory: linux-source-6.12/.
    for e in fs::read_dir(dir).unwrap() {
        let trace = e.unwrap().path().join("kernel/trace");
        if FILES.iter().all(|f| trace.join(f).is_file()) {
            return trace;
        }
    }
    panic!("{TARBALL} has no kernel/trace/tracing_map.[ch]");
}

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let ksrc = out.join("ksrc");
    fs::create_dir_all(&ksrc).unwrap();

    for v in ["RHIST_KERNEL_TREE", "RHIST_KCACHE", "HOME"] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    println!("cargo:rerun-if-changed=shim");
    println!("cargo:rerun-if-changed=src/cmap.c");

    let (from, origin) = match kernel_tree() {
        Some(t) => (t.join("kernel/trace"), t.display().to_string()),
        None => {
            let tar = out.join("tar");
            fs::create_dir_all(&tar).unwrap();
            println!("cargo:rerun-if-changed={TARBALL}");
            (from_tarball(&tar), TARBALL.to_string())
        }
    };
    for f in FILES {
        let src = from.join(f);
        println!("cargo:rerun-if-changed={}", src.display());
        fs::copy(&src, ksrc.join(f)).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    }
    println!("cargo:rustc-env=CMAP_KERNEL_SOURCE={origin}");

    let shim = Path::new(env!("CARGO_MANIFEST_DIR")).join("shim");
    // Roughly the kernel's: -O2, no strict aliasing; its own warnings are
    // not ours to fix.
    cc::Build::new()
        .compiler("gcc")
        .opt_level(2)
        .warnings(false)
        .flag("-std=gnu11")
        .flag("-fno-strict-aliasing")
        .flag("-include")
        .flag(shim.join("kernel.h").to_str().unwrap())
        .include(shim.join("include"))
        .include(&ksrc)
        .file(ksrc.join("tracing_map.c"))
        .file("src/cmap.c")
        .compile("cmap");
}
