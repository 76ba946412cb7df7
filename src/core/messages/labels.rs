//! The labels standard mode writes in front of text that has no message type of its own. The
//! renderer writes them and `messages/toEvents` reads them back, so both use these.

pub const SYSTEM_LABEL: &str = "[System]: ";
pub const HUMAN_RESPONSE_LABEL: &str = "[Human Response]: ";
/// An error, recoverable, whether it answers a call or stands alone.
pub const RECOVERABLE_LABEL: &str = "[Error (recoverable)]: ";
/// A non-recoverable error that answers a call.
pub const NON_RECOVERABLE_LABEL: &str = "[Error (non-recoverable)]: ";
/// A non-recoverable error that answers no call (upstream's wording).
pub const ERROR_LABEL: &str = "[Error]: ";
/// A result whose call is unknown or answered: this, the call id, then `"]: "`.
pub const STRAY_RESULT_LABEL: &str = "[Tool Result for ";
/// The answer the renderer makes up for a call that never got one.
pub const NOT_COMPLETED_LABEL: &str = "[Tool call not completed]: ";
/// The reason of a not-completed call that a human-input request interrupted: this, then the question.
pub const STOPPED_FOR_INPUT: &str = "the run stopped to ask for human input: ";
