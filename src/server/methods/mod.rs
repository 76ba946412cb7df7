//! Protocol v1 methods, registered in the [`MethodTable`] with how each is run.
//!
//! Each method parses its params into a typed struct (errors name the failing field), calls
//! the thread service or a pure core function, and shapes the result as `protocol/` specifies.
//! One file per group of methods; what several groups share is in [`params`] and [`render`], so
//! imports run one way: groups to those two, never group to group.

mod blob;
mod cache_control;
mod context;
mod inverse;
mod lifecycle;
mod params;
mod prompt;
mod render;
mod search;
mod stateless;
mod thread;
mod turn;
mod view;

pub use super::table::Context;
use super::table::MethodTable;
pub use lifecycle::PROTOCOL_VERSION;

/// Builds the module with every v1 method.
pub fn table(context: Context) -> MethodTable {
    let mut m = MethodTable::new(context);
    lifecycle::register(&mut m);
    thread::register(&mut m);
    blob::register(&mut m);
    stateless::register(&mut m);
    inverse::register(&mut m);
    turn::register(&mut m);
    prompt::register(&mut m);
    context::register(&mut m);
    view::register(&mut m);
    search::register(&mut m);
    m
}
