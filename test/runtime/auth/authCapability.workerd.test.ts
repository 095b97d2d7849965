import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_SESSION_SECONDS } from "#src/contracts/signInSessions.ts";
import { installAuthCapability } from "#src/runtime/auth/authCapability.ts";
import { handleAuthRoute } from "#src/runtime/auth/authRoutes.ts";
import { setAuthSettings, validateAuthOptions } from "#src/runtime/auth/authSettings.ts";
import { PlatformRuntime } from "#src/runtime/entry/platformRuntime.ts";

// The capability is one named call on a runtime, so a test can plug it into a fresh one.
let runtime = new PlatformRuntime();
afterEach(() => {
  runtime.forgetRegistrations();
  runtime = new PlatformRuntime();
});

describe("installAuthCapability(runtime)", () => {
  it("serves /api/auth/* before user code and records the default settings", () => {
    installAuthCapability(runtime);
    expect(runtime.publicRoutes).toEqual([handleAuthRoute]);
    expect(runtime.metadata()).toEqual({ crons: [], auth: { domains: null, sessionMaxAge: DEFAULT_SESSION_SECONDS } });
  });

  it("records auth.allow's settings, and forgets them with the runtime's registrations", () => {
    installAuthCapability(runtime);
    setAuthSettings(validateAuthOptions({ domains: ["example.com"], sessionMaxAge: 3600 }));
    expect(runtime.metadata().auth).toEqual({ domains: ["example.com"], sessionMaxAge: 3600 });

    runtime.forgetRegistrations();
    expect(runtime.metadata().auth).toEqual({ domains: null, sessionMaxAge: DEFAULT_SESSION_SECONDS });
  });
});
