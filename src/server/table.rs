//! The method table: every protocol method, registered once with what the dispatcher must know
//! about it, so dispatch holds no lists of method names.

use crate::service::ThreadService;
use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use jsonrpsee::types::{ErrorObjectOwned, Params};
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// What every method gets: the thread service and the server's settings.
pub struct Context {
    pub service: Arc<ThreadService>,
    pub max_frame_bytes: usize,
    pub tracing: Option<crate::server::TracingCapability>,
}

/// A method's answer: its result as JSON text, or an error object.
pub type Answer = Result<Box<RawValue>, ErrorObjectOwned>;

/// How a method does its work: synchronously, from borrowed params (no copy of them, no
/// future), or as a future that may wait.
enum Handler {
    Sync(SyncHandler),
    Async(AsyncHandler),
}

type SyncHandler = Box<dyn for<'a> Fn(Params<'a>, &Context) -> Answer + Send + Sync>;
type AsyncHandler = Box<dyn Fn(Params<'static>, Arc<Context>) -> BoxFuture<'static, Answer> + Send + Sync>;

/// How the dispatcher runs a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Refused with -32002 before `initialize`.
    pub needs_init: bool,
    /// One at a time per `params.threadId`, in arrival order.
    pub per_thread: bool,
    /// It changes nothing: a `$/cancelRequest` may abandon it while it runs. Otherwise it is
    /// cancelled only before it starts (or handles cancellation itself, as `thread/import`).
    pub abandonable: bool,
    /// Done in its first poll and cheap for small params: run on the reader, saving two task
    /// hand-offs (a thread's request only while nothing of its thread is queued or running).
    /// Work that can take long for a thread under the offload size (exports, views, token
    /// counts, imports) stays off the reader, which must keep reading `$/cancelRequest`.
    pub inline: bool,
}

impl Policy {
    /// A stateless conversion.
    pub const STATELESS: Policy = Policy { needs_init: true, per_thread: false, abandonable: true, inline: true };
    /// Reads a thread.
    pub const THREAD_READ: Policy = Policy { needs_init: true, per_thread: true, abandonable: true, inline: false };
    /// Changes a thread.
    pub const THREAD_WRITE: Policy = Policy { needs_init: true, per_thread: true, abandonable: false, inline: false };
    /// Reads a thread, quickly: renders (kept up to date, or off the reader for big threads)
    /// and pages of events.
    pub const THREAD_READ_QUICK: Policy = Policy { inline: true, ..Policy::THREAD_READ };
    /// Changes a thread by a small amount: open, append, pop, fork, close, delete.
    pub const THREAD_WRITE_QUICK: Policy = Policy { inline: true, ..Policy::THREAD_WRITE };
    /// Reads every thread (`thread/list`).
    pub const SERVICE_READ: Policy = Policy { needs_init: true, per_thread: false, abandonable: true, inline: false };
    /// Changes the store outside any thread (`blob/put`): never abandoned halfway.
    pub const SERVICE_WRITE: Policy = Policy { needs_init: true, per_thread: false, abandonable: false, inline: false };
    /// The lifecycle methods, which the dispatcher runs itself.
    pub const LIFECYCLE: Policy = Policy { needs_init: false, per_thread: false, abandonable: false, inline: true };
}

pub struct Method {
    pub name: &'static str,
    pub policy: Policy,
    handler: Handler,
}

impl Method {
    pub fn call(&self, params: Params<'static>, context: Arc<Context>) -> BoxFuture<'static, Answer> {
        match &self.handler {
            Handler::Sync(handler) => std::future::ready(handler(params, &context)).boxed(),
            Handler::Async(handler) => handler(params, context),
        }
    }

    /// The answer at once, for a synchronous method; `None` for one that must run as a task.
    pub fn call_now(&self, params: Params<'_>, context: &Context) -> Option<Answer> {
        match &self.handler {
            Handler::Sync(handler) => Some(handler(params, context)),
            Handler::Async(_) => None,
        }
    }
}

pub struct MethodTable {
    methods: HashMap<&'static str, Method>,
    context: Arc<Context>,
}

impl MethodTable {
    pub fn new(context: Context) -> Self {
        MethodTable { methods: HashMap::new(), context: Arc::new(context) }
    }

    pub fn get(&self, name: &str) -> Option<&Method> {
        self.methods.get(name)
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.context
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.methods.keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// Registers an async method whose result serializes as its answer.
    pub fn register<R, F, Fut>(&mut self, name: &'static str, policy: Policy, handler: F)
    where
        R: Serialize + 'static,
        F: Fn(Params<'static>, Arc<Context>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObjectOwned>> + Send + 'static,
    {
        let handler = move |params, context| handler(params, context).map(serialize).boxed();
        self.insert(name, policy, Handler::Async(Box::new(handler)));
    }

    /// Registers an async method that writes its answer's JSON itself (big results, written once).
    pub fn register_raw<F, Fut>(&mut self, name: &'static str, policy: Policy, handler: F)
    where
        F: Fn(Params<'static>, Arc<Context>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Answer> + Send + 'static,
    {
        self.insert(name, policy, Handler::Async(Box::new(move |params, context| handler(params, context).boxed())));
    }

    /// Registers a method whose work is synchronous.
    pub fn register_sync<R, F>(&mut self, name: &'static str, policy: Policy, handler: F)
    where
        R: Serialize,
        F: for<'a> Fn(Params<'a>, &Context) -> Result<R, ErrorObjectOwned> + Send + Sync + 'static,
    {
        self.insert(name, policy, Handler::Sync(Box::new(move |params, context| serialize(handler(params, context)))));
    }

    fn insert(&mut self, name: &'static str, policy: Policy, handler: Handler) {
        let previous = self.methods.insert(name, Method { name, policy, handler });
        assert!(previous.is_none(), "method {name} registered twice");
    }
}

fn serialize<R: Serialize>(result: Result<R, ErrorObjectOwned>) -> Answer {
    result.and_then(|value| {
        serde_json::value::to_raw_value(&value).map_err(|e| {
            ErrorObjectOwned::owned(super::errors::INTERNAL_ERROR, format!("internal error: {e}"), None::<()>)
        })
    })
}
