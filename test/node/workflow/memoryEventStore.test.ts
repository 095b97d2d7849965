import { createMemoryEventStore } from "../../../src/runtime/workflow/memoryEventStore.ts";
import { describeEventStoreConformance } from "../../conformance/eventStoreConformance.ts";

describeEventStoreConformance("memory", () => ({ store: createMemoryEventStore() }));
