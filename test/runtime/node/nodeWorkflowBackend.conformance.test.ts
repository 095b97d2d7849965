import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { createNodeWorkflowBackend } from "../../../src/runtime/node/nodeWorkflowBackend.ts";
import { createMemoryWorkflowBackend } from "../../../src/engine/memoryBackend.ts";
import { describeWorkflowConformance } from "../../conformance/workflowConformance.ts";

const dir = mkdtempSync(join(tmpdir(), "platform-wf-conformance-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const quiet = { log: () => {}, logError: () => {} };

describeWorkflowConformance("memory backend", (definitions) => {
  const backend = createMemoryWorkflowBackend({ definitions, ...quiet });
  return { backend, close: () => backend.close() };
});

describeWorkflowConformance("node backend (node:sqlite file)", (definitions) => {
  const backend = createNodeWorkflowBackend({ path: join(dir, `run-${++files}.sqlite`), definitions, ...quiet });
  return { backend, close: () => backend.close() };
});
