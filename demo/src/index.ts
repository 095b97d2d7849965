import { Router } from "itty-router";

const router = Router();

router.get("/", () =>
  new Response("<!doctype html><title>demo</title><h1>Platform demo</h1>", {
    headers: { "content-type": "text/html; charset=utf-8" },
  }),
);

export default router;
