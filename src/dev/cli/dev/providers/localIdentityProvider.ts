import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import type { Adapter, AdapterPayload, Configuration, KoaContextWithOIDC } from "oidc-provider";
import { escapeHtml } from "../../../../core/web/html.ts";
import { PAGE_ICON, PAGE_ICON_CSP } from "../../../../core/web/pageIcon.ts";

/**
 * The identity provider of `platform dev --login oidc` and the tests: a real
 * OpenID Connect provider (`oidc-provider`, certified) on a loopback port,
 * issuer `http://127.0.0.1:<port>`. Authorization code flow only, PKCE (S256)
 * required, one confidential client (client_secret_basic) with exactly one
 * redirect URI (the local login worker's `/callback`), ID tokens that carry
 * email, email_verified, name and picture (as Google's do), and plain login
 * and consent pages a person (or a test browser) fills in.
 */

export interface LocalIdpUser {
  /** Stable subject identifier. */
  sub: string;
  email: string;
  emailVerified: boolean;
  name: string;
  picture?: string;
}

/** Everyone signs in with the same password locally; it only proves the form is real. */
export const LOCAL_IDP_PASSWORD = "password";

export const LOCAL_IDP_USERS: readonly LocalIdpUser[] = [
  { sub: "user-ada", email: "ada@example.com", emailVerified: true, name: "Ada Lovelace" },
  { sub: "user-bob", email: "bob@other.org", emailVerified: true, name: "Bob Builder" },
  { sub: "user-eve", email: "eve@example.com", emailVerified: false, name: "Eve Unverified" },
];

export interface LocalIdentityProviderOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  clientId: string;
  clientSecret: string;
  /** The one redirect URI the client may use. */
  redirectUri: string;
  users?: readonly LocalIdpUser[];
}

export interface LocalIdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  users: readonly LocalIdpUser[];
  stop(): Promise<void>;
}

/**
 * The provider's state (sessions, interactions, codes, grants) in this
 * process's memory, one store per provider: a restart forgets every sign-in
 * in progress, which is what local development wants.
 */
function memoryAdapterFactory(): (model: string) => Adapter {
  const store = new Map<string, { payload: AdapterPayload; expiresAt: number }>();
  const index = new Map<string, string>();
  const grants = new Map<string, Set<string>>();
  const live = (key: string) => {
    const entry = store.get(key);
    if (entry && entry.expiresAt <= Date.now()) store.delete(key);
    return store.get(key)?.payload;
  };
  return (model) => ({
    async upsert(id, payload, expiresIn) {
      const key = `${model}:${id}`;
      store.set(key, { payload, expiresAt: Date.now() + (expiresIn ?? 3600) * 1000 });
      if (payload.uid) index.set(`uid:${payload.uid}`, id);
      if (payload.userCode) index.set(`userCode:${payload.userCode}`, id);
      if (payload.grantId) grants.set(payload.grantId, (grants.get(payload.grantId) ?? new Set()).add(key));
    },
    async find(id) {
      return live(`${model}:${id}`);
    },
    async findByUid(uid) {
      const id = index.get(`uid:${uid}`);
      return id ? live(`${model}:${id}`) : undefined;
    },
    async findByUserCode(userCode) {
      const id = index.get(`userCode:${userCode}`);
      return id ? live(`${model}:${id}`) : undefined;
    },
    async consume(id) {
      const payload = live(`${model}:${id}`);
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    },
    async destroy(id) {
      store.delete(`${model}:${id}`);
    },
    async revokeByGrantId(grantId) {
      for (const key of grants.get(grantId) ?? []) store.delete(key);
      grants.delete(grantId);
    },
  });
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>${PAGE_ICON}
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.6rem 0 .2rem}input{font:inherit;width:100%;box-sizing:border-box;padding:.4rem}
button{font:inherit;margin:.8rem .4rem 0 0;padding:.4rem 1rem}.error{color:#b00020}small{color:#555}</style></head>
<body><p><small>Local identity provider (on this machine, not a real one)</small></p><h1>${escapeHtml(title)}</h1>${body}</body>
</html>
`;
}

function send(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    // No form-action: Chromium applies it to the redirects after a POST, and the last one goes to the client.
    "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; ${PAGE_ICON_CSP}; frame-ancestors 'none'`,
  });
  res.end(html);
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let body = "";
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 16 * 1024) throw new Error("form too large");
  }
  return new URLSearchParams(body);
}

function loginPage(uid: string, users: readonly LocalIdpUser[], error?: string, email = ""): string {
  const hint = users.map((u) => `${escapeHtml(u.email)}${u.emailVerified ? "" : " (email not verified)"}`).join(", ");
  return page(
    "Sign in",
    `${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ""}
<form method="post" action="/interaction/${escapeHtml(uid)}/login" autocomplete="off">
<label for="email">Email</label><input id="email" name="email" type="email" required autofocus value="${escapeHtml(email)}">
<label for="password">Password</label><input id="password" name="password" type="password" required>
<button type="submit">Sign in</button><a href="/interaction/${escapeHtml(uid)}/abort">Cancel</a>
</form>
<p><small>Test users: ${hint}. Password: <code>${LOCAL_IDP_PASSWORD}</code>.</small></p>`,
  );
}

function consentPage(uid: string, clientId: string, email: string, scopes: string[]): string {
  return page(
    "Allow access?",
    `<p><strong>${escapeHtml(clientId)}</strong> asks to see your ${escapeHtml(scopes.join(", "))} as <strong>${escapeHtml(email)}</strong>.</p>
<form method="post" action="/interaction/${escapeHtml(uid)}/confirm"><button type="submit" autofocus>Allow</button><a href="/interaction/${escapeHtml(uid)}/abort">Deny</a></form>`,
  );
}

/** Starts the provider; `stop()` closes it. */
export async function startLocalIdentityProvider(
  options: LocalIdentityProviderOptions,
): Promise<LocalIdentityProvider> {
  const host = options.host ?? "127.0.0.1";
  const users = options.users ?? LOCAL_IDP_USERS;
  const bySub = new Map(users.map((u) => [u.sub, u]));

  // Bind first so the issuer can name the real port.
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const issuer = `http://${host}:${port}`;

  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = {
    ...(await exportJWK(privateKey)),
    kid: `local-${randomBytes(4).toString("hex")}`,
    alg: "RS256",
    use: "sig",
  };

  const configuration: Configuration = {
    adapter: memoryAdapterFactory(),
    responseTypes: ["code"],
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    // Every authorization request must carry an S256 code challenge.
    pkce: { required: () => true },
    scopes: ["openid", "email", "profile"],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "picture"] },
    // Like Google: the scope's claims go into the ID token, not only into userinfo.
    conformIdTokenClaims: false,
    async findAccount(_ctx: KoaContextWithOIDC, sub: string) {
      const user = bySub.get(sub);
      if (!user) return undefined;
      return {
        accountId: user.sub,
        async claims() {
          return {
            sub: user.sub,
            email: user.email,
            email_verified: user.emailVerified,
            name: user.name,
            ...(user.picture ? { picture: user.picture } : {}),
          };
        },
      };
    },
    features: { devInteractions: { enabled: false } },
    interactions: {
      url: (_ctx: KoaContextWithOIDC, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
    },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    jwks: { keys: [signingKey] },
    ttl: {
      AccessToken: 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Session: 24 * 3600,
      Grant: 24 * 3600,
    },
    clientBasedCORS: () => false,
    async renderError(ctx: KoaContextWithOIDC, out: object) {
      ctx.type = "html";
      ctx.body = page(
        "Sign-in error",
        Object.entries(out)
          .map(([key, value]) => `<p><strong>${escapeHtml(key)}</strong>: ${escapeHtml(String(value))}</p>`)
          .join(""),
      );
    },
  };
  // Loaded here, not at the top: every CLI command imports this file's user list, few run a provider.
  const { default: Provider } = await import("oidc-provider");
  const provider = new Provider(issuer, configuration);
  const oidc = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, action: string): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid)
      return send(res, 400, page("Sign-in error", "<p>This sign-in page belongs to another sign-in. Start again.</p>"));
    const { prompt, params, session } = details;
    if (action === "" && req.method === "GET") {
      if (prompt.name === "login") return send(res, 200, loginPage(uid, users));
      const user = session?.accountId ? bySub.get(session.accountId) : undefined;
      const scopes = String(params.scope ?? "")
        .split(" ")
        .filter(Boolean);
      return send(res, 200, consentPage(uid, String(params.client_id), user?.email ?? "?", scopes));
    }
    if (action === "login" && req.method === "POST") {
      if (prompt.name !== "login")
        return send(res, 400, page("Sign-in error", "<p>Already signed in for this request.</p>"));
      const form = await readForm(req);
      const email = (form.get("email") ?? "").trim();
      const user = users.find((u) => u.email.toLowerCase() === email.toLowerCase());
      if (!user || form.get("password") !== LOCAL_IDP_PASSWORD) {
        return send(res, 401, loginPage(uid, users, "Unknown email or wrong password.", email));
      }
      return provider.interactionFinished(
        req,
        res,
        { login: { accountId: user.sub } },
        { mergeWithLastSubmission: false },
      );
    }
    if (action === "confirm" && req.method === "POST") {
      if (prompt.name !== "consent")
        return send(res, 400, page("Sign-in error", "<p>Nothing to allow for this request.</p>"));
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
      if (!grant) return send(res, 400, page("Sign-in error", "<p>This request's grant expired. Start again.</p>"));
      const missing = prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      const grantId = await grant.save();
      return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    }
    if (action === "abort" && req.method === "GET") {
      return provider.interactionFinished(
        req,
        res,
        { error: "access_denied", error_description: "The person cancelled the sign-in." },
        { mergeWithLastSubmission: false },
      );
    }
    return send(res, 404, page("Not found", "<p>No such page.</p>"));
  }

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const match = /^\/interaction\/([A-Za-z0-9_-]{1,64})(?:\/(login|confirm|abort))?(?:\?.*)?$/.exec(req.url ?? "");
    if (!match) return void oidc(req, res);
    interaction(req, res, match[1]!, match[2] ?? "").catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (!res.headersSent)
        send(
          res,
          400,
          page("Sign-in error", `<p>${escapeHtml(message)}</p><p>Start the sign-in again from the project.</p>`),
        );
      else res.end();
    });
  });

  return {
    issuer,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    users,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
