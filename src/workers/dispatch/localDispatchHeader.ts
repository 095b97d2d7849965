/**
 * `platform up`'s `LOCAL_DISPATCH` (dispatcher.ts): names the project script a
 * request is for. The dispatcher sets it after anything the caller sent, and
 * the service behind the binding removes it before the project sees the request.
 */
export const LOCAL_DISPATCH_SCRIPT_HEADER = "X-Platform-Local-Script";
