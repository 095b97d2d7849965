import type { V4WorkerOptions } from "miniflare";
import type { AcceptedScript } from "../../cloudflare/scriptUploadStandIn.ts";
import { COMPATIBILITY_DATE } from "../../../contracts/workerCompatibility.ts";
import { scriptTraceToken, TRACE_SCRIPT_HEADER } from "../../routes/scriptTraceToken.ts";

/** `platform up`'s trace intake (src/dev/routes/traceIntakeWorker.ts), as a pushed project's workerd reaches it. */
export interface TraceIntake {
  /** Its socket, `host:port`. */
  address: string;
  /** The tail consumer it records for (the API worker): an upload that names it gets a forwarder. */
  consumer: string;
  /** The key its tokens are made with (src/dev/routes/scriptTraceToken.ts). */
  key: string;
}

/** The forwarder's name inside a project's workerd, where nothing else is named so (project scripts are `proj-…`). */
const FORWARDER = "platform-tail-forwarder";

/**
 * Hands each batch of traces to the intake, with the token of the one script it tails. A request's URL goes
 * unredacted: the log redacts it by its own rule (src/workers/api/projectLogs/redactedPath.ts), which keeps run ids.
 */
const FORWARDER_SCRIPT = `
function unredactedUrl(event) {
  const plain = JSON.parse(JSON.stringify(event));
  const request = event.event && event.event.request;
  if (request && typeof request.getUnredacted === "function") plain.event.request.url = request.getUnredacted().url;
  return plain;
}
export default {
  async tail(events, env) {
    const answer = await env.INTAKE.fetch("http://trace-intake/", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ${JSON.stringify(TRACE_SCRIPT_HEADER)}: env.SCRIPT,
        authorization: "Bearer " + env.TOKEN,
      },
      body: JSON.stringify(events.map(unredactedUrl)),
    });
    if (!answer.ok) console.error("The project's log did not take its traces: " + answer.status + " " + (await answer.text()));
  },
};
`;

/**
 * A pushed project's worker with its upload's tail consumer, as `platform
 * up` runs it: deployed, the runtime hands the traces of every invocation
 * to the API worker's Tail Worker handler; here the project runs in a
 * workerd of its own, where the API worker is not, so its `tails` name a
 * forwarder beside it that hands them to the intake in the platform's
 * workerd, which records them with the handler's own code. The forwarder
 * holds the only token for this script; the project's worker has no binding
 * to it. A consumer the platform does not run is not wired (none is named).
 */
export async function withTailForwarder(
  worker: V4WorkerOptions,
  script: AcceptedScript,
  intake: TraceIntake,
): Promise<V4WorkerOptions[]> {
  const consumers = script.metadata.tail_consumers ?? [];
  if (!consumers.some(({ service }) => service === intake.consumer)) return [worker];
  return [
    { ...worker, tails: [FORWARDER] },
    {
      name: FORWARDER,
      modules: true,
      script: FORWARDER_SCRIPT,
      compatibilityDate: COMPATIBILITY_DATE,
      bindings: { SCRIPT: script.name, TOKEN: await scriptTraceToken(intake.key, script.name) },
      serviceBindings: { INTAKE: { external: { address: intake.address, http: {} } } },
    },
  ];
}
