import type { ApiEnv } from "../../workers/api/env.ts";

/** The API worker's env under `platform dev`: the deployed bindings plus the local fake providers (src/dev/fakes). */
export interface DevApiEnv extends ApiEnv {
  /** The fake providers, which send signed bot test events to the plugins (`pluginTestEvents.ts`). */
  FAKE_CHATSERVER?: Fetcher;
  FAKE_WORKSPACE?: Fetcher;
  /** The fake email provider, whose outbox `localOutbox.ts` shows to each project's owner. */
  FAKE_EMAIL?: Fetcher;
  /** The email plugin's sender domain: a project's emails come from `<slug>@<domain>`. */
  EMAIL_SENDER_DOMAIN?: string;
}
