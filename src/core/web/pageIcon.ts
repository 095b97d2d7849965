/**
 * The `<head>` line every page the platform itself serves carries: an empty
 * icon, so a browser never asks the page's origin for `/favicon.ico`, which
 * would answer 404 (a red line in every console). Pages with a
 * Content-Security-Policy allow it with `img-src data:` (`PAGE_ICON_CSP`).
 */
export const PAGE_ICON = '<link rel="icon" href="data:,">';

/** The Content-Security-Policy directive that lets `PAGE_ICON` load on a `default-src 'none'` page. */
export const PAGE_ICON_CSP = "img-src data:";
