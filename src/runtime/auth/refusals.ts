import type { AuthSite } from "./authSite.ts";
import { messagePage } from "./pages.ts";

/** 403 for a request that did not come from the app's own pages. */
export function sameOriginRefusal(site: AuthSite, message: string): Response {
  return messagePage({
    status: 403,
    title: "Request refused",
    message,
    links: [["Back to the app", site.basePath + "/"]],
  });
}
