import { workspace } from "platform";

// Bench-only project: each `message` event the workspace plugin dispatches is
// reported at once to BENCH_PROBE, a Node function the bench binds, which
// notes when the handler ran (Node's clock: workerd's only moves on I/O).
interface BenchEnv {
  BENCH_PROBE?: Fetcher;
}

workspace.onEvent("message", async (event, context) => {
  const probe = (context.env as unknown as BenchEnv).BENCH_PROBE;
  if (!probe) return;
  const response = await probe.fetch("http://probe.local/handled", {
    method: "POST",
    body: JSON.stringify({ eventId: event.eventId, text: event.text ?? "", project: context.project.slug }),
  });
  await response.body?.cancel();
});

export default {
  fetch(): Response {
    return new Response("bench-plugins project");
  },
};
