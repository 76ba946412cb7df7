/**
 * The provider fixture threads (clients/fixtures/provider-threads, shared with the Python suite)
 * and the "nothing lost" check of their renderings (the same rules as provider_fixtures.py).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { AnyAgentEvent, Thread, ThreadKeeper, ThreadSettings } from "../src/index.js";
import { repoRoot } from "./helpers.js";

export interface Fixture {
  name: string;
  /** The events to append, unless the thread comes from `turn`. */
  events?: AnyAgentEvent[];
  /** A turn document to create the thread with `thread/import` (JSON). */
  turn?: Record<string, unknown>;
  settings?: ThreadSettings;
}

export function loadFixtures(): Fixture[] {
  const dir = join(repoRoot(), "clients", "fixtures", "provider-threads");
  const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
  if (files.length === 0) throw new Error(`no fixture threads under ${dir}`);
  return files.map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as Fixture);
}

/** A new thread holding the fixture's events. */
export async function openFixture(tk: ThreadKeeper, fixture: Fixture): Promise<Thread> {
  const threadId = `fx-${fixture.name}`;
  let thread: Thread;
  if (fixture.turn !== undefined) {
    thread = await tk.importThread(JSON.stringify(fixture.turn), "json", { threadId });
  } else {
    thread = await tk.openThread({ threadId });
    await thread.append(fixture.events ?? []);
  }
  if (fixture.settings !== undefined) thread = await tk.openThread({ threadId, settings: fixture.settings });
  return thread;
}

export interface Text {
  text: string;
  /** Where the text comes from, for the failure message. */
  origin: string;
  /** Only the system part of a rendering must hold it (summaries, instructions). */
  systemOnly?: boolean;
  /** Only the OpenAI Responses rendering can carry it (reasoning blocks). */
  responsesOnly?: boolean;
}

function* stringLeaves(value: unknown): Generator<string> {
  if (typeof value === "string") yield value;
  else if (Array.isArray(value)) for (const item of value) yield* stringLeaves(item);
  else if (value !== null && typeof value === "object") for (const item of Object.values(value)) yield* stringLeaves(item);
}

/**
 * The texts a rendering must keep. Documented exceptions: `completion`, a
 * `human_input_requested` question once a `human_input_received` follows it, unknown event
 * types except an imported reasoning block (Responses only); empty and whitespace-only texts may
 * be left out. Summaries and the instructions must be in the system part.
 */
export function eventTexts(events: readonly AnyAgentEvent[], instructions: string | undefined): Text[] {
  const texts: Text[] = [];
  if (instructions) texts.push({ text: instructions, origin: "instructions", systemOnly: true });
  const add = (text: unknown, origin: string): void => {
    if (typeof text === "string" && text.trim() !== "") texts.push({ text, origin });
  };
  events.forEach((event, i) => {
    const origin = `events[${i}] (${event.type})`;
    const e = event as Record<string, unknown>;
    // As a string: `turn_block` is a type the client's union does not know.
    switch (event.type as string) {
      case "message":
        add(e.content, `${origin}.content`);
        break;
      case "tool_call":
        add(e.toolName, `${origin}.toolName`);
        for (const leaf of stringLeaves(e.args)) add(leaf, `${origin}.args`);
        break;
      case "tool_result":
        for (const leaf of stringLeaves(e.result)) add(leaf, `${origin}.result`);
        break;
      case "error":
        add(e.error, `${origin}.error`);
        break;
      case "human_input_received":
        add(e.response, `${origin}.response`);
        break;
      case "human_input_requested":
        if (!events.slice(i + 1).some((later) => later.type === "human_input_received")) add(e.question, `${origin}.question`);
        break;
      case "summary":
        texts.push({ text: String(e.summary), origin: `${origin}.summary`, systemOnly: true });
        break;
      case "turn_block": {
        const block = e.block as { kind?: string; payload?: { encrypted_content?: unknown; summary?: unknown } } | undefined;
        if (block?.kind === "reasoning") {
          const summary = block.payload?.summary;
          const summaryTexts = typeof summary === "string" ? [summary] : Array.isArray(summary) ? summary.map((part: { text?: unknown }) => part.text) : [];
          for (const text of [block.payload?.encrypted_content, ...summaryTexts]) {
            if (typeof text === "string" && text !== "") texts.push({ text, origin: `${origin}.block.payload`, responsesOnly: true });
          }
        }
        break;
      }
      default:
        break;
    }
  });
  return texts;
}

/** Every string of a rendering, and the strings inside those that are JSON texts. */
export function renderedStrings(value: unknown): string[] {
  const found: string[] = [];
  for (const leaf of stringLeaves(value)) {
    found.push(leaf);
    if (leaf.startsWith("{") || leaf.startsWith("[")) {
      try {
        found.push(...renderedStrings(JSON.parse(leaf)));
      } catch {
        // Text that only looks like JSON.
      }
    }
  }
  return found;
}

/** The texts that appear in no string of the rendering (`systemPart`: its system prompt). */
export function lostTexts(texts: readonly Text[], whole: unknown, systemPart: unknown, responses = false): string[] {
  const everywhere = renderedStrings(whole);
  const system = renderedStrings(systemPart);
  return texts
    .filter((t) => responses || !t.responsesOnly)
    .filter((t) => !(t.systemOnly ? system : everywhere).some((candidate) => candidate.includes(t.text)))
    .map((t) => `${t.origin}: ${JSON.stringify(t.text)}`);
}
