// Seed 000's reference serializer (serializeThreadToXml / escapeXml), ported to plain JavaScript
// as the seed describes it: template literals, `String(event.result)`, the toolCallId → toolName
// map built in one pass before serialization, and escapeXml as chained `.replace` calls.
//
// It is the baseline for bench/compare-xml.sh, not a specification: it keeps the seed's bugs
// (`[object Object]` for object results, characters XML forbids passed through, and — because
// the map is built over the whole array — a result naming a call that comes after it, or the
// last of several calls sharing an id). Event types outside the seed's table are skipped.

export function escapeXml(text) {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

function serializeEvent(event, id, toolNames) {
  switch (event.type) {
    case "message": {
      const type = event.role === "user" ? "human" : event.role === "assistant" ? "ai" : "system";
      return `<event type="${type}" id="${id}" iteration="${event.iteration}">${escapeXml(event.content)}</event>`;
    }
    case "tool_call":
      return `<event type="tool_input" id="${id}" name="${escapeXml(event.toolName)}" iteration="${event.iteration}">${escapeXml(JSON.stringify(event.args))}</event>`;
    case "tool_result": {
      const name = toolNames.get(event.toolCallId) ?? "unknown";
      return `<event type="tool_output" id="${id}" name="${escapeXml(name)}" status="success" iteration="${event.iteration}">${escapeXml(String(event.result))}</event>`;
    }
    case "error":
      return `<event type="error" id="${id}" iteration="${event.iteration}" recoverable="${String(event.recoverable)}">${escapeXml(event.error)}</event>`;
    case "human_input_requested":
      return `<event type="human_input_requested" id="${id}" iteration="${event.iteration}">${escapeXml(event.question)}</event>`;
    case "human_input_received":
      return `<event type="human_input_received" id="${id}" iteration="${event.iteration}">${escapeXml(event.response)}</event>`;
    case "completion":
      return `<event type="completion" id="${id}" iteration="${event.iteration}">${escapeXml(event.result)}</event>`;
    case "summary":
      return `<event type="summary" id="${id}" iteration="${event.iteration}" summarizedIterations="${event.summarizedIterations.join(",")}">${escapeXml(event.summary)}</event>`;
    default:
      return null;
  }
}

export function serializeThreadToXml(events, options = {}) {
  const toolNames = new Map();
  for (const event of events) {
    if (event.type === "tool_call") {
      toolNames.set(event.toolCallId, event.toolName);
    }
  }

  const lines = ["<thread>"];
  events.forEach((event, id) => {
    const line = serializeEvent(event, id, toolNames);
    if (line !== null) {
      lines.push(`  ${line}`);
    }
  });
  lines.push("</thread>");

  let xml = lines.join("\n");
  if (options.responsePrefix) {
    xml += `\n${options.responsePrefix}`;
  }
  return xml;
}
