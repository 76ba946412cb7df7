import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, test } from "node:test";
import ts from "typescript";

/** The package's sources (this file runs from build-test/test/). */
const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** Each module of `dir` to the modules of `dir` it imports, type-only imports and re-exports included. */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".ts")).sort()) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(dir, file), "utf8"), true, true);
    const local = importedFiles.map((ref) => ref.fileName).filter((name) => name.startsWith("./"));
    graph.set(file, [...new Set(local.map((name) => name.slice(2).replace(/\.js$/, ".ts")))]);
  }
  return graph;
}

/** Every import circle of `graph`, each as the modules along it, starting and ending at the same one. */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (module: string): void => {
    const at = path.indexOf(module);
    if (at >= 0) {
      found.push([...path.slice(at), module]);
      return;
    }
    if (done.has(module)) return;
    path.push(module);
    for (const next of graph.get(module) ?? []) visit(next);
    path.pop();
    done.add(module);
  };
  for (const module of graph.keys()) visit(module);
  return found;
}

describe("module imports", () => {
  test("the finder sees a circle, type-only imports included", () => {
    const graph = new Map([
      ["client.ts", ["thread.ts", "types.ts"]],
      ["thread.ts", ["types.ts", "client.ts"]],
      ["types.ts", []],
    ]);
    assert.deepEqual(circles(graph), [["client.ts", "thread.ts", "client.ts"]]);
    assert.deepEqual(circles(new Map([["a.ts", ["b.ts"]], ["b.ts", ["c.ts"]], ["c.ts", []]])), []);
    const parsed = ts.preProcessFile('import type { A } from "./a.js";\nexport { B } from "./b.js";\nconst c = import("./c.js");', true, true);
    assert.deepEqual(parsed.importedFiles.map((ref) => ref.fileName), ["./a.js", "./b.js", "./c.js"]);
  });

  test("the package's modules import one way: no circle among src/", () => {
    const graph = importGraph(SRC);
    assert.ok(graph.get("client.ts")?.includes("thread.ts"), "the graph was read: client.ts imports thread.ts");
    assert.deepEqual(circles(graph).map((circle) => circle.join(" → ")), []);
  });
});
