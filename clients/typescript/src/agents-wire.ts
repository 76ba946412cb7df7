/**
 * The Agents SDK's items and the Responses API's wire items, both ways: the form a
 * `ThreadSession` stores (the wire item, as the Python SDK holds it) and the difference that
 * gives the SDK's own item back exactly.
 *
 * `toWireItem` follows the SDK's own request conversion (`getInputItems` of
 * `@openai/agents-openai`, which that package does not export): snake_case fields, `providerData`
 * spread into the item, the SDK's placeholder id left out. `fromWireItem` reads a wire item as
 * the SDK would hold it: an output item as the SDK's OpenAI model reads the API's output
 * (`convertToOutputItem`, likewise not exported), an input item as the SDK itself makes it. So
 * the SDK's own items come back from their wire items with nothing, or little (a function
 * result's name), kept beside them. Kinds without a conversion here (tool-search and program
 * items) stay in the SDK's form; a wire item of a kind the SDK does not model (a computer call's
 * output among them) is its `unknown` item, which gives that wire item back.
 */

type Item = Record<string, unknown>;

/** The id the SDK gives an item no provider named. */
const FAKE_ID = "FAKE_ID";

/** The hosted tools' wire types, which the SDK holds as `hosted_tool_call` items named by type. */
const HOSTED_TYPES = new Set([
  "web_search_call",
  "file_search_call",
  "image_generation_call",
  "code_interpreter_call",
  "mcp_list_tools",
  "mcp_approval_request",
  "mcp_approval_response",
  "mcp_call",
]);

/** Item types only the SDK's form has. */
const SDK_ONLY_TYPES = new Set([
  "function_call_result",
  "hosted_tool_call",
  "computer_call_result",
  "unknown",
  "tool_search_call",
  "tool_search_output",
  "program",
  "program_output",
]);

function isRecord(value: unknown): value is Item {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function snakeKey(key: string): string {
  return key.replace(/([A-Z])/g, "_$1").toLowerCase();
}

/** Object keys in snake_case, recursively (array entries as they are), as the SDK sends `providerData`. */
function snakeCased(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice();
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [snakeKey(key), snakeCased(entry)]));
}

/** `providerData` in snake_case without the item's own fields, to spread into the wire item. */
function spreadProviderData(providerData: unknown, reserved: readonly string[]): Item {
  const snake = snakeCased(providerData);
  if (!isRecord(snake)) return {};
  const skip = new Set(reserved.map(snakeKey));
  return Object.fromEntries(Object.entries(snake).filter(([key]) => !skip.has(key)));
}

/** Fields without `undefined` values (the JSON a thread stores). */
function defined(item: Item): Item {
  return Object.fromEntries(Object.entries(item).filter(([, value]) => value !== undefined));
}

function withoutFakeId(item: Item): Item {
  if (item.id !== FAKE_ID) return item;
  const { id: _id, ...rest } = item;
  return rest;
}

function caller(value: unknown): Item {
  if (!isRecord(value)) return {};
  return { caller: value.type === "direct" ? { type: "direct" } : { type: "program", caller_id: value.callerId } };
}

function callerBack(value: unknown): Item {
  if (!isRecord(value)) return {};
  if (value.type === "direct") return { caller: { type: "direct" } };
  return typeof value.caller_id === "string" ? { caller: { type: "program", callerId: value.caller_id } } : {};
}

function inputContentPart(part: Item): Item {
  const extra = spreadProviderData(part.providerData, ["type", "text", "detail", "image_url", "file_id", "file_data", "file_url", "filename"]);
  const breakpoint = part.promptCacheBreakpoint ? { prompt_cache_breakpoint: part.promptCacheBreakpoint } : {};
  switch (part.type) {
    case "input_text":
      return { type: "input_text", text: part.text, ...breakpoint, ...extra };
    case "input_image": {
      const image = part.image;
      const source =
        typeof image === "string" ? { image_url: image } : isRecord(image) && "id" in image ? { file_id: image.id } : typeof part.imageUrl === "string" ? { image_url: part.imageUrl } : typeof part.fileId === "string" ? { file_id: part.fileId } : {};
      return { type: "input_image", detail: part.detail ?? "auto", ...source, ...breakpoint, ...extra };
    }
    case "input_file": {
      const file = part.file;
      const source =
        typeof file === "string"
          ? file.trim().startsWith("https://")
            ? { file_url: file.trim() }
            : { file_data: file.trim() }
          : isRecord(file) && "id" in file
            ? { file_id: file.id }
            : isRecord(file) && "url" in file
              ? { file_url: file.url }
              : {};
      return { type: "input_file", ...source, ...(part.filename ? { filename: part.filename } : {}), ...breakpoint, ...extra };
    }
    default:
      return part;
  }
}

function inputContentPartBack(part: Item): Item {
  switch (part.type) {
    case "input_text": {
      const { type: _t, text, prompt_cache_breakpoint: breakpoint, ...rest } = part;
      return defined({ type: "input_text", text, promptCacheBreakpoint: breakpoint, ...providerData(rest) });
    }
    case "input_image": {
      const { type: _t, detail, image_url: url, file_id: fileId, prompt_cache_breakpoint: breakpoint, ...rest } = part;
      const image = typeof url === "string" ? url : typeof fileId === "string" ? { id: fileId } : undefined;
      return defined({ type: "input_image", image, detail, promptCacheBreakpoint: breakpoint, ...providerData(rest) });
    }
    case "input_file": {
      const { type: _t, file_data: data, file_url: url, file_id: fileId, filename, prompt_cache_breakpoint: breakpoint, ...rest } = part;
      const file = typeof fileId === "string" ? { id: fileId } : typeof url === "string" ? { url } : data;
      return defined({ type: "input_file", file, filename, promptCacheBreakpoint: breakpoint, ...providerData(rest) });
    }
    default:
      return part;
  }
}

function outputContentPart(part: Item): Item {
  if (part.type === "output_text") {
    const annotations = isRecord(part.providerData) ? part.providerData.annotations : undefined;
    return { type: "output_text", text: part.text, annotations: Array.isArray(annotations) ? annotations : [], ...spreadProviderData(part.providerData, ["type", "text", "annotations"]) };
  }
  if (part.type === "refusal") return { type: "refusal", refusal: part.refusal, ...spreadProviderData(part.providerData, ["type", "refusal"]) };
  return part;
}

function outputContentPartBack(part: Item): Item {
  if (part.type === "output_text") {
    const { type: _t, text, ...rest } = part;
    return { type: "output_text", text, ...providerData(rest) };
  }
  if (part.type === "refusal") {
    const { type: _t, refusal, ...rest } = part;
    return { type: "refusal", refusal, ...providerData(rest) };
  }
  return part;
}

/** A system message's text: the SDK's system items hold a string. */
function systemText(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((part: Item) => (typeof part.text === "string" ? part.text : null)).filter((text) => text !== null).join("\n");
}

/** `{providerData}` of the fields left over, or nothing when none are. */
function providerData(rest: Item): Item {
  const kept = defined(rest);
  return Object.keys(kept).length > 0 ? { providerData: kept } : {};
}

/** A structured tool output part as the Responses API's part (what the SDK sends). */
function outputPart(part: Item): Item {
  switch (part.type) {
    case "input_text":
      return { type: "input_text", text: part.text };
    case "input_image": {
      const image = part.image ?? part.imageUrl;
      const source = typeof image === "string" ? { image_url: image } : isRecord(image) && typeof image.id === "string" ? { file_id: image.id } : {};
      return { type: "input_image", ...source, ...(typeof part.fileId === "string" ? { file_id: part.fileId } : {}), ...(part.detail ? { detail: part.detail } : {}) };
    }
    case "input_file": {
      const file = part.file;
      const source =
        typeof file === "string"
          ? /^(https?:\/\/)/.test(file.trim()) ? { file_url: file.trim() } : { file_data: file.trim() }
          : isRecord(file) && typeof file.id === "string"
            ? { file_id: file.id }
            : isRecord(file) && typeof file.url === "string"
              ? { file_url: file.url }
              : {};
      return { type: "input_file", ...source, ...(part.filename ? { filename: part.filename } : {}) };
    }
    default:
      return part;
  }
}

function outputPartBack(part: Item): Item {
  switch (part.type) {
    case "input_text":
      return { type: "input_text", text: part.text };
    case "input_image": {
      const image = typeof part.image_url === "string" ? part.image_url : typeof part.file_id === "string" ? { id: part.file_id } : undefined;
      return defined({ type: "input_image", image, detail: part.detail });
    }
    case "input_file": {
      const file = typeof part.file_id === "string" ? { id: part.file_id } : typeof part.file_url === "string" ? { url: part.file_url } : part.file_data;
      return defined({ type: "input_file", file, filename: part.filename });
    }
    default:
      return part;
  }
}

function functionOutput(output: unknown): unknown {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return output.map(outputPart);
  if (isRecord(output) && output.type === "text" && typeof output.text === "string") return output.text;
  return String(output);
}

/** A function output as the SDK's tools give it: text as a text output, parts as their SDK parts. */
function functionOutputBack(output: unknown): unknown {
  if (typeof output === "string") return { type: "text", text: output };
  if (Array.isArray(output)) return output.map(outputPartBack);
  return output;
}

function messageToWire(item: Item): Item {
  const rest = ["id", "role", "content", "phase"];
  switch (item.role) {
    case "system":
      return { id: item.id, role: "system", content: item.content, ...spreadProviderData(item.providerData, rest) };
    case "user":
      return {
        id: item.id,
        role: "user",
        content: Array.isArray(item.content) ? item.content.map(inputContentPart) : item.content,
        ...spreadProviderData(item.providerData, rest),
      };
    case "assistant": {
      const phase = item.phase ?? (isRecord(item.providerData) ? item.providerData.phase : undefined);
      return withoutFakeId({
        type: "message",
        id: item.id,
        role: "assistant",
        content: Array.isArray(item.content) ? item.content.map(outputContentPart) : item.content,
        status: item.status,
        ...(phase === undefined ? {} : { phase }),
        ...spreadProviderData(item.providerData, ["type", ...rest, "status"]),
      });
    }
    default:
      return item;
  }
}

function hostedToWire(item: Item): Item {
  const data = isRecord(item.providerData) ? item.providerData : {};
  const kind = String(data.type ?? item.name);
  const type = kind.endsWith("_call") || kind.startsWith("mcp_") ? kind : `${kind}_call`;
  const snake = snakeCased(data) as Item;
  const by = caller(item.caller);
  switch (type) {
    case "mcp_list_tools":
      return { ...snake, type, id: item.id, ...by };
    case "mcp_approval_request":
    case "mcp_call":
      return { ...snake, type, id: data.id ?? item.id, ...by };
    case "mcp_approval_response":
      return { ...snake, type, id: data.id, ...by };
    case "file_search_call":
      return { ...snake, type, id: item.id, status: item.status ?? "failed", queries: data.queries ?? [] };
    case "code_interpreter_call":
      return { ...snake, type, id: item.id, code: data.code ?? "", outputs: data.outputs ?? data.results ?? [], status: item.status ?? "failed", ...by };
    case "image_generation_call":
      return { ...snake, type, id: item.id, result: data.result ?? item.output ?? null, status: item.status ?? "failed" };
    default:
      return { ...snake, type, id: item.id, status: item.status ?? "failed" };
  }
}

function nonEmpty(value: unknown): unknown[] | undefined {
  return Array.isArray(value) && value.length > 0 ? value : undefined;
}

/** Computer, shell and apply-patch calls and their outputs, as the SDK sends them. */
function toolCallToWire(item: Item): Item {
  const pd = isRecord(item.providerData) ? item.providerData : undefined;
  const by = caller(item.caller);
  switch (item.type) {
    case "computer_call": {
      const pending = nonEmpty(pd?.pendingSafetyChecks ?? pd?.pending_safety_checks);
      const batched = nonEmpty(item.actions);
      const actions = batched ? { action: item.action ?? batched[0], actions: batched } : item.action ? { action: item.action } : {};
      return {
        type: "computer_call",
        call_id: item.callId,
        id: item.id,
        status: item.status,
        ...(pending ? { pending_safety_checks: pending } : {}),
        ...actions,
        ...spreadProviderData(pd, ["type", "call_id", "id", "action", "actions", "status", "pending_safety_checks"]),
      };
    }
    case "computer_call_result": {
      const acknowledged = nonEmpty(pd?.acknowledgedSafetyChecks ?? pd?.acknowledged_safety_checks);
      return {
        type: "computer_call_output",
        id: item.id,
        call_id: item.callId,
        output: { type: "computer_screenshot", image_url: (item.output as Item | undefined)?.data },
        status: pd?.status,
        ...(acknowledged ? { acknowledged_safety_checks: acknowledged } : {}),
        ...spreadProviderData(pd, ["type", "id", "call_id", "output", "status", "acknowledged_safety_checks"]),
      };
    }
    case "shell_call": {
      const action = (item.action ?? {}) as Item;
      const environment = isRecord(snakeCased(pd)) ? (snakeCased(pd) as Item).environment : undefined;
      return {
        type: "shell_call",
        id: item.id,
        call_id: item.callId,
        status: item.status ?? "in_progress",
        action: {
          commands: action.commands,
          timeout_ms: typeof action.timeoutMs === "number" ? action.timeoutMs : null,
          max_output_length: typeof action.maxOutputLength === "number" ? action.maxOutputLength : null,
        },
        ...by,
        ...(isRecord(environment) ? { environment } : {}),
      };
    }
    case "shell_call_output": {
      const outputs = (Array.isArray(item.output) ? item.output : []).map((entry: Item) => {
        const outcome = entry?.outcome as Item | undefined;
        return {
          stdout: typeof entry?.stdout === "string" ? entry.stdout : "",
          stderr: typeof entry?.stderr === "string" ? entry.stderr : "",
          outcome: outcome?.type === "timeout" ? { type: "timeout" } : { type: "exit", exit_code: (outcome?.type === "exit" ? outcome.exitCode : null) ?? 0 },
        };
      });
      return {
        type: "shell_call_output",
        call_id: item.callId,
        output: outputs,
        id: item.id,
        status: item.status,
        ...by,
        ...(typeof item.maxOutputLength === "number" ? { max_output_length: item.maxOutputLength } : {}),
      };
    }
    case "apply_patch_call": {
      const operation = item.operation as Item;
      const { moveTo, ...rest } = operation;
      return {
        type: "apply_patch_call",
        id: item.id,
        call_id: item.callId,
        status: item.status ?? "in_progress",
        operation: operation.type === "update_file" && moveTo !== undefined ? { ...rest, move_to: moveTo } : operation,
        ...by,
      };
    }
    default:
      return { type: "apply_patch_call_output", id: item.id, call_id: item.callId, status: item.status ?? "completed", output: item.output, ...by };
  }
}

/** Computer, shell and apply-patch calls and their outputs, as the SDK's OpenAI model reads them (a computer call's output has no form there: `unknown`). */
function toolCallFromWire(wire: Item): Item {
  const { call_id: callId, status, caller: by, ...rest } = wire;
  const called = callerBack(by);
  switch (wire.type) {
    case "computer_call": {
      const { action, actions, ...providerData } = rest;
      const batched = nonEmpty(actions);
      return defined({ type: "computer_call", id: wire.id, callId, status, action: action ?? batched?.[0], ...(batched ? { actions: batched } : {}), providerData: { ...providerData, ...(by === undefined ? {} : { caller: by }) } });
    }
    case "shell_call": {
      const { action, ...providerData } = rest;
      const given = isRecord(action) ? action : {};
      const shellAction = {
        commands: Array.isArray(given.commands) ? given.commands : [],
        ...(typeof given.timeout_ms === "number" ? { timeoutMs: given.timeout_ms } : {}),
        ...(typeof given.max_output_length === "number" ? { maxOutputLength: given.max_output_length } : {}),
      };
      return defined({ type: "shell_call", id: wire.id, callId, status: status ?? "in_progress", action: shellAction, ...called, providerData });
    }
    case "shell_call_output": {
      const { output, max_output_length: maxOutputLength, ...providerData } = rest;
      const outputs = (Array.isArray(output) ? output : []).map((entry: Item) => {
        const outcome = entry?.outcome as Item | undefined;
        return {
          stdout: typeof entry?.stdout === "string" ? entry.stdout : "",
          stderr: typeof entry?.stderr === "string" ? entry.stderr : "",
          outcome: outcome?.type === "timeout" ? { type: "timeout" } : { type: "exit", exitCode: typeof outcome?.exit_code === "number" ? outcome.exit_code : null },
        };
      });
      return defined({
        type: "shell_call_output",
        id: wire.id,
        callId,
        output: outputs,
        ...(status ? { status } : {}),
        ...called,
        providerData,
        ...(typeof maxOutputLength === "number" ? { maxOutputLength } : {}),
      });
    }
    case "apply_patch_call": {
      const { operation, ...providerData } = rest;
      const given = (isRecord(operation) ? operation : {}) as Item;
      const normalized =
        given.type === "delete_file"
          ? { type: "delete_file", path: given.path }
          : given.type === "update_file"
            ? defined({ type: "update_file", path: given.path, diff: given.diff, moveTo: given.move_to ?? undefined })
            : { type: given.type, path: given.path, diff: given.diff };
      return defined({ type: "apply_patch_call", id: wire.id, callId, status: status ?? "in_progress", operation: normalized, ...called, providerData });
    }
    default: {
      const { output, ...providerData } = rest;
      return defined({ type: "apply_patch_call_output", id: wire.id, callId, status, output: typeof output === "string" ? output : undefined, ...called, providerData });
    }
  }
}

/** An SDK item as the Responses API's wire item, as the SDK sends it (kinds without a conversion here: as they are). */
export function toWireItem(item: unknown): Item {
  if (!isRecord(item)) return item as Item;
  const pd = item.providerData;
  let wire: Item;
  switch (item.type ?? (typeof item.role === "string" ? "message" : undefined)) {
    case "message":
      wire = messageToWire(item);
      break;
    case "function_call":
      wire = withoutFakeId({
        id: item.id,
        type: "function_call",
        name: item.name,
        call_id: item.callId,
        arguments: item.arguments,
        status: item.status,
        ...caller(item.caller),
        ...(typeof item.namespace === "string" ? { namespace: item.namespace } : {}),
        ...spreadProviderData(pd, ["id", "type", "name", "call_id", "arguments", "status", "namespace", "caller"]),
      });
      break;
    case "function_call_result":
      wire = {
        type: "function_call_output",
        id: item.id,
        call_id: item.callId,
        output: functionOutput(item.output),
        status: item.status,
        ...caller(item.caller),
        ...spreadProviderData(pd, ["type", "id", "call_id", "output", "status", "namespace", "caller"]),
      };
      break;
    case "reasoning": {
      const encrypted = isRecord(pd) ? (pd.encryptedContent ?? pd.encrypted_content) : undefined;
      wire = {
        id: item.id,
        type: "reasoning",
        summary: (Array.isArray(item.content) ? (item.content as Item[]) : []).map((part) => ({ type: "summary_text", text: part.text, ...spreadProviderData(part.providerData, ["type", "text"]) })),
        ...(typeof encrypted === "string" ? { encrypted_content: encrypted } : {}),
        ...spreadProviderData(pd, ["id", "type", "summary", "encrypted_content"]),
      };
      break;
    }
    case "hosted_tool_call":
      wire = hostedToWire(item);
      break;
    case "computer_call":
    case "computer_call_result":
    case "shell_call":
    case "shell_call_output":
    case "apply_patch_call":
    case "apply_patch_call_output":
      wire = toolCallToWire(item);
      break;
    case "compaction":
      wire = { type: "compaction", id: item.id, encrypted_content: item.encrypted_content ?? item.encryptedContent };
      break;
    case "unknown":
      wire = { ...(snakeCased(pd) as Item), id: item.id };
      break;
    default:
      return item;
  }
  const { created_by: _createdBy, ...rest } = wire;
  return defined(rest);
}

/**
 * A wire item as the SDK's item. Output items (assistant messages, function calls, reasoning,
 * hosted tools' calls) read as the SDK's OpenAI model reads the API's output, what the SDK has no
 * field for in `providerData`; input items as the SDK makes them: a user or system message as
 * written, a function output as its tools' text output (named by its call id, as the SDK does
 * when the name is not given).
 */
export function fromWireItem(wire: unknown): Item {
  if (!isRecord(wire)) return wire as Item;
  const type = wire.type ?? (typeof wire.role === "string" ? "message" : undefined);
  if (type === "message") {
    const { type: _t, id, role, content, status, phase, ...rest } = wire;
    if (role === "assistant") {
      const parts: Item[] = typeof content === "string" ? [{ type: "output_text", text: content }] : Array.isArray(content) ? content : [];
      const phased = phase === "commentary" || phase === "final_answer" ? { phase } : {};
      return defined({ id, type: "message", role, content: parts.map(outputContentPartBack), status, ...phased, providerData: { ...rest, ...phased } });
    }
    if (role === "system") return defined({ id, type: "message", role, content: systemText(content), ...providerData(rest) });
    if (role !== "user") return { type: "unknown", providerData: wire };
    const parts = Array.isArray(content) ? content.map(inputContentPartBack) : content;
    return defined({ id, type: "message", role, content: parts, ...providerData(rest) });
  }
  if (type === "function_call") {
    const { call_id: callId, name, namespace, status, arguments: args, caller: by, ...rest } = wire;
    return defined({ type: "function_call", id: wire.id, callId, name, namespace, status, arguments: args, ...callerBack(by), providerData: rest });
  }
  if (type === "function_call_output") {
    const { type: _t, id, call_id: callId, name, function_name: functionName, namespace, status, output, caller: by, ...rest } = wire;
    const called = name ?? functionName ?? callId;
    return defined({ type: "function_call_result", id, callId, name: called, namespace, status: status ?? "completed", output: functionOutputBack(output), ...callerBack(by), ...providerData(rest) });
  }
  if (type === "reasoning") {
    const { summary, ...rest } = wire;
    const content = (Array.isArray(summary) ? (summary as Item[]) : []).map(({ text, ...part }) => ({ type: "input_text", text, providerData: part }));
    return defined({ type: "reasoning", id: wire.id, content, providerData: rest });
  }
  if (typeof type === "string" && HOSTED_TYPES.has(type)) {
    const { status, caller: by, output, result, ...rest } = wire;
    const produced = type === "image_generation_call" ? result : type === "mcp_call" ? output : undefined;
    const data = type === "image_generation_call" || type === "mcp_call" ? rest : { ...rest, ...(output === undefined ? {} : { output }), ...(result === undefined ? {} : { result }) };
    return defined({
      type: "hosted_tool_call",
      id: wire.id,
      name: type,
      status: type.startsWith("mcp_") ? "completed" : status,
      output: produced ?? undefined,
      ...callerBack(by),
      providerData: type.startsWith("mcp_") && status !== undefined ? { ...data, status } : data,
    });
  }
  if (type === "computer_call" || type === "shell_call" || type === "shell_call_output" || type === "apply_patch_call" || type === "apply_patch_call_output") {
    return toolCallFromWire(wire);
  }
  if (type === "compaction") {
    const { type: _t, id, encrypted_content: encrypted, created_by: createdBy, ...rest } = wire;
    return defined({ type: "compaction", id, encrypted_content: encrypted, created_by: createdBy, ...providerData(rest) });
  }
  return defined({ type: "unknown", id: wire.id, providerData: wire });
}

/** Whether a kept item is in the SDK's own form, as sessions of an earlier version kept it. */
export function isSdkForm(item: unknown): boolean {
  if (!isRecord(item)) return false;
  if ("callId" in item || "providerData" in item) return true;
  if (typeof item.type === "string" && SDK_ONLY_TYPES.has(item.type)) return true;
  if (item.type === "reasoning") return !("summary" in item);
  if (!Array.isArray(item.content)) return false;
  return item.content.some((part: unknown) => isRecord(part) && isSdkPart(part, item.role === "assistant"));
}

/** A content part in the SDK's form: `providerData`; an image's `image`, a file's `file`; output text without `annotations`. */
function isSdkPart(part: Item, assistant: boolean): boolean {
  if ("providerData" in part) return true;
  if (assistant) return part.type === "output_text" && !("annotations" in part);
  return (part.type === "input_image" && "image" in part) || (part.type === "input_file" && "file" in part);
}

/**
 * What an SDK item carries beyond its wire item: the fields `fromWireItem` does not give back
 * as they were (`set`), and those it gives that the item did not have (`unset`).
 */
export interface ItemDifference {
  set?: Item;
  unset?: string[];
}

/** Whether two JSON values are equal (object keys in any order; a key whose value is `undefined` counts as absent). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((entry, i) => sameJson(entry, b[i]));
  if (!isRecord(a) || !isRecord(b)) return false;
  const keys = Object.keys(a).filter((key) => a[key] !== undefined);
  return keys.length === Object.keys(b).filter((key) => b[key] !== undefined).length && keys.every((key) => sameJson(a[key], b[key]));
}

/** The difference between an item and the item read back from its wire form. */
export function itemDifference(item: Item, readBack: Item): ItemDifference {
  const set = Object.fromEntries(Object.entries(item).filter(([key, value]) => value !== undefined && !sameJson(value, readBack[key])));
  const unset = Object.keys(readBack).filter((key) => item[key] === undefined);
  return { ...(Object.keys(set).length > 0 ? { set } : {}), ...(unset.length > 0 ? { unset } : {}) };
}

/** Whether a value is an `ItemDifference` (what a session wrote; anything else is not read as one). */
export function isItemDifference(value: unknown): value is ItemDifference {
  if (!isRecord(value)) return false;
  if (value.set !== undefined && !isRecord(value.set)) return false;
  return value.unset === undefined || (Array.isArray(value.unset) && value.unset.every((key) => typeof key === "string"));
}

/** The item read back from its wire form, with its difference put back. */
export function withDifference(readBack: Item, difference: ItemDifference): Item {
  const item: Item = { ...readBack, ...difference.set };
  for (const key of difference.unset ?? []) delete item[key];
  return item;
}
