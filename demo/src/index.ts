import { Router } from "itty-router";
import {
  auth,
  chatserver,
  email,
  NonRetryableError,
  PlatformError,
  workflow,
  workspace,
  type AuthUser,
} from "platform";

// Sign-in: any account may sign in (locally through a dummy form). Routes
// under /api/private/* need a signed-in user; the workflow routes stay open.
auth.allow();

// A workflow a newcomer can start from the browser and watch finish: it
// "charges" an order (failing on the first attempt when asked to, to show a
// retry), then "ships" it.
workflow(
  "checkout",
  {
    start: async (ctx) => {
      if (typeof ctx.data.item !== "string" || ctx.data.item.length === 0)
        throw new NonRetryableError("item is required");
      if (ctx.data.flaky && ctx.attempt === 1)
        throw new Error("payment service timed out (first attempt fails on purpose)");
      ctx.write("charged", { item: ctx.data.item, attempt: ctx.attempt });
      return { step: "ship" };
    },
    ship: async (ctx) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return {
        done: true,
        result: { shipped: ctx.scratchpad.charged.item, chargedOnAttempt: ctx.scratchpad.charged.attempt },
      };
    },
  },
  { maxAttempts: 3, backoff: { initialMS: 500, maxMS: 5_000, factor: 2 }, stepTimeoutMS: 10_000 },
);

// Plugins (under `platform dev`: install with `platform plugin install chatserver|workspace`,
// then try them with `platform plugin trigger …`).
// A slash command: /hello answers in the chat.
chatserver.onCommand(
  "hello",
  async (command) => {
    await chatserver.reply(command, `Hello, ${command.user?.name ?? "there"}! This is the platform demo.`);
  },
  { description: "Say hello to the platform demo" },
);

// Every message in the connected workspace gets an answer in its thread.
workspace.onEvent("message", async (event, context) => {
  if (!event.channel || !event.ts || !event.text) return;
  await workspace.threadReply(event.channel, event.threadTs ?? event.ts, `You said: ${event.text}`, {
    resource: context.resource,
  });
});

const page = (user: AuthUser | null, notice: string) => `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Platform demo</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
  label { display: block; margin: .5rem 0; }
  button { font: inherit; padding: .4rem 1rem; }
  ol { padding-left: 1.25rem; }
  .completed { color: #0a6b2c; } .failed { color: #a00; }
</style>
<h1>Platform demo</h1>
<section id="account">
  ${notice ? `<p id="notice">${escapeHtml(notice)}</p>` : ""}
  ${
    user
      ? `<p id="greeting">Hello, ${escapeHtml(user.name)} (${escapeHtml(user.email)})! <a href="api/auth/signout">Sign out</a></p>`
      : `<p id="greeting">You are not signed in. <a href="api/auth/signin/idp?redirect=/">Sign in</a></p>`
  }
  <p>Routes under <code>/api/private/*</code> need a signed-in user: <a href="api/private/me">api/private/me</a> answers your profile as JSON, or 401 when nobody is signed in.</p>
</section>
<p>This page is a project running on the platform. Start the <code>checkout</code> workflow and watch its events arrive.</p>
<form id="start">
  <label>Item <input name="item" value="coffee beans" required></label>
  <label><input type="checkbox" name="flaky" checked> Fail the first payment attempt (shows a retry)</label>
  <button>Start checkout</button>
</form>
<section aria-live="polite">
  <h2 id="status">No run yet</h2>
  <ol id="events"></ol>
</section>
<section id="email">
  <h2>Send an email</h2>
  <p>Sent by the email-send plugin from this project's address (locally, to the fake provider).</p>
  <form id="send-email">
    <label>To <input name="to" type="email" value="ada@example.com" required></label>
    <label>Subject <input name="subject" value="Hello from the platform demo" required></label>
    <button>Send email</button>
  </form>
  <p id="email-result" aria-live="polite"></p>
</section>
<script>
  const mailForm = document.getElementById("send-email");
  mailForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const result = document.getElementById("email-result");
    result.textContent = "Sending…";
    const body = { to: mailForm.to.value, subject: mailForm.subject.value };
    const answer = await fetch("api/email", { method: "POST", body: JSON.stringify(body) }).then((r) => r.json());
    result.textContent = answer.id ? "Sent: provider id " + answer.id : "Not sent: " + (answer.error?.message ?? "unknown error");
  });
</script>
<script>
  const form = document.getElementById("start");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { item: form.item.value, flaky: form.flaky.checked };
    const started = await fetch("api/checkout", { method: "POST", body: JSON.stringify(body) }).then((r) => r.json());
    watch(started.runId);
  });
  async function watch(runId) {
    for (;;) {
      const run = await fetch("api/runs/" + encodeURIComponent(runId)).then((r) => r.json());
      document.getElementById("status").textContent = "Run " + run.status + (run.status === "completed" ? ": " + JSON.stringify(run.result) : run.error ? ": " + run.error : "");
      document.getElementById("status").className = run.status;
      document.getElementById("events").replaceChildren(...run.events.map((e) => {
        const item = document.createElement("li");
        item.textContent = e.type + (e.payload.step ? " — " + e.payload.step : "") + (e.payload.attempt ? " (attempt " + e.payload.attempt + ")" : "") + (e.payload.reason ? ": " + e.payload.reason : "");
        return item;
      }));
      if (run.status !== "running") return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
</script>
</html>`;

const router = Router();

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

router.get("/", async (request) => {
  const notice = request.query.auth_error === "cancelled" ? "Sign-in cancelled." : "";
  return new Response(page(await auth.user(request), notice), {
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "private, no-store" },
  });
});

router.all("/api/private/*", auth.require());
router.get("/api/private/me", async (request) => Response.json(await auth.user(request)));

router.post("/api/checkout", async (request) => {
  const body = (await request.json().catch(() => ({}))) as { item?: unknown; flaky?: unknown };
  const run = await workflow.start("checkout", { item: body.item, flaky: body.flaky === true });
  return Response.json({ runId: run.id, created: run.created }, { status: 201 });
});

router.get("/api/runs/:runId", async ({ params }) => {
  const run = await workflow.get(params.runId!);
  return run
    ? Response.json(run)
    : Response.json({ error: { code: "not_found", message: "No such run." } }, { status: 404 });
});

router.post("/api/email", async (request) => {
  const body = (await request.json().catch(() => ({}))) as { to?: unknown; subject?: unknown };
  try {
    const { id } = await email.send({
      to: String(body.to ?? ""),
      subject: String(body.subject ?? ""),
      html: "<p>Sent from the platform demo.</p>",
    });
    return Response.json({ id });
  } catch (error) {
    if (!(error instanceof PlatformError)) throw error;
    const status = error.code === "rate_limited" ? 429 : error.code === "invalid_input" ? 400 : 502;
    return Response.json({ error: { code: error.code, message: error.message } }, { status });
  }
});

router.get("/api/runs", async ({ query }) =>
  Response.json(await workflow.list({ name: "checkout", limit: Number(query.limit ?? 20) })),
);

export default router;
