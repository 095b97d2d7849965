import type { PlatformRuntime } from "../entry/platformRuntime.ts";
import { handleAuthRoute } from "./authRoutes.ts";
import { authSettings, setAuthSettings, validateAuthOptions } from "./authSettings.ts";

/**
 * The sign-in capability plugged into `runtime`: the `/api/auth/*` routes, the build metadata
 * (`auth.allow` settings) and forgetting those settings. Called once, by
 * `src/runtime/auth/index.ts` where it declares `auth`, so only a project that imports `auth`
 * carries any of it.
 */
export function installAuthCapability(runtime: PlatformRuntime): void {
  runtime.registerPublicRoute(handleAuthRoute);
  runtime.registerMetadata("auth", () => {
    const { domains, sessionMaxAge } = authSettings();
    return { domains: domains ? [...domains] : null, sessionMaxAge };
  });
  runtime.onForget(forgetAuthSettings);
}

function forgetAuthSettings(): void {
  setAuthSettings(validateAuthOptions(undefined));
}
