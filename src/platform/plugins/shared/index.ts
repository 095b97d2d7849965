// Shared plugin-worker code (bundled into each plugin worker). One concept per file.
export { authenticateProjectCall, IDENTITY_FAILURES, PROXY_BODY_LIMIT_BYTES, type AuthenticatedCall } from "./authenticateProjectCall.ts";
export { takeRateLimit, RATE_BUCKETS, type RateBucket } from "./rateLimit.ts";
export { tokenVault, sealToken, openToken } from "./tokenVault.ts";
export { oauthState, signOAuthState, verifyOAuthState, OAUTH_STATE_LIFETIME_MS, type OAuthStateClaims, type OAuthStateCheck } from "./oauthState.ts";
export { consumeSessionCode, SESSION_CODE_REFUSALS, SESSION_CODE_PATTERN } from "./sessionCodes.ts";
export {
  connectionsStore,
  upsertConnection,
  updateConnectionTokens,
  markConnectionRevoked,
  markConnectionsRevokedForExternalUser,
  readConnection,
  listConnectionSummaries,
  type Connection,
  type NewConnection,
  type ConnectionSummary,
} from "../../db/connectionsStore.ts";
export {
  claimResource,
  releaseResource,
  findResourceOwner,
  listProjectResources,
  toResourceSummary,
  ALREADY_CONNECTED_MESSAGE,
  type ResourceClaim,
  type ResourceRow,
  type ResourceType,
  type ResourceSummary,
} from "../../db/resourceClaims.ts";
export { makeResourceOwnerRef, resolveResourceOwnerRef } from "./resourceOwnerRef.ts";
export { dispatchToProject } from "./dispatchToProject.ts";
export { eventDedupe, claimEvent, releaseEvent, EVENT_DEDUPE_TTL_MS } from "./eventDedupe.ts";
export { pluginErrorResponse } from "./pluginErrorResponse.ts";
export type { PluginEnv } from "./pluginEnv.ts";
export { isPluginId, toPluginProject, PLUGIN_IDS, type PluginId, type PluginProject, type PluginUser, type ResourceOwnerRef, type PluginDispatch } from "../../../contracts/pluginDispatch.ts";
