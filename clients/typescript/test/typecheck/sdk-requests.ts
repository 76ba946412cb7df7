/**
 * The provider renders, cached or not, typecheck as the providers' own SDK request parameters
 * (`@anthropic-ai/sdk`, `openai`): a host spreads them into `messages.create` / `chat.completions.create`
 * / `responses.create` without a cast. Never executed.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import type {
  AnthropicRequest,
  AnthropicTextBlock,
  OpenAIChatRequest,
  OpenAIChatTextPart,
  OpenAIResponsesRequest,
  OpenAIResponsesTextPart,
  Thread,
} from "../../src/index.js";

export function anthropicParams(request: AnthropicRequest): Anthropic.MessageCreateParamsNonStreaming {
  return { model: "claude-sonnet-4-5", max_tokens: 1024, ...request };
}

export function anthropicCachedParams(request: AnthropicRequest<AnthropicTextBlock[]>): Anthropic.MessageCreateParamsNonStreaming {
  return { model: "claude-sonnet-4-5", max_tokens: 1024, ...request };
}

export function openAIChatParams(request: OpenAIChatRequest): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
  return { model: "gpt-5.6", ...request };
}

export function openAIChatCachedParams(
  request: OpenAIChatRequest<string | OpenAIChatTextPart[]>,
): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
  return { model: "gpt-5.6", ...request };
}

export function openAIResponsesParams(request: OpenAIResponsesRequest): OpenAI.Responses.ResponseCreateParamsNonStreaming {
  return { model: "gpt-5.6", ...request };
}

export function openAIResponsesCachedParams(
  request: OpenAIResponsesRequest<string | OpenAIResponsesTextPart[]>,
): OpenAI.Responses.ResponseCreateParamsNonStreaming {
  return { model: "gpt-5.6", ...request };
}

/** What a host writes: each render straight into its SDK call's parameters. */
export async function hostSteps(thread: Thread): Promise<unknown[]> {
  return [
    anthropicCachedParams(await thread.renderAnthropic({ cacheControl: "auto", contextMode: "xml" })),
    anthropicParams(await thread.renderAnthropic()),
    openAIChatCachedParams(await thread.renderOpenAIChat({ cacheControl: "auto" })),
    openAIChatCachedParams(await thread.renderOpenAIChat({ cacheControl: { breakpoints: "explicit", ttl: "30m" }, contextMode: "xml" })),
    openAIChatParams(await thread.renderOpenAIChat({ cacheControl: { breakpoints: "none", key: "tenant-7" } })),
    openAIResponsesCachedParams(await thread.renderOpenAIResponses({ cacheControl: "auto", contextMode: "xml" })),
    openAIResponsesParams(await thread.renderOpenAIResponses()),
  ];
}

// The SDK types do check these fields: what they refuse, they refuse here.
export const refused: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
  model: "gpt-5.6",
  // @ts-expect-error a breakpoint mode OpenAI does not have
  messages: [{ role: "user", content: [{ type: "text", text: "x", prompt_cache_breakpoint: { mode: "implicit" } }] }],
};
export const refusedTtl: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
  messages: [],
  model: "gpt-5.6",
  // @ts-expect-error a request TTL the API does not take
  prompt_cache_options: { mode: "implicit", ttl: "12h" },
};
