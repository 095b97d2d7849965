export default { fetch: () => new Response("harness") };
