//! The `threadkeeper` binary: a thin command line over the library.

mod cli;

use clap::Parser;

/// mimalloc, purging freed pages at once: glibc's allocator kept most of a closed thread's
/// memory resident, and mimalloc with its default 1 s purge delay purges only on later
/// allocations, so an idle server kept all of it (BENCHMARKS.md, "One big thread").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    /// mimalloc's own option setter (linked in with the allocator).
    fn mi_option_set_default(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// `mi_option_purge_delay` in mimalloc.h (the same in mimalloc 2 and 3).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

fn main() {
    // SAFETY: sets a plain integer option before any other thread exists; a value given in
    // MIMALLOC_PURGE_DELAY still wins.
    unsafe { mi_option_set_default(MI_OPTION_PURGE_DELAY, 0) };
    let args = cli::Cli::parse();
    std::process::exit(cli::run(args));
}
