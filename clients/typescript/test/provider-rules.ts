/**
 * The providers' sequencing rules, which their request types cannot express (the same rules as
 * the Python suite's provider_rules.py). Each function returns the problems found, each naming
 * the offending position; an empty list means the request is acceptable.
 *
 * - OpenAI Chat Completions: an assistant message with `tool_calls` is followed at once by one
 *   `tool` message per call id, before any other message; a `tool` message anywhere else is
 *   refused; call ids are unique, not empty and at most 40 characters.
 * - OpenAI Responses: every `function_call` has exactly one `function_call_output` with its
 *   `call_id` after it, every output has its call before it; a `reasoning` item is followed by
 *   the item it led to (a call or an assistant message).
 * - Anthropic Messages: roles alternate starting with `user`; every `tool_use` is answered by a
 *   `tool_result` in the very next (user) turn, tool results first; a `tool_result` answers a
 *   `tool_use` of the turn just before; no empty content (but in a final assistant turn) or text,
 *   and no whitespace-only text in a turn without other text ("text content blocks must contain
 *   non-whitespace text"); tool ids match
 *   `^[A-Za-z0-9_-]{1,64}$` and are unique. Prompt caching: at most 4 blocks carry
 *   `cache_control`, each `{type: "ephemeral"}` with an optional `ttl` of "5m" or "1h", none on
 *   an empty text block, and a 1h breakpoint never after a 5m one; a system given as blocks is
 *   a non-empty list of non-empty text blocks.
 */
import type { AnthropicContentBlock, AnthropicMessage, AnthropicRequest, OpenAIChatMessage, OpenAIResponsesInputItem } from "../src/index.js";

/** Anthropic answers 400 for a request with more cache breakpoints than this. */
export const ANTHROPIC_MAX_CACHE_BREAKPOINTS = 4;

export const ANTHROPIC_TOOL_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Chat Completions answers 400 "string too long" for a longer `tool_calls[].id`. */
export const OPENAI_CHAT_MAX_TOOL_CALL_ID = 40;

function isJsonObjectText(text: unknown): boolean {
  if (typeof text !== "string") return false;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value);
  } catch {
    return false;
  }
}

export function openAIChatProblems(messages: readonly OpenAIChatMessage[]): string[] {
  const problems: string[] = [];
  const seenIds = new Set<string>();
  let i = 0;
  while (i < messages.length) {
    const message = messages[i]!;
    const where = `messages[${i}]`;
    if (message.role === "tool") {
      problems.push(`${where}: tool message ${JSON.stringify(message.tool_call_id)} does not follow the assistant message that made the call`);
      i++;
      continue;
    }
    if (message.role !== "assistant" || message.tool_calls === undefined) {
      if (message.role === "assistant" && message.content === null) problems.push(`${where}: assistant message with neither content nor tool_calls`);
      i++;
      continue;
    }
    if (message.tool_calls.length === 0) problems.push(`${where}: empty tool_calls list`);
    const pending = new Map<string, number>();
    message.tool_calls.forEach((call, k) => {
      if (call.id === "") problems.push(`${where}.tool_calls[${k}].id: empty`);
      else if (call.id.length > OPENAI_CHAT_MAX_TOOL_CALL_ID)
        problems.push(`${where}.tool_calls[${k}].id: ${call.id.length} characters, over the ${OPENAI_CHAT_MAX_TOOL_CALL_ID} the API accepts`);
      if (seenIds.has(call.id)) problems.push(`${where}.tool_calls[${k}].id: ${JSON.stringify(call.id)} used by an earlier call`);
      seenIds.add(call.id);
      pending.set(call.id, (pending.get(call.id) ?? 0) + 1);
      if (!isJsonObjectText(call.function.arguments)) problems.push(`${where}.tool_calls[${k}].function.arguments: not the JSON text of an object`);
    });
    i++;
    for (; i < messages.length; i++) {
      const answer = messages[i]!;
      if (answer.role !== "tool") break;
      const count = pending.get(answer.tool_call_id) ?? 0;
      if (count === 0) problems.push(`messages[${i}]: tool message ${JSON.stringify(answer.tool_call_id)} answers no pending call of ${where}`);
      else pending.set(answer.tool_call_id, count - 1);
    }
    for (const [id, count] of pending) {
      if (count > 0) problems.push(`${where}: tool call ${JSON.stringify(id)} is not answered by the tool messages right after it`);
    }
  }
  return problems;
}

export function openAIResponsesProblems(items: readonly OpenAIResponsesInputItem[]): string[] {
  const problems: string[] = [];
  const calls = new Map<string, number>();
  const answered = new Set<string>();
  items.forEach((item, i) => {
    const where = `input[${i}]`;
    switch (item.type) {
      case "function_call":
        if (item.call_id === "") problems.push(`${where}.call_id: empty`);
        if (calls.has(item.call_id)) problems.push(`${where}.call_id: ${JSON.stringify(item.call_id)} used by input[${calls.get(item.call_id)}] too`);
        calls.set(item.call_id, i);
        if (!isJsonObjectText(item.arguments)) problems.push(`${where}.arguments: not the JSON text of an object`);
        break;
      case "function_call_output":
        if (!calls.has(item.call_id)) problems.push(`${where}: output for ${JSON.stringify(item.call_id)} has no function_call before it`);
        else if (answered.has(item.call_id)) problems.push(`${where}: second output for ${JSON.stringify(item.call_id)}`);
        answered.add(item.call_id);
        break;
      case "reasoning": {
        const next = items[i + 1];
        const leadsSomewhere = next !== undefined && (next.type === "function_call" || (next.type === "message" && next.role === "assistant"));
        if (!leadsSomewhere) problems.push(`${where}: reasoning item not followed by the call or assistant message it led to`);
        break;
      }
      default:
        break;
    }
  });
  for (const [id, i] of calls) {
    if (!answered.has(id)) problems.push(`input[${i}]: function_call ${JSON.stringify(id)} has no function_call_output after it`);
  }
  return problems;
}

function toolUseIds(message: AnthropicMessage | undefined): string[] {
  return (message?.content ?? []).flatMap((b: AnthropicContentBlock) => (b.type === "tool_use" ? [b.id] : []));
}

function toolResultIds(message: AnthropicMessage | undefined): string[] {
  return (message?.content ?? []).flatMap((b: AnthropicContentBlock) => (b.type === "tool_result" ? [b.tool_use_id] : []));
}

/** The problems of the request's `cache_control` marks, system blocks included. */
function cacheControlProblems(system: AnthropicRequest["system"], messages: readonly AnthropicMessage[]): string[] {
  const problems: string[] = [];
  const blocks: [string, AnthropicContentBlock][] = [
    ...(Array.isArray(system) ? system.map((b, k): [string, AnthropicContentBlock] => [`system[${k}]`, b]) : []),
    ...messages.flatMap((m, i) => m.content.map((b, k): [string, AnthropicContentBlock] => [`messages[${i}].content[${k}]`, b])),
  ];
  let breakpoints = 0;
  let seenShortTtl = false;
  for (const [where, block] of blocks) {
    const mark = block.cache_control;
    if (mark === undefined) continue;
    breakpoints++;
    if (mark.type !== "ephemeral" || !["5m", "1h", undefined].includes(mark.ttl) || Object.keys(mark).some((key) => key !== "type" && key !== "ttl"))
      problems.push(`${where}.cache_control: ${JSON.stringify(mark)} is not {type: "ephemeral", ttl?: "5m" | "1h"}`);
    if (block.type === "text" && block.text === "") problems.push(`${where}: cache_control on an empty text block`);
    if (mark.ttl === "1h" && seenShortTtl) problems.push(`${where}: a 1h breakpoint after a 5m one`);
    if (mark.ttl !== "1h") seenShortTtl = true;
  }
  if (breakpoints > ANTHROPIC_MAX_CACHE_BREAKPOINTS) problems.push(`${breakpoints} cache breakpoints, more than ${ANTHROPIC_MAX_CACHE_BREAKPOINTS}`);
  return problems;
}

export function anthropicProblems(system: AnthropicRequest["system"], messages: readonly AnthropicMessage[]): string[] {
  const problems: string[] = cacheControlProblems(system, messages);
  if (typeof system === "string" && system.trim() === "") problems.push(`system: ${JSON.stringify(system)} is not a non-empty text`);
  if (Array.isArray(system)) {
    if (system.length === 0) problems.push("system: an empty list of blocks");
    system.forEach((block, k) => {
      if (block.type !== "text" || block.text.trim() === "") problems.push(`system[${k}]: not a non-empty text block`);
    });
  }
  if (messages.length > 0 && messages[0]!.role !== "user") problems.push("messages[0]: the first turn is not a user turn");
  const useIds = new Set<string>();
  messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    const before = i > 0 ? messages[i - 1] : undefined;
    if (before !== undefined && before.role === message.role) problems.push(`${where}: second ${message.role} turn in a row`);
    if (message.content.length === 0 && !(i === messages.length - 1 && message.role === "assistant")) problems.push(`${where}.content: empty`);
    const hasText = message.content.some((b) => b.type === "text" && b.text.trim() !== "");
    const usesBefore = new Set(before?.role === "assistant" ? toolUseIds(before) : []);
    const answered = new Set<string>();
    let seenOther = false;
    message.content.forEach((block, k) => {
      if (block.type === "text" && block.text === "") problems.push(`${where}.content[${k}]: empty text`);
      else if (block.type === "text" && block.text.trim() === "" && !hasText)
        problems.push(`${where}.content[${k}]: whitespace-only text in a turn without other text`);
      if (block.type === "tool_use") {
        if (!ANTHROPIC_TOOL_ID.test(block.id)) problems.push(`${where}.content[${k}].id: ${JSON.stringify(block.id)} does not match ${ANTHROPIC_TOOL_ID.source}`);
        if (useIds.has(block.id)) problems.push(`${where}.content[${k}].id: ${JSON.stringify(block.id)} used by an earlier tool_use`);
        useIds.add(block.id);
      }
      if (block.type !== "tool_result") {
        seenOther = true;
        return;
      }
      if (message.role !== "user") problems.push(`${where}.content[${k}]: tool_result in a ${message.role} turn`);
      if (seenOther) problems.push(`${where}.content[${k}]: tool_result after other content (tool results come first)`);
      if (!usesBefore.has(block.tool_use_id)) problems.push(`${where}.content[${k}]: tool_result ${JSON.stringify(block.tool_use_id)} answers no tool_use of the turn before`);
      if (answered.has(block.tool_use_id)) problems.push(`${where}.content[${k}]: second tool_result for ${JSON.stringify(block.tool_use_id)}`);
      answered.add(block.tool_use_id);
    });
    const after = messages[i + 1];
    const resultsAfter = new Set(after?.role === "user" ? toolResultIds(after) : []);
    for (const id of toolUseIds(message)) {
      if (!resultsAfter.has(id)) problems.push(`${where}: tool_use ${JSON.stringify(id)} is not answered by a tool_result in the next turn`);
    }
  });
  return problems;
}
