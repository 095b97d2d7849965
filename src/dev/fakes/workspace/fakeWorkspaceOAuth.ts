/**
 * The fake workspace's OAuth v2: the consent page, the code and refresh_token grants (token rotation with
 * single-use refresh tokens), and the bot tokens it issued, which the Web API checks.
 */
import { randomHex } from "../../../core/crypto/encoding.ts";
import { formDecode } from "../../../core/web/basicAuthorization.ts";
import { escapeHtml } from "../../../core/web/html.ts";
import { PAGE_ICON } from "../../../core/web/pageIcon.ts";
import { DEFAULT_TEAM, FAKE_USER_ID, teamInfo, type TeamInfo } from "./fakeWorkspaceTeam.ts";
import { apiJson, readParams } from "./fakeWorkspaceWire.ts";

/** The app as registered with the workspace: its credentials, redirect URIs and token rotation. */
export interface FakeWorkspaceApp {
  clientId: string;
  clientSecret: string;
  /** When set, access tokens expire and come with single-use refresh tokens. */
  tokenRotation?: boolean;
  /** Access-token lifetime with rotation on, in seconds (Slack: 43200). */
  expiresIn?: number;
  /** Redirect URIs the app registered; empty = any absolute http(s) URL. */
  redirectUris?: string[];
}

interface AuthCode {
  team: TeamInfo;
  redirectUri: string;
  scope: string;
  userId: string;
  expiresAt: number;
}

interface AccessToken {
  teamId: string;
  expiresAt: number | null;
  revoked: boolean;
}

export function createWorkspaceOAuth(config: FakeWorkspaceApp, apiAppId: string, now: () => number) {
  const codes = new Map<string, AuthCode>();
  const tokens = new Map<string, AccessToken>();
  const refreshTokens = new Map<string, { teamId: string; used: boolean }>();
  /** Token rotation as the app is configured (switchable: `POST /__fake/token-rotation`). */
  let rotation = { enabled: Boolean(config.tokenRotation), expiresIn: config.expiresIn ?? 43_200 };
  /** The next refresh grants refused with this error (`POST /__fake/refuse-refresh`). */
  let refreshRefusal: { error: string; count: number } | null = null;

  function issueTokens(team: TeamInfo): Record<string, unknown> {
    const access = `xoxb-${team.id}-${randomHex(12)}`;
    const { enabled, expiresIn } = rotation;
    const stored: AccessToken = {
      teamId: team.id,
      expiresAt: enabled ? now() + expiresIn * 1000 : null,
      revoked: false,
    };
    const accessToken = enabled ? `xoxe.${access}` : access;
    tokens.set(accessToken, stored);
    const out: Record<string, unknown> = { access_token: accessToken, token_type: "bot" };
    if (enabled) {
      const refresh = `xoxe-1-${randomHex(16)}`;
      refreshTokens.set(refresh, { teamId: team.id, used: false });
      out.refresh_token = refresh;
      out.expires_in = expiresIn;
    }
    return out;
  }

  function clientAuth(request: Request, params: Record<string, unknown>): string | null {
    let id = typeof params.client_id === "string" ? params.client_id : null;
    let secret = typeof params.client_secret === "string" ? params.client_secret : null;
    const basic = /^Basic\s+(.+)$/i.exec(request.headers.get("authorization") ?? "");
    if (basic) {
      try {
        const [u, p] = atob(basic[1]!).split(":");
        id = formDecode(u ?? "");
        secret = formDecode(p ?? "");
      } catch {
        return "invalid_client_id";
      }
    }
    if (!id || id !== config.clientId) return "invalid_client_id";
    if (!secret || secret !== config.clientSecret) return "bad_client_secret";
    return null;
  }

  async function oauthAccess(request: Request): Promise<Response> {
    const params = await readParams(request);
    if (!params) return apiJson({ ok: false, error: "invalid_arguments" });
    const authError = clientAuth(request, params);
    if (authError) return apiJson({ ok: false, error: authError });
    const grant = params.grant_type ?? "authorization_code";
    if (grant === "refresh_token") {
      const refresh = typeof params.refresh_token === "string" ? params.refresh_token : "";
      const entry = refreshTokens.get(refresh);
      if (!entry || entry.used) return apiJson({ ok: false, error: "invalid_refresh_token" });
      if (refreshRefusal && refreshRefusal.count > 0) {
        refreshRefusal.count -= 1;
        const { error } = refreshRefusal;
        if (refreshRefusal.count === 0) refreshRefusal = null;
        return apiJson({ ok: false, error });
      }
      entry.used = true; // single use: the old refresh token is now dead
      const team = teamInfo(entry.teamId);
      if ([...tokens.values()].some((t) => t.teamId === team.id && t.revoked)) {
        // An uninstalled app cannot refresh its way back in.
        return apiJson({ ok: false, error: "invalid_refresh_token" });
      }
      return apiJson({
        ok: true,
        app_id: apiAppId,
        team: { id: team.id, name: team.name },
        bot_user_id: team.botUserId,
        ...issueTokens(team),
      });
    }
    if (grant !== "authorization_code") return apiJson({ ok: false, error: "invalid_grant_type" });
    const code = typeof params.code === "string" ? params.code : "";
    const entry = codes.get(code);
    if (!entry || entry.expiresAt < now()) return apiJson({ ok: false, error: "invalid_code" });
    codes.delete(code); // single use
    if (params.redirect_uri !== entry.redirectUri) return apiJson({ ok: false, error: "bad_redirect_uri" });
    const team = entry.team;
    return apiJson({
      ok: true,
      app_id: apiAppId,
      scope: entry.scope,
      bot_user_id: team.botUserId,
      team: { id: team.id, name: team.name },
      enterprise: null,
      is_enterprise_install: false,
      authed_user: { id: entry.userId },
      ...issueTokens(team),
    });
  }

  function authorizePage(url: URL): Response {
    const clientId = url.searchParams.get("client_id");
    const redirectUri = url.searchParams.get("redirect_uri") ?? "";
    const state = url.searchParams.get("state") ?? "";
    const scope = url.searchParams.get("scope") ?? "";
    const team = teamInfo(url.searchParams.get("team") || DEFAULT_TEAM.id);
    if (clientId !== config.clientId) return new Response("Invalid client_id parameter", { status: 400 });
    if (!redirectUriAllowed(redirectUri))
      return new Response("redirect_uri did not match any configured URIs.", { status: 400 });
    const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>Install to ${escapeHtml(team.name)}</title>${PAGE_ICON}</head>
<body><h1>Platform (fake Slack) is requesting permission to access the ${escapeHtml(team.name)} Slack workspace</h1>
<p>Workspace: <strong>${escapeHtml(team.name)}</strong> (<code>${team.id}</code>)</p>
<p>Scopes: ${escapeHtml(scope)}</p>
<form method="post" action="/oauth/v2/authorize">
${hidden("client_id", clientId)}${hidden("redirect_uri", redirectUri)}${hidden("state", state)}${hidden("scope", scope)}${hidden("team", team.id)}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="cancel">Cancel</button>
</form></body></html>`;
    return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
  }

  function redirectUriAllowed(uri: string): boolean {
    if (config.redirectUris?.length) return config.redirectUris.includes(uri);
    try {
      const u = new URL(uri);
      return u.protocol === "http:" || u.protocol === "https:";
    } catch {
      return false;
    }
  }

  async function authorizeDecision(request: Request): Promise<Response> {
    const form = new URLSearchParams(await request.text());
    const redirectUri = form.get("redirect_uri") ?? "";
    if (form.get("client_id") !== config.clientId || !redirectUriAllowed(redirectUri)) {
      return new Response("Invalid authorization request.", { status: 400 });
    }
    const target = new URL(redirectUri);
    const state = form.get("state") ?? "";
    if (form.get("decision") === "allow") {
      const code = `${randomHex(4)}.${randomHex(20)}`;
      codes.set(code, {
        team: teamInfo(form.get("team") || DEFAULT_TEAM.id),
        redirectUri,
        scope: form.get("scope") ?? "",
        userId: FAKE_USER_ID,
        expiresAt: now() + 10 * 60_000,
      });
      target.searchParams.set("code", code);
    } else {
      target.searchParams.set("error", "access_denied");
    }
    if (state) target.searchParams.set("state", state);
    return Response.redirect(target.toString(), 302);
  }

  function revokeTeam(teamId: string): void {
    for (const token of tokens.values()) if (token.teamId === teamId) token.revoked = true;
    for (const refresh of refreshTokens.values()) if (refresh.teamId === teamId) refresh.used = true;
  }

  /** The team a Web API call's bearer token is of, or Slack's error for the token. */
  function authenticate(bearer: string): { teamId: string } | { error: string } {
    const token = tokens.get(bearer);
    if (!token) return { error: "invalid_auth" };
    if (token.revoked) return { error: "token_revoked" };
    if (token.expiresAt !== null && token.expiresAt <= now()) return { error: "token_expired" };
    return { teamId: token.teamId };
  }

  return {
    authorizePage,
    authorizeDecision,
    access: oauthAccess,
    authenticate,
    revokeTeam,
    /** Slack-side expiry of a team's current access tokens (clock skew, early rotation). */
    expireTeam(teamId: string): void {
      for (const token of tokens.values())
        if (token.teamId === teamId && token.expiresAt !== null) token.expiresAt = now() - 1;
    },
    /** The app's token rotation setting: installs after this get expiring tokens (or not). */
    setRotation(params: Record<string, unknown>) {
      rotation = {
        enabled: params.enabled !== false,
        expiresIn: typeof params.expiresIn === "number" && params.expiresIn > 0 ? params.expiresIn : rotation.expiresIn,
      };
      return rotation;
    },
    /** The next refresh grants fail with `error` (a refresh token spent elsewhere, an app whose rotation broke). */
    refuseRefresh(params: Record<string, unknown>) {
      refreshRefusal = {
        error: typeof params.error === "string" ? params.error : "invalid_refresh_token",
        count: typeof params.count === "number" ? params.count : 1,
      };
      return refreshRefusal;
    },
    reset(): void {
      codes.clear();
      tokens.clear();
      refreshTokens.clear();
      refreshRefusal = null;
    },
  };
}
