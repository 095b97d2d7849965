/**
 * The fake chat server's OAuth2 install, as Discord runs it: the consent page
 * (`GET /oauth2/authorize`, a server to add the bot to), its answer (a code
 * bound to client, redirect URI and server, 10 minutes, once; the server now
 * has the bot), and the token endpoint (`authorization_code` and
 * `refresh_token` grants, client credentials in the form or Basic, never
 * both), with Discord's error answers.
 */
import { randomHex } from "../../../core/crypto/encoding.ts";
import { formDecode } from "../../../core/web/basicAuthorization.ts";
import { escapeHtml } from "../../../core/web/html.ts";
import { PAGE_ICON } from "../../../core/web/pageIcon.ts";

export interface FakeChatServerOAuthConfig {
  clientId: string;
  clientSecret: string;
  /** The redirect URIs registered for the application (any http(s) URI when none). */
  redirectUris?: string[];
  guilds: readonly { id: string; name: string }[];
  /** The user who installs the bot (the guild's owner in the token answer). */
  ownerId: string;
  now: () => number;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  guildId: string;
  scope: string;
  permissions: string;
  expiresAt: number;
}

const CODE_TTL_MS = 10 * 60 * 1000;

function oauthError(status: number, error: string, description: string): Response {
  return Response.json({ error, error_description: description }, { status });
}

export function createFakeChatServerOAuth(config: FakeChatServerOAuthConfig) {
  const { guilds, now } = config;
  const guildById = (id: string) => guilds.find((g) => g.id === id);
  let codes = new Map<string, IssuedCode>();
  /** Access token → its guild, refresh token and the scopes granted at consent (a refresh keeps them). */
  let accessTokens = new Map<string, { guildId: string; refreshToken: string; scope: string }>();
  let installedGuilds = new Set<string>();

  function redirectAllowed(uri: string): boolean {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return false;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return false;
    return !config.redirectUris?.length || config.redirectUris.includes(uri);
  }

  function authorizePage(url: URL): Response {
    const q = url.searchParams;
    const clientId = q.get("client_id") ?? "";
    const redirectUri = q.get("redirect_uri") ?? "";
    const scope = q.get("scope") ?? "";
    if (clientId !== config.clientId)
      return page(400, "Unknown application", "client_id does not name a registered application.");
    if (q.get("response_type") !== "code") return page(400, "Invalid request", "response_type must be code.");
    if (!redirectAllowed(redirectUri))
      return page(400, "Invalid redirect_uri", "redirect_uri is not registered for this application.");
    const scopes = scope.split(" ");
    if (!scopes.includes("bot") || !scopes.includes("applications.commands")) {
      return page(400, "Invalid scope", "scope must include bot and applications.commands.");
    }
    const preselected = q.get("guild_id");
    const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
    const options = guilds
      .map(
        (g) =>
          `<option value="${g.id}"${g.id === preselected ? " selected" : ""}>${escapeHtml(g.name)} (${g.id})</option>`,
      )
      .join("");
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorize application</title>${PAGE_ICON}</head>
<body><h1>An external application wants to access your account</h1>
<p>It will be added to the server you choose, with permission to create commands.</p>
<form method="post" action="/oauth2/authorize">
${hidden("client_id", clientId)}${hidden("redirect_uri", redirectUri)}${hidden("state", q.get("state") ?? "")}${hidden("scope", scope)}${hidden("permissions", q.get("permissions") ?? "0")}
<label>Add to server <select name="guild_id">${options}</select></label>
<button type="submit" name="action" value="cancel">Cancel</button>
<button type="submit" name="action" value="approve">Authorize</button>
</form></body></html>`;
    return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
  }

  function page(status: number, title: string, message: string): Response {
    return new Response(
      `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>${PAGE_ICON}</head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`,
      {
        status,
        headers: { "content-type": "text/html; charset=utf-8" },
      },
    );
  }

  async function authorizeAnswer(request: Request): Promise<Response> {
    const form = await request.formData();
    const field = (name: string) => String(form.get(name) ?? "");
    const redirectUri = field("redirect_uri");
    if (field("client_id") !== config.clientId || !redirectAllowed(redirectUri)) {
      return page(400, "Invalid request", "The form does not name a registered application and redirect_uri.");
    }
    const target = new URL(redirectUri);
    const state = field("state");
    if (field("action") !== "approve") {
      target.searchParams.set("error", "access_denied");
      target.searchParams.set("error_description", "The resource owner or authorization server denied the request");
      if (state) target.searchParams.set("state", state);
      return Response.redirect(target.toString(), 302);
    }
    const guild = guildById(field("guild_id"));
    if (!guild) return page(400, "Unknown server", "Choose one of the listed servers.");
    const code = randomHex(16);
    codes.set(code, {
      clientId: config.clientId,
      redirectUri,
      guildId: guild.id,
      scope: field("scope"),
      permissions: field("permissions") || "0",
      expiresAt: now() + CODE_TTL_MS,
    });
    installedGuilds.add(guild.id);
    target.searchParams.set("code", code);
    if (state) target.searchParams.set("state", state);
    target.searchParams.set("guild_id", guild.id);
    target.searchParams.set("permissions", field("permissions") || "0");
    return Response.redirect(target.toString(), 302);
  }

  async function token(request: Request): Promise<Response> {
    const type = request.headers.get("content-type") ?? "";
    if (!type.startsWith("application/x-www-form-urlencoded")) {
      return oauthError(400, "invalid_request", "The token endpoint accepts only application/x-www-form-urlencoded.");
    }
    const form = new URLSearchParams(new TextDecoder().decode(await request.arrayBuffer()));
    let clientId = form.get("client_id");
    let clientSecret = form.get("client_secret");
    const basic = request.headers.get("authorization");
    if (basic?.startsWith("Basic ")) {
      if (clientSecret) return oauthError(400, "invalid_request", "Use one client authentication method, not two.");
      const decoded = atob(basic.slice(6));
      const i = decoded.indexOf(":");
      clientId = formDecode(decoded.slice(0, i));
      clientSecret = formDecode(decoded.slice(i + 1));
    }
    if (clientId !== config.clientId || clientSecret !== config.clientSecret) {
      return oauthError(401, "invalid_client", "Client authentication failed.");
    }
    const grant = form.get("grant_type");
    if (grant === "authorization_code") {
      const code = form.get("code") ?? "";
      const issued = codes.get(code);
      codes.delete(code); // single use, even when the rest of the request is wrong
      if (!issued || issued.expiresAt < now()) return oauthError(400, "invalid_grant", 'Invalid "code" in request.');
      if (form.get("redirect_uri") !== issued.redirectUri) {
        return oauthError(400, "invalid_grant", 'Invalid "redirect_uri" in request.');
      }
      const guild = guildById(issued.guildId)!;
      const accessToken = randomHex(15);
      const refreshToken = randomHex(15);
      accessTokens.set(accessToken, { guildId: guild.id, refreshToken, scope: issued.scope });
      return Response.json({
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: 604800,
        refresh_token: refreshToken,
        scope: issued.scope,
        guild: { id: guild.id, name: guild.name, owner_id: config.ownerId, icon: null },
      });
    }
    if (grant === "refresh_token") {
      const refresh = form.get("refresh_token");
      const entry = [...accessTokens.entries()].find(([, v]) => v.refreshToken === refresh);
      if (!entry) return oauthError(400, "invalid_grant", 'Invalid "refresh_token" in request.');
      accessTokens.delete(entry[0]);
      const accessToken = randomHex(15);
      const refreshToken = randomHex(15);
      accessTokens.set(accessToken, { ...entry[1], refreshToken });
      return Response.json({
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: 604800,
        refresh_token: refreshToken,
        scope: entry[1].scope,
      });
    }
    return oauthError(400, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token.");
  }

  return {
    authorizePage,
    authorizeAnswer,
    token,
    /** Whether the bot was added to the guild (an approved consent). */
    installed: (guildId: string) => installedGuilds.has(guildId),
    installedGuilds: () => installedGuilds,
    reset() {
      codes = new Map();
      accessTokens = new Map();
      installedGuilds = new Set();
    },
  };
}
