import { createMemoryEventStore } from "#src/engine/storage/memoryEventStore.ts";
import { describeEventStoreConformance } from "#test/conformance/eventStoreConformance.ts";

describeEventStoreConformance("memory", () => ({ store: createMemoryEventStore() }));
