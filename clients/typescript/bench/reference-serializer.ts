/**
 * An in-process port of the seed `serializeThreadToXml` (with the documented fixes: compact JSON
 * for non-string tool results, U+FFFD for characters XML forbids, unknown types as compact JSON).
 * Used as the baseline of the client benchmark and as an independent oracle in tests.
 */
import type { AnyAgentEvent } from "../src/types.js";

// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

export function escapeXml(text: string): string {
  return text.replace(FORBIDDEN, "\uFFFD").replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function bodyOf(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

export function serializeThreadToXml(events: readonly AnyAgentEvent[], options: { responsePrefix?: string } = {}): string {
  const toolNames = new Map<string, string>();
  const lines = ["<thread>"];
  events.forEach((event, id) => {
    const e = event as Record<string, unknown>;
    const it = escapeXml(String(e.iteration));
    let attrs: string;
    let body: string;
    switch (event.type) {
      case "message": {
        const type = e.role === "user" ? "human" : e.role === "assistant" ? "ai" : "system";
        attrs = `type="${type}" id="${id}" iteration="${it}"`;
        body = String(e.content);
        break;
      }
      case "tool_call":
        toolNames.set(String(e.toolCallId), String(e.toolName));
        attrs = `type="tool_input" id="${id}" name="${escapeXml(String(e.toolName))}" iteration="${it}"`;
        body = JSON.stringify(e.args);
        break;
      case "tool_result": {
        const name = toolNames.get(String(e.toolCallId)) ?? "unknown";
        attrs = `type="tool_output" id="${id}" name="${escapeXml(name)}" status="success" iteration="${it}"`;
        body = bodyOf(e.result);
        break;
      }
      case "error":
        attrs = `type="error" id="${id}" iteration="${it}" recoverable="${String(e.recoverable)}"`;
        body = String(e.error);
        break;
      case "human_input_requested":
        attrs = `type="human_input_requested" id="${id}" iteration="${it}"`;
        body = String(e.question);
        break;
      case "human_input_received":
        attrs = `type="human_input_received" id="${id}" iteration="${it}"`;
        body = String(e.response);
        break;
      case "completion":
        attrs = `type="completion" id="${id}" iteration="${it}"`;
        body = String(e.result);
        break;
      case "summary":
        attrs = `type="summary" id="${id}" iteration="${it}" summarizedIterations="${escapeXml((e.summarizedIterations as number[]).join(","))}"`;
        body = String(e.summary);
        break;
      default: {
        const { type: _t, iteration: _i, timestamp: _ts, ...rest } = e;
        attrs = `type="${escapeXml(String(e.type))}" id="${id}" iteration="${it}"`;
        body = JSON.stringify(rest);
      }
    }
    lines.push(`  <event ${attrs}>${escapeXml(body)}</event>`);
  });
  lines.push("</thread>");
  const xml = lines.join("\n");
  return options.responsePrefix ? `${xml}\n${options.responsePrefix}` : xml;
}
