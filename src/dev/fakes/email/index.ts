import { createFakeEmailProvider, type FakeEmailProvider } from "./fakeEmailProvider.ts";

/** The fake email provider as a worker (`platform dev`): `FAKE_EMAIL_API_KEY` is the key it accepts. */
interface FakeEmailEnv {
  FAKE_EMAIL_API_KEY?: string;
}

let provider: FakeEmailProvider | null = null;

export default {
  fetch(request: Request, env: FakeEmailEnv): Promise<Response> {
    provider ??= createFakeEmailProvider({ apiKey: env.FAKE_EMAIL_API_KEY ?? "re_local_fake_key" });
    return provider.fetch(request);
  },
} satisfies ExportedHandler<FakeEmailEnv>;
