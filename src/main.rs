//! The `threadkeeper` binary: a thin command line over the library.

mod cli;

use clap::Parser;

/// glibc keeps memory freed inside its arenas: a closed 1M-event thread left 475 MiB resident.
/// Trimming when a big thread's memory was freed gives it back, and one arena keeps what a
/// render freed on one thread from staying spread over pages of others (BENCHMARKS.md, "One
/// big thread", has the figures, mimalloc's among them).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use std::ffi::c_int;

    extern "C" {
        fn malloc_trim(pad: usize) -> c_int;
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }

    /// `M_ARENA_MAX` in malloc.h.
    const M_ARENA_MAX: c_int = -8;

    /// One arena, unless `MALLOC_ARENA_MAX` says otherwise; before any other thread exists.
    pub fn configure() {
        if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
            // SAFETY: sets a plain allocator parameter; glibc takes its own lock.
            unsafe { mallopt(M_ARENA_MAX, 1) };
        }
        threadkeeper::service::set_give_back_memory(give_back_memory);
    }

    /// Returns the free pages of every arena to the system, not only the top of the heap.
    fn give_back_memory() {
        // SAFETY: malloc_trim takes the arena locks itself; any thread may call it at any time.
        unsafe { malloc_trim(0) };
    }
}

fn main() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    glibc::configure();
    let args = cli::Cli::parse();
    std::process::exit(cli::run(args));
}
