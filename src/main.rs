//! The `threadkeeper` binary: a thin command line over the library.

mod cli;

use clap::Parser;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    /// glibc: returns the free memory of every arena to the system, not only the top of the heap.
    fn malloc_trim(pad: usize) -> std::ffi::c_int;
}

/// glibc keeps memory freed inside its arenas (a closed 1M-event thread left 475 MiB of 12 MiB
/// resident); trimming when a big thread's memory was freed gives it back. mimalloc was
/// measured as the alternative and kept more (BENCHMARKS.md, "One big thread").
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn give_back_memory() {
    // SAFETY: malloc_trim takes the arena locks itself; any thread may call it at any time.
    unsafe { malloc_trim(0) };
}

fn main() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    threadkeeper::service::set_give_back_memory(give_back_memory);
    let args = cli::Cli::parse();
    std::process::exit(cli::run(args));
}
