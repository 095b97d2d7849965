import {
  createLocalWorkflowBackend,
  type LocalWorkflowBackend,
  type LocalWorkflowBackendOptions,
} from "./localBackend.ts";
import { createMemoryEventStore, type MemoryEventStore } from "../storage/memoryEventStore.ts";

export interface MemoryWorkflowBackend extends LocalWorkflowBackend {
  readonly store: MemoryEventStore;
}

/**
 * Workflows fully in memory: for tests of user code and of the engine. The
 * same timer loop as the Node backend, without persistence.
 */
export function createMemoryWorkflowBackend(
  options: Partial<LocalWorkflowBackendOptions> & { store?: MemoryEventStore } = {},
): MemoryWorkflowBackend {
  const store = options.store ?? createMemoryEventStore();
  return { ...createLocalWorkflowBackend({ ...options, store }), store };
}
