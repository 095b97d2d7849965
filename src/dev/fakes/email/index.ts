import { createFakeEmailProvider, type FakeEmailProvider } from "./fakeEmailProvider.ts";
import { kvFakeEmailStore } from "./kvFakeEmailStore.ts";
import { refuseWithoutOperator } from "../operatorGate.ts";

/**
 * The fake email provider as a worker (`platform dev`): `FAKE_EMAIL_API_KEY`
 * is the key it accepts; `OUTBOX`, when bound, is the KV namespace that keeps
 * what it accepted across workerd restarts (otherwise it is kept in memory);
 * `FAKE_OPERATOR_TOKEN`, when set (`platform up`), is what its `/__fake/*`
 * routes demand (operatorGate.ts).
 */
interface FakeEmailEnv {
  FAKE_EMAIL_API_KEY?: string;
  FAKE_OPERATOR_TOKEN?: string;
  OUTBOX?: KVNamespace;
}

let provider: FakeEmailProvider | null = null;

export default {
  async fetch(request: Request, env: FakeEmailEnv): Promise<Response> {
    const refused = refuseWithoutOperator(request, env.FAKE_OPERATOR_TOKEN);
    if (refused) return refused;
    provider ??= createFakeEmailProvider({
      apiKey: env.FAKE_EMAIL_API_KEY ?? "re_local_fake_key",
      ...(env.OUTBOX ? { store: kvFakeEmailStore(env.OUTBOX) } : {}),
    });
    return provider.fetch(request);
  },
} satisfies ExportedHandler<FakeEmailEnv>;
