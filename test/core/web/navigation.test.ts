import { describe, expect, it } from "vitest";
import { isNavigation } from "#src/core/web/navigation.ts";

describe("isNavigation", () => {
  it.each([
    { method: "GET", accept: "text/html", navigation: true },
    { method: "HEAD", accept: "text/html", navigation: true },
    { method: "GET", accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8", navigation: true },
    { method: "GET", accept: "TEXT/HTML; charset=utf-8", navigation: true },
    { method: "GET", accept: "*/*", navigation: false },
    { method: "GET", accept: "application/json", navigation: false },
    { method: "GET", accept: undefined, navigation: false },
    { method: "POST", accept: "text/html", navigation: false },
    { method: "DELETE", accept: "text/html", navigation: false },
  ])("$method with Accept $accept → $navigation", ({ method, accept, navigation }) => {
    const request = new Request("http://x/", { method, headers: accept ? { accept } : {} });
    expect(isNavigation(request)).toBe(navigation);
  });
});
