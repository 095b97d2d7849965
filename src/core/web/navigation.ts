/** A browser navigation: a GET or HEAD that asks for an HTML page (what a person following a link sends). */
export function isNavigation(request: Request): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  const accept = request.headers.get("accept") ?? "";
  return accept.split(",").some((part) => part.split(";", 1)[0]!.trim().toLowerCase() === "text/html");
}
