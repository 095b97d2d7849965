import { timingSafeEqual } from "../../core/crypto/signed.ts";

/** The header that carries the operator token to a fake's inspection routes (`/__fake/*`). */
export const FAKE_OPERATOR_HEADER = "x-platform-operator-token";

/**
 * Who may use a fake provider's inspection routes (`/__fake/*`: outboxes,
 * recorded calls with their credentials, triggers that send signed events).
 * With no token configured (`platform dev`: one developer, one project) anyone
 * on the machine may; with one (`platform up`, where tenants share the
 * machine) only a request carrying it: 401 without it, 403 with another.
 * Answers the refusal, or null to let the request through. The provider's own
 * routes are not gated here: they demand the provider's credentials.
 */
export function refuseWithoutOperator(request: Request, operatorToken: string | undefined): Response | null {
  if (!operatorToken || !new URL(request.url).pathname.startsWith("/__fake/")) return null;
  const presented = request.headers.get(FAKE_OPERATOR_HEADER);
  if (!presented)
    return refusal(
      401,
      "operator_token_required",
      `The fake's inspection routes answer only the operator: send the token \`platform up\` printed in ${FAKE_OPERATOR_HEADER}.`,
    );
  if (!timingSafeEqual(presented, operatorToken))
    return refusal(
      403,
      "operator_token_invalid",
      `The ${FAKE_OPERATOR_HEADER} header is not this platform's operator token.`,
    );
  return null;
}

function refusal(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}
