import { createMemoryEventStore } from "#src/engine/memoryEventStore.ts";
import { describeEventStoreConformance } from "../conformance/eventStoreConformance.ts";

describeEventStoreConformance("memory", () => ({ store: createMemoryEventStore() }));
