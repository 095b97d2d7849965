// The one fixture module of the tests that run inside workerd: the API harness,
// the sign-in fixtures of a project and of the login worker, and the plugins'.
export * from "./api.ts";
export * from "./auth.ts";
export * from "./login.ts";
export * from "./plugins.ts";
export * from "./scriptStarter.ts";
