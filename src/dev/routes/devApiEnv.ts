import type { ApiEnv } from "../../platform/api/env.ts";

/** The API worker's env under `platform dev`: the deployed bindings plus the local fake providers (src/dev/fakes). */
export interface DevApiEnv extends ApiEnv {
  /** The fake providers, which send signed bot test events to the plugins (`pluginTestEvents.ts`). */
  FAKE_CHATSERVER?: Fetcher;
  FAKE_WORKSPACE?: Fetcher;
}
