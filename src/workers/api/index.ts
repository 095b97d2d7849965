import { createApiWorker } from "./apiWorker.ts";

export * from "./apiActorClasses.ts";

/** The deployed API worker: the platform's routes only (`platform dev` runs src/dev/routes/devApiWorker.ts instead). */
export default createApiWorker();
