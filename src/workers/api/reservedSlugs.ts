import { pluginReservedSlugs } from "../../contracts/pluginRegistry.ts";
import { PlatformError } from "../../core/errors.ts";

/**
 * Names the platform answers on itself: a project under one of them would
 * shadow a platform route on the shared origin (`/<slug>/`) or host.
 */
export const PLATFORM_ROUTE_SLUGS: ReadonlySet<string> = new Set([
  "api",
  "www",
  "login",
  "console",
  "admin",
  "platform",
  "internal",
  "plugins",
  "static",
]);

/**
 * Every reserved slug. A slug becomes `<slug>@<sender domain>` and
 * `<slug>.<domain>`, so besides the platform's route names it must not be an
 * RFC 2142 role mailbox, a sign-in-looking name or a platform plugin's name:
 * a tenant could otherwise mail or serve pages as the platform.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  ...PLATFORM_ROUTE_SLUGS,
  // RFC 2142 role mailboxes, and the usual ones beside them.
  "security",
  "postmaster",
  "hostmaster",
  "webmaster",
  "abuse",
  "noc",
  "info",
  "support",
  "billing",
  "sales",
  "marketing",
  "noreply",
  "no-reply",
  "mail",
  "root",
  "administrator",
  // Sign-in and account names.
  "sso",
  "auth",
  "oauth",
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
 * `POST /projects` checks the whole list; it is a creation-time rule, so
 * projects created before a name was reserved keep working. `platform dev`
 * checks only `PLATFORM_ROUTE_SLUGS` (see src/dev/routes/localProjectRoute.ts).
 */
export function refuseReservedSlug(slug: string, reserved: ReadonlySet<string> = RESERVED_SLUGS): void {
  if (reserved.has(slug)) {
    throw new PlatformError(
      "invalid_input",
      `"${slug}" is reserved (RFC 2142 role names, sign-in and platform names cannot be project slugs).`,
    );
  }
}
