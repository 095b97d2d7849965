/**
 * Resolves once the project answers `url` with anything but a server error (the Ready line waits on
 * it); with `acceptServerError`, once it answers at all (`platform dev`'s page for a project that does not run).
 */
export async function waitForProject(
  url: string,
  { timeoutMS = 15_000, acceptServerError = false }: { timeoutMS?: number; acceptServerError?: boolean } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMS;
  let last = "";
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { redirect: "manual" });
      await response.arrayBuffer();
      if (response.status < 500 || acceptServerError) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = String(error);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`The project did not answer on ${url} within ${timeoutMS / 1000} s (${last}).`);
}
