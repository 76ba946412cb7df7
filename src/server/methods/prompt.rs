//! CLI-model methods (issue 13, seed 003): `prompt/cli` builds the prompt upstream's CLI
//! providers send, `prompt/parseReply` reads the model's reply into events to append.

use super::params::{render_args, Format, RenderOptionsParams};
use crate::convert::{build_cli_prompt, parse_tool_calls, InputEncoding, ParsedToolCall, ToolDefinition};
use crate::messages::StoredMessage;
use crate::server::cancel;
use crate::server::errors::{from_service, invalid_params, INTERNAL_ERROR};
use crate::server::table::{MethodTable, Policy};
use crate::server::wire::parse;
use crate::service::{now_ms, RenderFormat, Rendered};
use jsonrpsee::types::ErrorObjectOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

type RpcResult<T> = Result<T, ErrorObjectOwned>;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CliPromptParams {
    thread_id: Option<String>,
    messages: Option<Vec<StoredMessage>>,
    #[serde(default)]
    tools: Vec<ToolDefinition>,
    #[serde(default)]
    input_encoding: InputEncoding,
    /// `thread/render`'s options that shape the messages (not `fromEvent` or `budget`).
    options: Option<RenderOptionsParams>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParseReplyParams {
    text: String,
    iteration: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ParsedReply {
    content: String,
    tool_calls: Vec<ParsedToolCall>,
    events: Vec<Value>,
}

pub(super) fn register(m: &mut MethodTable) {
    // A read of the thread when it names one (then queued with the thread's other requests).
    m.register("prompt/cli", Policy::THREAD_READ, |params, ctx| async move {
        let p: CliPromptParams = parse(&params)?;
        let messages = match (p.thread_id, p.messages) {
            (Some(_), Some(_)) => return Err(invalid_params("messages", "not with threadId (give one of them)")),
            (None, None) => return Err(invalid_params("threadId", "missing (give threadId or messages)")),
            (None, Some(messages)) => {
                if p.options.is_some() {
                    return Err(invalid_params("options", "applies with threadId only"));
                }
                messages
            }
            (Some(thread_id), None) => {
                let o = p.options.unwrap_or_default();
                if o.budget.is_some() {
                    return Err(invalid_params("options.budget", "applies to thread/render only"));
                }
                let (_, options) = render_args(Format::Messages, o)?;
                let cancel = cancel::current();
                let rendered = ctx
                    .service
                    .render(&thread_id, RenderFormat::Messages, options, &cancel)
                    .await
                    .map_err(from_service)?;
                let Rendered::Messages { json, .. } = rendered else {
                    unreachable!("a messages render answers messages")
                };
                serde_json::from_str(&json)
                    .map_err(|e| ErrorObjectOwned::owned(INTERNAL_ERROR, format!("internal error: {e}"), None::<()>))?
            }
        };
        RpcResult::Ok(json!({ "prompt": build_cli_prompt(&messages, &p.tools, p.input_encoding) }))
    });

    m.register_sync("prompt/parseReply", Policy::STATELESS, |params, _| -> RpcResult<ParsedReply> {
        let p: ParseReplyParams = parse(&params)?;
        let parsed = parse_tool_calls(&p.text);
        let events = reply_events(&parsed.content, &parsed.tool_calls, p.iteration, now_ms());
        Ok(ParsedReply { content: parsed.content, tool_calls: parsed.tool_calls, events })
    });
}

/// The events an agent appends for a reply: the assistant's text when there is any, then one
/// `tool_call` per call, each with the iteration and a timestamp.
fn reply_events(content: &str, calls: &[ParsedToolCall], iteration: u64, timestamp: u64) -> Vec<Value> {
    let mut events = Vec::with_capacity(calls.len() + 1);
    // `content` is trimmed already: non-empty means it has text.
    if !content.is_empty() {
        events.push(json!({
            "type": "message", "role": "assistant", "content": content, "iteration": iteration, "timestamp": timestamp,
        }));
    }
    for call in calls {
        events.push(json!({
            "type": "tool_call",
            "toolName": call.name,
            "toolCallId": call.id,
            "args": Value::Object(call.args.clone()),
            "iteration": iteration,
            "timestamp": timestamp,
        }));
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_becomes_a_message_then_its_calls() {
        let parsed = parse_tool_calls("On it.\n```json\n{\"tool_calls\":[{\"name\":\"ls\",\"args\":{\"d\":\"/\"}},{\"name\":\"pwd\",\"id\":\"x\"}]}\n```");
        let events = reply_events(&parsed.content, &parsed.tool_calls, 4, 17);
        assert_eq!(
            serde_json::to_string(&events).unwrap(),
            r#"[{"type":"message","role":"assistant","content":"On it.","iteration":4,"timestamp":17},{"type":"tool_call","toolName":"ls","toolCallId":"call_0","args":{"d":"/"},"iteration":4,"timestamp":17},{"type":"tool_call","toolName":"pwd","toolCallId":"x","args":{},"iteration":4,"timestamp":17}]"#
        );
        // Only calls: no message. Blank text: no events at all.
        let only_calls = parse_tool_calls("```json\n{\"tool_calls\":[{\"name\":\"ls\"}]}\n```");
        assert_eq!(reply_events(&only_calls.content, &only_calls.tool_calls, 1, 0).len(), 1);
        let blank = parse_tool_calls(" \n\u{a0}");
        assert!(reply_events(&blank.content, &blank.tool_calls, 1, 0).is_empty());
    }
}
