import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { createNodeWorkflowBackend } from "#src/runtime/node/nodeWorkflowBackend.ts";
import { createMemoryWorkflowBackend } from "#src/engine/memoryBackend.ts";
import { createMemoryEventStore } from "#src/engine/memoryEventStore.ts";
import { describeWorkflowConformance } from "#test/conformance/workflowConformance.ts";

const dir = mkdtempSync(join(tmpdir(), "platform-wf-conformance-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
// A restart abandons a step in flight after this long, as a killed process would at once.
const quiet = { log: () => {}, logError: () => {}, closeGraceMS: 5 };

// A restart is a new backend over the same store, as a new process would open it.
describeWorkflowConformance("memory backend", (definitions) => {
  const store = createMemoryEventStore();
  let backend = createMemoryWorkflowBackend({ definitions, store, ...quiet });
  return {
    backend,
    close: () => backend.close(),
    async restart() {
      await backend.close();
      backend = createMemoryWorkflowBackend({ definitions, store, ...quiet });
      backend.recoverAtStartup();
      return backend;
    },
    sweep: async () => void backend.recoverNow(),
  };
});

describeWorkflowConformance("node backend (node:sqlite file)", (definitions) => {
  const path = join(dir, `run-${++files}.sqlite`);
  let backend = createNodeWorkflowBackend({ path, definitions, ...quiet });
  return {
    backend,
    close: () => backend.close(),
    async restart() {
      await backend.close();
      backend = createNodeWorkflowBackend({ path, definitions, ...quiet });
      return backend;
    },
    sweep: async () => void backend.recoverNow(),
  };
});
