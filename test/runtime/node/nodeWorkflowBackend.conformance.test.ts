import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { createNodeWorkflowBackend } from "#src/runtime/node/nodeWorkflowBackend.ts";
import { createMemoryWorkflowBackend } from "#src/engine/backends/memoryBackend.ts";
import { createMemoryEventStore } from "#src/engine/storage/memoryEventStore.ts";
import { describeWorkflowConformance } from "#test/conformance/workflowConformance.ts";

const dir = mkdtempSync(join(tmpdir(), "platform-wf-conformance-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
// A restart abandons a step in flight after this long, as a killed process would at once.
const quiet = { log: () => {}, logError: () => {}, closeGraceMS: 5 };

/** The backend under test; a restart is a new one (`open`) over the same store, as a new process would open it. */
function reopenable<B extends { close(): Promise<void>; recoverNow(): unknown }>(
  open: () => B,
  atStartup: (backend: B) => void = () => {},
) {
  let backend = open();
  return {
    backend,
    close: () => backend.close(),
    async restart() {
      await backend.close();
      backend = open();
      atStartup(backend);
      return backend;
    },
    sweep: async () => void backend.recoverNow(),
  };
}

describeWorkflowConformance("memory backend", (definitions) => {
  const store = createMemoryEventStore();
  return reopenable(
    () => createMemoryWorkflowBackend({ definitions, store, ...quiet }),
    (backend) => backend.recoverAtStartup(),
  );
});

describeWorkflowConformance("node backend (node:sqlite file)", (definitions) => {
  const path = join(dir, `run-${++files}.sqlite`);
  return reopenable(() => createNodeWorkflowBackend({ path, definitions, ...quiet }));
});
