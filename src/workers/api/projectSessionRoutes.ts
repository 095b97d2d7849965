import { parseSessionGrant, parseSessionIds, SESSION_ID, USER_KEY } from "../../contracts/signInSessions.ts";
import { PlatformError } from "../../core/errors.ts";
import { parseJsonObject } from "../../core/web/jsonBody.ts";
import {
  endSessions,
  endUserSessions,
  isSessionActive,
  MAX_LIVE_SESSIONS_PER_PROJECT,
  startSession,
  type SessionStart,
} from "../db/projectSessionsTable.ts";
import type { ApiEnv } from "./env.ts";
import { identifiedProjectCall } from "../db/identifiedProjectCall.ts";

/**
 * The sign-in session routes a project worker calls (identity-signed, through
 * `PLATFORM_API`; src/contracts/signInSessions.ts). The project is always the
 * one the token proves, so a project can neither see nor end another's
 * sessions. All answers are `Cache-Control: no-store`.
 */
const BODY_LIMIT_BYTES = 1024;
const noStore = { "Cache-Control": "no-store" };
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** What a session start that did not start tells the caller. */
export function refuseSessionStart(outcome: SessionStart): void {
  if (outcome === "full") {
    throw new PlatformError(
      "quota_exceeded",
      `This project already has ${MAX_LIVE_SESSIONS_PER_PROJECT} live sign-in sessions, the most the platform keeps for one project; nobody else can sign in until some sign out or expire.`,
      { limit: MAX_LIVE_SESSIONS_PER_PROJECT },
    );
  }
}

/** `POST /internal/auth/sessions/start { session: { sid, user, exp } }`: the local form's sign-in. Idempotent for the same sid. */
export async function startProjectSession(request: Request, env: ApiEnv): Promise<Response> {
  const { project, body } = await identifiedProjectCall(request, env.DB, BODY_LIMIT_BYTES);
  const now = nowSeconds();
  const grant = parseSessionGrant(parseJsonObject(body).session, now);
  refuseSessionStart(await startSession(env.DB, project.id, grant, now));
  return Response.json({ started: true }, { headers: noStore });
}

/** `POST /internal/auth/sessions/check { sid }` → `{ active }`: recorded and unexpired. */
export async function checkProjectSession(request: Request, env: ApiEnv): Promise<Response> {
  const { project, body } = await identifiedProjectCall(request, env.DB, BODY_LIMIT_BYTES);
  const { sid } = parseJsonObject(body);
  if (typeof sid !== "string" || !SESSION_ID.test(sid))
    throw new PlatformError("invalid_input", "sid must be a session id (22 base64url characters).");
  return Response.json({ active: await isSessionActive(env.DB, project.id, sid, nowSeconds()) }, { headers: noStore });
}

/** `POST /internal/auth/sessions/end { sids }` → `{ ended }`: sign-out. Ending an ended session is no error. */
export async function endProjectSessions(request: Request, env: ApiEnv): Promise<Response> {
  const { project, body } = await identifiedProjectCall(request, env.DB, BODY_LIMIT_BYTES);
  const sids = parseSessionIds(parseJsonObject(body).sids);
  return Response.json({ ended: await endSessions(env.DB, project.id, sids) }, { headers: noStore });
}

/** `POST /internal/auth/sessions/end-user { user }` → `{ ended }`: every session of that user in the project. */
export async function endProjectUserSessions(request: Request, env: ApiEnv): Promise<Response> {
  const { project, body } = await identifiedProjectCall(request, env.DB, BODY_LIMIT_BYTES);
  const { user } = parseJsonObject(body);
  if (typeof user !== "string" || !USER_KEY.test(user))
    throw new PlatformError("invalid_input", "user must be a user key (64 hex characters).");
  return Response.json({ ended: await endUserSessions(env.DB, project.id, user) }, { headers: noStore });
}
