import { PlatformError } from "../../core/errors.ts";
import { requireOwnedProject } from "../../workers/api/projectRoutes.ts";
import type { CliRequest } from "../../workers/api/withCliUser.ts";
import { EMAIL_ID, senderAddress } from "../fakes/email/fakeEmailProvider.ts";
import type { SentEmail } from "../fakes/email/fakeEmailStore.ts";
import type { DevApiEnv } from "./devApiEnv.ts";

/**
 * The local outbox (`platform dev` only; CLI token, project ownership):
 *
 *   GET /projects/:slug/outbox       { emails: [{ id, from, to, subject, sentAt }] }, newest first (at most 100)
 *   GET /projects/:slug/outbox/:id   { email: { id, from, to, subject, html, text, sentAt } }
 *
 * Only the emails the project sent (from `<slug>@<EMAIL_SENDER_DOMAIN>`), as
 * the fake email provider accepted them; another project's email is "not
 * found" like one that does not exist. `platform email` and the console's
 * Outbox read these.
 */
type FakeEmail = Omit<SentEmail, "idempotencyKey">;

export interface OutboxEmail {
  id: string;
  from: string;
  to: string[];
  subject: string;
  html: string;
  /** The plain-text body, when the email had one. */
  text: string | null;
  sentAt: string;
}

function fakeEmail(env: DevApiEnv): { fake: Fetcher; domain: string } {
  if (!env.FAKE_EMAIL || !env.EMAIL_SENDER_DOMAIN)
    throw new PlatformError("not_found", "The local outbox exists under `platform dev` only.");
  return { fake: env.FAKE_EMAIL, domain: env.EMAIL_SENDER_DOMAIN };
}

async function askFake<T>(fake: Fetcher, path: string): Promise<{ status: number; body: T | null }> {
  let response: Response;
  try {
    response = await fake.fetch(`http://fake-email${path}`);
  } catch (error) {
    throw new PlatformError(
      "upstream_error",
      `Cannot reach the local fake email provider: ${(error as Error).message}`,
    );
  }
  if (response.status === 404) return { status: 404, body: null };
  if (response.status !== 200)
    throw new PlatformError("upstream_error", `The local fake email provider answered ${response.status}.`);
  return { status: 200, body: (await response.json()) as T };
}

/** The outbox's view of an email: a text-only one has html "", and `at` is `sentAt`. */
function outboxEmail({ id, from, to, subject, html, text, at }: FakeEmail): OutboxEmail {
  return { id, from, to, subject, html: html ?? "", text: text ?? null, sentAt: at };
}

function senderOf(slug: string, domain: string): string {
  return `${slug}@${domain}`.toLowerCase();
}

function sentBy(email: FakeEmail, sender: string): boolean {
  return senderAddress(email.from) === sender;
}

const NO_STORE = { headers: { "Cache-Control": "no-store" } };

export async function listOutbox(request: CliRequest, env: DevApiEnv): Promise<Response> {
  const { fake, domain } = fakeEmail(env);
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const sender = senderOf(project.slug, domain);
  const { body } = await askFake<{ emails: FakeEmail[] }>(fake, `/__fake/outbox?from=${encodeURIComponent(sender)}`);
  // The fake filters by sender; checked again here, the owner's view must never hold another project's email.
  const emails = (body?.emails ?? []).filter((email) => sentBy(email, sender)).map(outboxEmail);
  return Response.json({ emails: emails.map(({ html: _html, text: _text, ...summary }) => summary) }, NO_STORE);
}

export async function showOutboxEmail(request: CliRequest, env: DevApiEnv): Promise<Response> {
  const { fake, domain } = fakeEmail(env);
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const id = request.params.id!;
  if (!EMAIL_ID.test(id)) throw new PlatformError("invalid_input", `${JSON.stringify(id)} is not an email id.`);
  const { body } = await askFake<{ email: FakeEmail }>(fake, `/__fake/outbox/${id}`);
  if (!body || !sentBy(body.email, senderOf(project.slug, domain)))
    throw new PlatformError("not_found", `No email ${id} in the outbox of "${project.slug}".`);
  return Response.json({ email: outboxEmail(body.email) }, NO_STORE);
}
