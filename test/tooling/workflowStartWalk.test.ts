import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const repo = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(repo, file), "utf8");

/** The walk of one `workflow.start` in docs/workflow-engine.md: its section, up to the next heading. */
function walkOf(doc: string): string {
  const start = doc.indexOf("## One `workflow.start`, file by file");
  if (start < 0) return "";
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** The numbers of the walk's steps, in order. */
function stepNumbers(walk: string): number[] {
  return [...walk.matchAll(/^(\d+)\. /gm)].map(([, n]) => Number(n));
}

/** The actor's private methods the walk names (`#name`), and the policy's and the engine's snake_case names. */
function namesIn(walk: string): { methods: string[]; kinds: string[] } {
  const methods = [...walk.matchAll(/`(#\w+)\(/g)].map(([, name]) => name as string);
  const kinds = [...walk.matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)].map(([, name]) => name as string);
  return { methods: [...new Set(methods)], kinds: [...new Set(kinds)] };
}

/** Names the walk gives that the code does not have. */
function missingNames(walk: string, actor: string, kindSources: string): string[] {
  const { methods, kinds } = namesIn(walk);
  return [
    ...methods.filter((method) => !actor.includes(`${method}(`)),
    ...kinds.filter((kind) => !kindSources.includes(`"${kind}"`)),
  ];
}

describe("docs/workflow-engine.md walks one workflow.start through code that exists", () => {
  const walk = walkOf(read("docs/workflow-engine.md"));
  const actor = read("src/objects/WorkflowRun.ts");
  const kindSources = ["src/objects/runActorPolicy.ts", "src/engine/execution/events.ts", "src/engine/execution/resolveNextAction.ts"]
    .map(read)
    .join("\n");

  it("is one numbered sequence from the runtime call to the report", () => {
    const numbers = stepNumbers(walk);
    expect(numbers.length).toBeGreaterThanOrEqual(8);
    expect(numbers).toEqual(numbers.map((_, index) => index + 1));
    expect(walk).toContain("runtime call → actor → engine → store → alarm → report");
  });

  it("names the actor's methods and the policy's inputs, effects and answers as the code has them", () => {
    expect(namesIn(walk).methods).toContain("#startOrJoinExecution");
    expect(namesIn(walk).kinds).toContain("run_step_loop");
    expect(missingNames(walk, actor, kindSources)).toEqual([]);
  });

  // The checks must see a walk that drifted, or they prove nothing.
  it.each([
    ["a renamed method", "1. `#drive(runId)` asks", ["#drive"]],
    ["a retired policy name", "1. the policy answers `run_loop`", ["run_loop"]],
    ["names that exist", "1. `#runExecution(…)` and `set_alarm`", []],
  ])("finds %s", (_name, text, missing) => {
    expect(missingNames(text, "#runExecution(", '"set_alarm"')).toEqual(missing);
  });

  it.each([
    ["1. a\n2. b\n3. c", [1, 2, 3]],
    ["1. a\n3. c", [1, 3]],
  ])("reads the step numbers of %j", (text, numbers) => {
    expect(stepNumbers(text)).toEqual(numbers);
  });
});
