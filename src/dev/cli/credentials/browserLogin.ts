/**
 * The CLI's half of `platform login`: asks the API for a login (`POST
 * /cli/login`), shows the link, and polls `POST /cli/login/token` with the
 * poll token until the person allowed (the token, once), denied, or the
 * login expired. The link carries only the single-use code.
 */
export interface StartedLogin {
  loginUrl: string;
  pollToken: string;
  verification: string;
}

export type LoginOutcome = { ok: true; token: string; email: string } | { ok: false; message: string };

export interface BrowserLoginIo {
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  /** Shows the link (prints, opens a browser). */
  show: (login: StartedLogin) => Promise<void>;
  /** Called once per poll still pending, for a visible wait. */
  onPending?: () => void;
}

const POLL_MS = 1000;
/** The code's 2 minutes plus the login flow's 10, and a little: the API says "expired" before this. */
const GIVE_UP_AFTER_POLLS = 13 * 60;

async function post(io: BrowserLoginIo, url: string, body: unknown) {
  const response = await io.fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  return { status: response.status, json };
}

function errorMessage(json: Record<string, unknown> | null, status: number): string {
  const error = json?.error as { message?: unknown } | undefined;
  return typeof error?.message === "string" ? error.message : `the platform API answered ${status}`;
}

export async function browserLogin(apiUrl: string, host: string, io: BrowserLoginIo): Promise<LoginOutcome> {
  let started: { status: number; json: Record<string, unknown> | null };
  try {
    started = await post(io, `${apiUrl}/cli/login`, { host });
  } catch (error) {
    return { ok: false, message: `Cannot reach the platform API at ${apiUrl}: ${(error as Error).message}` };
  }
  if (started.status !== 201 || !started.json)
    return { ok: false, message: errorMessage(started.json, started.status) };
  const login = started.json as unknown as StartedLogin;
  await io.show(login);
  for (let i = 0; i < GIVE_UP_AFTER_POLLS; i++) {
    await io.sleep(POLL_MS);
    let answer: { status: number; json: Record<string, unknown> | null };
    try {
      answer = await post(io, `${apiUrl}/cli/login/token`, { pollToken: login.pollToken });
    } catch {
      // The platform restarting (e.g. `platform up` taking a new project in): ask again.
      continue;
    }
    if (answer.status === 200 && answer.json?.status === "approved")
      return { ok: true, token: String(answer.json.token), email: String(answer.json.email) };
    if (answer.status === 200 && answer.json?.status === "pending") {
      io.onPending?.();
      continue;
    }
    if (answer.status >= 500) continue;
    return { ok: false, message: errorMessage(answer.json, answer.status) };
  }
  return { ok: false, message: "Gave up waiting for the browser." };
}

/** What the API shows on the approval page as "the CLI on <host>": this machine's name, made acceptable. */
export function machineName(hostname: string): string {
  return hostname.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 64);
}
