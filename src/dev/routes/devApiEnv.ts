import type { ApiEnv } from "../../workers/api/env.ts";

/** The API worker's env under `platform dev`: the deployed bindings plus the local fake providers (src/dev/fakes). */
export interface DevApiEnv extends ApiEnv {
  /**
   * The fake providers: `FAKE_<PLUGIN ID>` of each plugin with events sends signed bot test events to its plugin
   * (`pluginTestEvents.ts`); `FAKE_EMAIL`, the fake email provider, keeps the outbox `localOutbox.ts` shows to each
   * project's owner.
   */
  [fake: `FAKE_${string}`]: Fetcher | undefined;
  /** The email plugin's sender domain: a project's emails come from `<slug>@<domain>`. */
  EMAIL_SENDER_DOMAIN?: string;
}
