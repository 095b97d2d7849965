// The `platform` module user code imports. Each capability lives in its own
// module and is tree-shaken away when a project does not use it.
export { PlatformError } from "../shared/errors.ts";
export type { PlatformErrorCode } from "../shared/errors.ts";
export type { PlatformEnv } from "./entry/platformEnv.ts";
