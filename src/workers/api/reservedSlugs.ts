import { pluginReservedSlugs } from "../../contracts/pluginRegistry.ts";
import { PlatformError } from "../../core/errors.ts";

/**
 * Every first path segment the platform answers at its root: each route of
 * the API worker (test/workers/api/reservedSlugs.workerd.test.ts checks that
 * every route it mounts is here) and the console's folder of static files.
 * A project named like one would shadow it on a shared origin (`/<slug>/`).
 */
export const PLATFORM_ROOT_PATHS: ReadonlySet<string> = new Set([
  "health",
  "admin",
  "cli",
  "projects",
  "plugins",
  "oauth",
  "internal",
  "console",
]);

/**
 * RFC 2142's mailbox names, all of them (business: info, marketing, sales,
 * support; network operations: abuse, noc, security; services: postmaster,
 * hostmaster, usenet, news, webmaster, www, uucp, ftp), and MAILER-DAEMON,
 * the sender of bounces.
 */
const RFC_2142_MAILBOXES = [
  "info",
  "marketing",
  "sales",
  "support",
  "abuse",
  "noc",
  "security",
  "postmaster",
  "hostmaster",
  "usenet",
  "news",
  "webmaster",
  "www",
  "uucp",
  "ftp",
  "mailer-daemon",
];

/**
 * Every reserved slug. A slug becomes `<slug>@<sender domain>`,
 * `<slug>.<domain>` and `<domain>/<slug>/`, so besides the platform's root
 * paths it must not be the platform's own name or host, an RFC 2142 mailbox
 * (or another address people trust), a sign-in-looking name or a plugin's
 * name: a tenant could otherwise mail or serve pages as the platform.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  ...PLATFORM_ROOT_PATHS,
  // The platform's own names and hosts.
  "api",
  "login",
  "platform",
  "static",
  ...RFC_2142_MAILBOXES,
  // Addresses beside RFC 2142's that people take as the platform's.
  "billing",
  "noreply",
  "no-reply",
  "mail",
  "root",
  "administrator",
  // Sign-in and account names.
  "sso",
  "auth",
  "signin",
  "sign-in",
  "signup",
  "sign-up",
  "logout",
  "account",
  "accounts",
  // Each plugin's id and the names its descriptor reserves (pluginRegistry.ts).
  ...pluginReservedSlugs(),
]);

/**
 * Refuses a reserved slug. Every way a project is created checks it
 * (`insertOwnedProject`); it is a creation-time rule, so projects created
 * before a name was reserved keep working.
 */
export function refuseReservedSlug(slug: string): void {
  if (RESERVED_SLUGS.has(slug)) {
    throw new PlatformError(
      "invalid_input",
      `"${slug}" is reserved (RFC 2142 role names, sign-in and platform names cannot be project slugs).`,
    );
  }
}
