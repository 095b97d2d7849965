import { createMemoryEventStore } from "#src/engine/memoryEventStore.ts";
import { describeEventStoreConformance } from "#test/conformance/eventStoreConformance.ts";

describeEventStoreConformance("memory", () => ({ store: createMemoryEventStore() }));
