import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Vitest's order, with the conformance files first. Without Vitest's cache of
 * durations (a fresh clone, as on CI) files run largest first, project by
 * project, and a conformance file is among the smallest (it calls a suite that
 * lives in test/conformance/) while among the longest to run: started last, the
 * Durable Object conformance file was the whole run's tail (34 s on one core
 * while the others had nothing left).
 */
export class ConformanceFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter(isConformance), ...sorted.filter((spec) => !isConformance(spec))];
  }
}

function isConformance(spec: TestSpecification): boolean {
  return spec.moduleId.includes(".conformance.");
}
