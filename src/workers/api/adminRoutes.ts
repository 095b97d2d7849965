import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { insertCliToken } from "../db/cliTokensTable.ts";
import { upsertUserByEmail } from "../db/usersTable.ts";
import { generateCliToken, hashCliToken, isAdminRequest } from "./cliTokens.ts";
import type { ApiEnv } from "./env.ts";

const EMAIL = /^[^\s@"]+@[^\s@"]+\.[^\s@"]+$/;

/**
 * `POST /admin/users`: creates a user (or reuses one by email) and issues a
 * new CLI token. Only the operator holding `ADMIN_TOKEN` may call it; the
 * token is shown once and stored hashed.
 */
export async function issueUserToken(request: Request, env: ApiEnv): Promise<Response> {
  if (!(await isAdminRequest(request, env.ADMIN_TOKEN))) {
    throw new PlatformError("unauthorized", "Admin token required: send Authorization: Bearer <ADMIN_TOKEN>.");
  }
  const body = await readJsonObject(request);
  if (typeof body.email !== "string" || body.email.length > 254 || !EMAIL.test(body.email)) {
    throw new PlatformError("invalid_input", "email must be an email address.");
  }
  const email = body.email.toLowerCase();
  const now = Date.now();
  const user = await upsertUserByEmail(env.DB, email, now);
  const token = generateCliToken();
  const label = typeof body.label === "string" ? body.label.slice(0, 100) : "";
  await insertCliToken(env.DB, { userId: user.id, tokenHash: await hashCliToken(token), label, createdAt: now });
  return Response.json({ user, token }, { status: 201 });
}
