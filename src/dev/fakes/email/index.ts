import { createFakeEmailProvider, type FakeEmailProvider } from "./fakeEmailProvider.ts";
import { kvFakeEmailStore } from "./kvFakeEmailStore.ts";

/**
 * The fake email provider as a worker (`platform dev`): `FAKE_EMAIL_API_KEY`
 * is the key it accepts; `OUTBOX`, when bound, is the KV namespace that keeps
 * what it accepted across workerd restarts (otherwise it is kept in memory).
 */
interface FakeEmailEnv {
  FAKE_EMAIL_API_KEY?: string;
  OUTBOX?: KVNamespace;
}

let provider: FakeEmailProvider | null = null;

export default {
  fetch(request: Request, env: FakeEmailEnv): Promise<Response> {
    provider ??= createFakeEmailProvider({
      apiKey: env.FAKE_EMAIL_API_KEY ?? "re_local_fake_key",
      ...(env.OUTBOX ? { store: kvFakeEmailStore(env.OUTBOX) } : {}),
    });
    return provider.fetch(request);
  },
} satisfies ExportedHandler<FakeEmailEnv>;
